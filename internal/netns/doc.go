// Package netns makes two network namespaces joined by a veth pair,
// addressed in 198.18.0.0/15 (RFC 2544's benchmarking range), and runs
// code inside either: the link naam bench's XDP modes measure over, and
// (through internal/testing/netns) the tests' and benchmarks' link. It
// needs root and the ip tool (New returns ErrUnavailable and the reason
// without them); Close removes everything New created.
package netns
