// Package benchprog holds the benchmark programs that naam demo times in
// every engine and that the engines' tests and benchmarks share.
//
// The engines are the VM checked and unchecked, the JIT tier and the Linux
// kernel through internal/bench/kernel; the programs an ALU loop, FNV-1a
// over 1 KiB, binary searches in 32 KiB, a 64-hop pointer chase and a
// linear search of 32 KiB. They are
// part of the benchmark harness rather than of internal/testing because a
// product command (the demo's engines table) runs them; the test-only
// programs (random programs, the hand-written KV GET handler) stay in
// internal/testing/testprog.
//
// The programs are bodies in raw mode, the bpf_conformance convention: r1
// points to MemSize bytes of read-write memory and r2 holds MemSize. Bodies
// prove every memory access in bounds without trusting r2 (indices are
// masked with a power of two minus one against a fixed memory size), so the
// kernel verifier accepts them as they are; loops are bounded by constants.
// Each program's expected r0 is computed by plain Go code in this package,
// never written down by hand.
//
// The package builds instructions; it never runs them.
package benchprog
