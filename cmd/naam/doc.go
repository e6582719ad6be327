// Command naam is NAAM's runtime CLI. Today it has one command, demo, which
// shows what the foundation can do: the benchmark programs verified, then
// run in the interpreter (checked and fast) and, where the machine allows loading BPF,
// in the Linux kernel's JIT, side by side. The node, call, stats and bench
// commands come with the NIC runtime and the host library.
package main
