// Package memcache is the baseline of the KV benchmark: a small client of
// memcached's text protocol (get and set) over one TCP connection, with
// requests pipelined (many callers may have requests outstanding on the
// connection at once; replies come back in order), and Start, which runs a
// memcached process on a loopback port when the binary is installed.
//
// Where it sits: a leaf beside internal/bench/workload; it imports nothing of
// NAAM's. Records implements workload.Target's methods by shape.
//
// What it must never do: talk to any address the caller did not give it
// (Start listens on 127.0.0.1 only), or leave a memcached process behind:
// Server.Close kills and reaps the process it started, by its pid.
package memcache
