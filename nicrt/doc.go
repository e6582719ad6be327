// Package nicrt is the modelled SmartNIC of one NAAM node: the part of the
// runtime that receives an active message, finds the verified handler it
// names, runs it on a NIC core (or a host core) against memory the host
// registered, and hands back the outcome.
//
// It owns, for one node:
//
//   - the program table: Install verifies every object with
//     verifier.Verify (it never trusts the sender), links the object's
//     regions by name to regions the tenant registered, loads the bytecode
//     once (vm.Load) and assigns node-wide handler ids; Uninstall drains
//     in-flight work first. Dispatch is one lock-free table lookup, so its
//     cost does not depend on how many programs are installed;
//   - regions: host memory registered per tenant, each with a random
//     64-bit key, placed in host memory or in NIC memory (nicmem);
//   - cores: N NIC cores and M host cores, goroutines with their own
//     vm.Machine and a bounded rx queue each; flow steering picks the NIC
//     core; placement sends a handler to a host core when its verified
//     bound exceeds the NIC budget, when it calls a host-only helper, or
//     when the NIC queue is past the spill threshold (iPipe-style);
//   - the built-in verbs READ, WRITE, CAS and FETCH-ADD, which replace RDMA
//     one-sided operations;
//   - counters: every placement decision (per handler and per core), every
//     rejection, and a cost model of the DPU (NIC cycles, DMA bytes and
//     latency, nicmem hits), snapshotted by Stats.
//
// Submit is the entry point of the NIC model: a Message in, a Reply out
// through a callback. Messages that handlers send or forward go to the
// pluggable Outbox.
//
// The network side joins it to nicrt/wire and nicrt/transport: Serve reads
// requests from rx queues (transport.Conn), opens them with the tenant's
// key, runs each at most once (an anti-replay window and a reply cache per
// peer and tenant), submits it and sends the sealed reply with the credits
// it grants; Client calls a responder, with request ids, retransmission
// with backoff, a bounded number of tries and the responder's credits.
// When the NIC has no Outbox of its own, Serve becomes it: a handler's
// send and forward leave as program-relative requests (the program's
// digest and the handler's id in the object) to the node ids of the
// server's address book (SetPeer); a forward keeps the caller's tenant,
// source and request id and is answered by the last node directly. Peer
// state is bounded (MaxPeers); an evicted window leaves its high edge
// behind so that nothing it saw runs again.
//
// The package must never run unverified bytecode on a NIC core (those run
// the VM unchecked), never let one tenant reach another tenant's handlers
// or regions, and never let a Go panic escape a run. spec/nic.md is the
// contract, with the model's defaults and their sources.
package nicrt
