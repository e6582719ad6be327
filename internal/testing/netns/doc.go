// Package netns gives tests two network namespaces joined by a veth
// pair, addressed in 198.18.0.0/15 (RFC 2544's benchmarking range), and
// runs code inside either. It is for tests and benchmarks only: it needs
// root and the ip tool, and New skips the test with one line without
// them. Everything it creates is removed when the test ends.
package netns
