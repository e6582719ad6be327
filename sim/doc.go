// Package sim is a deterministic discrete-event simulation of many NAAM
// nodes running the real verified handlers: each node has the NIC
// model's NIC and host cores as first-come first-served servers on one
// virtual clock, its own regions, the installed program (compiled,
// verified and loaded once, shared by every node), and the node's
// placement policy — the same code as nicrt's: nicrt.CostModel for
// service times, nicrt.PlaceFor for the policies' choices, and
// nicrt.SteerCosts and nicrt.SteerState (steer.Chooser and steer.EWMA)
// for PolicySteer. Handlers run in the real VM
// (vm.Machine, the interpreter), so results and instruction counts are
// the bytecode's own; time comes only from the cost model and the
// network model (per-link latency distribution, port bandwidth, loss,
// duplication, partitions), with the callers' retransmission schedule and
// the nodes' exactly-once windows. Callers may run client-eligible
// handlers themselves, in the caller library's clientrun.Runner over
// one-sided verbs the nodes answer.
//
// Run takes a Scenario (flags or a JSON file: workload, cluster, network,
// events such as failures, restarts, partitions and host congestion) and
// returns a Result. One goroutine pops one event heap ordered by
// (virtual time, sequence number); every random draw comes from a PCG
// stream seeded by Scenario.Seed; nothing reads the wall clock or
// iterates a map into a result. So the same scenario gives the same
// Result, and its JSON byte for byte.
//
// It sits above nicrt, clientrun and vm (and the compiler, for its own
// chase program) and below cmd/naam (naam sim). It never opens a socket or
// starts a goroutine. spec/sim.md is the contract: the event model, what
// is modelled and what is not, and the measured figures.
package sim
