// Package nicrt is the modelled SmartNIC of one NAAM node: programs,
// regions, cores, placement, verbs and the cost model, completing each
// message through the sink it is given.
//
// It is the part of the runtime that takes an active message, finds the
// verified handler it names, runs it on a NIC core (or a host core)
// against memory the host registered, and hands the outcome to the
// message's sink. It knows nothing of sockets: the network side is
// nicrt/server, a caller nicrt/caller.
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
//     bound exceeds the NIC budget, when the verifier's report of its
//     entry says it may call a host-only helper, or when the NIC queue is
//     past the spill threshold (iPipe-style);
//   - the cores' rx queues (queue.go): one FIFO each, or with Config.Fair
//     a queue per tenant served by deficit round robin priced by the
//     handlers' proven instruction bounds, with per-tenant quotas;
//   - pacing (pace.go): with Config.Paced every core takes its runs'
//     modelled service time in wall time, by a virtual clock that sleeps,
//     never spins; a modelled application load on the host cores
//     (Config.HostLoad); the placement policy (auto, nic, host, steer) and
//     the load signals a steering policy reads (NIC.Load);
//   - steering (steering.go): under PolicySteer each message of a handler
//     either class may run goes to the NIC or host core expected to finish
//     it first, by a steer.Chooser per handler with hysteresis;
//   - the built-in verbs READ, WRITE, CAS and FETCH-ADD, which replace RDMA
//     one-sided operations (their requests are nicrt/wire's);
//   - counters: every placement decision (per handler and per core), every
//     rejection, and a cost model of the DPU (NIC cycles, DMA bytes and
//     latency, nicmem hits), snapshotted by Stats.
//
// The way of a message, read forward: Submit (submit.go: lookup, the
// tenant check, placement, a core's rx queue) → the core (core.go: the VM,
// the accounting) → Sink.Done, on the core that ran it. Whoever submits a
// message passes its sink, as net/http passes a handler its
// ResponseWriter; the model holds no pointer to whoever feeds it. A sink
// that is an Outbox carries what the message's handler sends and forwards
// (Config.Outbox, when set, takes every message's); a sink that is a
// Holder may hold its reply back until the core that ran it has nothing
// queued, and the core then tells the sink's Flusher, so that the network
// side writes a burst's replies in one system call. SubmitInline runs a
// message on the submitter's goroutine when its core is idle.
//
// The statuses, the verb ids and RegionRef, RegionOptions, InstallOptions
// and Counter are the wire's (nicrt/wire), aliased here.
//
// The package must never run unverified bytecode on a NIC core (those run
// the VM unchecked), never let one tenant reach another tenant's handlers
// or regions, and never let a Go panic escape a run. spec/nic.md is the
// contract, with the model's defaults and their sources.
package nicrt
