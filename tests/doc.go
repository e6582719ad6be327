// Package tests holds NAAM's end-to-end tests: the package DAG, the
// differential test of the VM against the Linux kernel, benchmarks that run
// the same programs in the VM and in the kernel's JIT, and (later)
// multi-process clusters and fault injection. It has no non-test code.
package tests
