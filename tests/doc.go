// Package tests holds NAAM's end-to-end tests.
//
// They are the package DAG and the layering rules (what only tests may
// import, what a pure caller links),
// the package table of spec/packages.md, the differential tests of the VM
// against the Linux kernel, benchmarks that run the same programs in the
// VM and in the kernel's JIT, the verifier's soundness and conformance,
// the namespace test and the multi-process cluster. It has no non-test
// code.
package tests
