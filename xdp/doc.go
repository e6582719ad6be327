// Package xdp is the XDP tier of a node: verified handlers answered in
// the kernel's XDP hook, at the network device, before any socket buffer
// exists (spec/xdp.md is the contract).
//
// A Tier owns a dispatcher program attached to one interface and one
// program per served handler or built-in verb, reached by tail call. The
// dispatcher parses Ethernet, IPv4 and UDP and the wire header, opens the
// packet with the tenant's SipHash-2-4-128 key (nicrt/wire's second MAC
// algorithm; HMAC-SHA256 tenants pass up), claims the request id in the
// peer table it shares with the host process, and tail-calls the
// handler's program, which runs the handler's own verified bytecode,
// translated for the kernel, seals the reply, caches it and sends it back
// with XDP_TX. Everything else goes up to the node's socket with
// XDP_PASS, counted by reason.
//
// What it owns:
//   - the translation of a verified handler (bytecode.Object and the
//     project verifier's Report) into kernel code: the context as a block
//     of real pointers on the stack, regions as BPF_PSEUDO_MAP_VALUE loads
//     of array maps, helpers as kernel helpers or subprograms
//     (translate.go), loaded through the kernel's verifier, whose
//     refusal and log it keeps (KernelRefusal, NotServed);
//   - the programs around it: the dispatcher (dispatch.go), the handler
//     and verb programs (handlerprog.go, verbs.go), the reply path with
//     the checksums (reply.go) and SipHash in BPF (siphash.go);
//   - the memory shared with the host, mapped into the process: Region
//     (a BPF_F_MMAPABLE array map whose value is a region's bytes) and
//     PeerTable (the anti-replay windows and reply caches, with the claim
//     protocol both paths follow).
//
// What it must never do: answer a packet the user-space node would
// refuse, run a request id twice, or act on a field the MAC did not
// cover. It knows nothing of nicrt's NIC model, sockets or placement: the
// node decides which handlers go to the NIC and hands them over
// (HandlerSpec); what the tier cannot serve it says so (NotServed), and
// the node keeps serving it.
//
// Generation is deterministic and pure (instructions naming maps by
// name); loading binds the names to the tier's maps. Loading needs Linux
// and what loading BPF needs (root, or CAP_BPF, CAP_PERFMON and
// CAP_NET_ADMIN); Probe says in one line why not.
package xdp
