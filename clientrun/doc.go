// Package clientrun runs a handler at its caller instead of on the node
// that owns its data: in a VM of the caller's, over region bytes fetched
// with one-sided READs, with the handler's atomics done as remote
// FETCH-ADD and CAS (spec/client.md). It is the RDMA-style way of serving
// a request, with the same handler that the node would run.
//
// A Runner is made from an object and what the verifier of the node that
// serves it proved of each handler (Proof: client eligibility,
// verifier.EntryReport.ClientEligible, and the instruction bound), as the
// node describes the installed program; it runs the handlers proved
// client-eligible and refuses the others. It does not verify the object
// itself, so that a caller links no verifier: its machine is checked, so
// a lying object or proof makes a run fault and never reaches memory
// outside it. A run:
//
//  1. runs the handler's access function, if it has one (a reads clause,
//     spec/language.md), on the request: the ranges the handler declares
//     it reads;
//  2. merges overlapping and adjacent ranges and fetches them all in one
//     round trip (one Fetcher.Read call);
//  3. runs the handler in a checked vm.Machine whose regions are remote
//     (vm.RemoteMemory): a load of bytes not fetched yet fetches them, in
//     a round trip of its own (Config.FetchSize bytes from the first one
//     needed), counted as an extra read; an 8-byte atomic add or fetch-add
//     is a FETCH-ADD, a cmpxchg a CAS, and the copy of the word takes what
//     the node returned;
//  4. returns the handler's result and what it cost (Stats).
//
// A Runner may keep bytes from one run to the next (Config.Keep): the
// ranges named there that runs which replied fetched, which later runs
// read without a round trip, for data whose readers tolerate an old copy
// (a B-link tree's inner nodes).
//
// The package reaches the node only through a Fetcher, so it depends on
// no network package; clientruntest has one over byte slices, for tests.
// It never writes region memory but through the Fetcher's atomics.
//
// Where it sits: bytecode and vm below it; a caller's library (host/peer:
// its Fetcher over the network's verbs, its steering between client and
// node) above. clientruntest verifies objects for tests (Proofs).
package clientrun
