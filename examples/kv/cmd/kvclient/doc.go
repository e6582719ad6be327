// Command kvclient talks to a kvserver: single operations by active
// message or by one-sided verbs, and a YCSB run of both modes.
//
//	kvclient -info kv.json get KEY          one message: hash, probe, copy on the node
//	kvclient -info kv.json put KEY VALUE
//	kvclient -info kv.json delete KEY
//	kvclient -info kv.json cas KEY VERSION VALUE
//	kvclient -info kv.json rdma-get KEY     READ the probe window, then READ the value
//	kvclient -info kv.json rdma-put KEY VALUE
//	kvclient -info kv.json ycsb [-mix B] [-dist zipfian] [-records N] [-ops N] [-duration D] [-clients N] [-outstanding K] [-modes am,rdma,memcached] [-cdf F.png] [-throughput F.png]
//
// KEY is a string of at most 16 bytes, or #N for record N (KeyOf(N)).
// Each operation prints its result and the round trips it took; ycsb
// prints the benchmark JSON (internal/bench/workload.Result).
package main
