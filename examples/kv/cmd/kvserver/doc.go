// Command kvserver serves an examples/kv table over UDP: one NAAM node
// (an in-process NIC model behind server.Serve) with the kv program
// installed, its table registered as a region and preloaded with records
// KeyOf(0 … records-1). It writes what clients need to -info and serves
// until interrupted.
//
//	kvserver -addr 127.0.0.1:7400 -records 100000 -value-size 64 -info kv.json
//	kvclient -info kv.json get user000000000042
//
// Both ends need the tenant's secret (-secret, hex, at least 32 bytes).
// The default is a fixed demo secret: fine on loopback, not elsewhere.
package main
