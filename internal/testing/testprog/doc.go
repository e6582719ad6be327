// Package testprog holds named eBPF test programs shared by every engine
// that runs bytecode: the VM in checked and unchecked mode, the JIT tier,
// and the Linux kernel (through internal/bench/kernel). One definition, many
// engines, as wazero shares its spec tests.
//
// The benchmark and random programs are bodies in raw mode, the bpf_conformance convention: r1
// points to MemSize bytes of read-write memory and r2 holds MemSize. Bodies
// prove every memory access in bounds without trusting r2 (indices are
// masked with a power of two minus one against a fixed memory size), so the
// kernel verifier accepts them as they are; loops are bounded by constants.
//
// Benchmarks returns the fixed benchmark programs, whose expected r0 is
// computed by plain Go code in this package, never written down by hand.
// Random generates loop-free programs over the whole instruction set for
// differential testing; their results are compared across engines, not
// against a known answer.
//
// KVGetHand and KVGetHandObject are the exception: the KV GET handler of
// lang/testdata/ok/kv_get.naam written by hand under the handler ABI
// (testdata/kvget.s), the yardstick the compiler's output is measured
// against (compiler.TestKVGetSize).
//
// The package builds instructions; it never runs them.
package testprog
