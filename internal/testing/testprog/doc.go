// Package testprog holds the test-only eBPF programs that every engine
// that runs bytecode is checked with: the VM in checked and unchecked mode,
// the JIT tier and the Linux kernel (through internal/bench/kernel). One
// definition, many engines, as wazero shares its spec tests. Only _test.go
// files import it.
//
// Random generates loop-free programs over the whole instruction set for
// differential testing, bodies in raw mode (the bpf_conformance
// convention: r1 = memory, r2 = its size) like the benchmark programs of
// internal/bench/benchprog; their results are compared across engines,
// not against a known answer.
//
// KVGetHand and KVGetHandObject are the KV GET handler of
// lang/testdata/ok/kv_get.naam written by hand under the handler ABI
// (testdata/kvget.s), the yardstick the compiler's output is measured
// against (compiler.TestKVGetSize).
//
// The package builds instructions; it never runs them.
package testprog
