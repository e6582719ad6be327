// Package workload is what `naam bench` drives a key-value service with,
// independent of the network and of the service: YCSB key generators
// (uniform, and the scrambled Zipfian of YCSB with θ = 0.99), the YCSB core
// mixes A, B and C, a bounded-memory latency histogram with percentiles and
// a CDF, a closed-loop runner of N clients × K outstanding operations
// against a Target, the result types of the benchmark's JSON, and PNG plots
// (latency CDF per mode, throughput per mode) with gonum.org/v1/plot.
//
// Where it sits: below cmd/naam, beside the services. It imports nothing of
// NAAM's; a service enters through Target (examples/kv's clients for the
// "am" and "rdma" modes, internal/bench/memcache for "memcached").
//
// What it must never do: touch the network itself, use global random state
// (every generator is seeded explicitly, so a run's operation sequence is
// reproducible), or keep per-operation samples (memory stays bounded
// whatever the run's length).
package workload
