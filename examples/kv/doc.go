// Package kv is the key-value store: a hash table in one region
// of a NAAM node, served by handlers written in the handler language
// (kv.naam, embedded) and reached either with one active message per
// operation (Client) or, as an RDMA client would, with one-sided READs
// (RDMAClient: the probe window, then the value: two round trips).
//
// The table (README.md has the picture):
//
//	region kv: Table rw, RegionSize(cfg) bytes, bound at install to the
//	           registered region Config.Region (Config.InstallOptions)
//	Table  = buckets [Bucket; Buckets] then slots [Slot; Buckets]
//	Bucket = version u64 @0, key [u8; 16] @8, vlen u32 @24, state u32 @28 (32 bytes)
//	Slot   = version u64 @0, data [u8; ValueSize] @8 (8 + ValueSize bytes)
//
// Open addressing with linear probing: a key lives in one of the Probes
// buckets from its home bucket (h ^ h>>32) % Buckets, where h = hash(key)
// is the language's hash helper (FNV-1a 64 over the 16 key bytes), computed
// the same way on the host (Hash, Config.Home). The fold matters: FNV-1a's
// low bits alone crowd keys like user000000000042 into 6% fewer home
// buckets than a uniform hash, and a 100,000-key load of 2^18 buckets
// overflowed an 8-bucket probe window. The value of bucket i is slot i. A bucket's
// version is a sequence lock: even when stable, odd while a writer holds
// it, +2 per write; CAS on the version is the compare-and-swap operation.
//
// What it owns: the program source and its parameters (Config, Source,
// Constants, InstallOptions), the layout (the Bucket*, Slot* constants,
// Config.RegionSize), host-side access to a table's bytes (Table: load,
// look up, delete, with the same locking as the handlers), the request
// and reply encoders of each handler, and the two clients. The node side,
// compiling kv.naam and finding an installed program's handler ids, is
// examples/kv/kvnode's, so that a client links neither the compiler nor
// the NIC model (kvclient). What it must never do: reach into the
// runtime beyond call.Caller and call.Reader, so that the same client
// runs in process and over the network.
//
// Limits (the language's, documented in README.md): keys are exactly 16
// bytes; a value is at most ValueSize (≤ 256) bytes and every GET reply and
// PUT request carries ValueSize bytes, whatever the value's length (the
// language has no variable-length byte ranges); a key is found only within
// Probes buckets of its home (PUT fails with CodeFull past that); two
// concurrent PUTs of the same absent key may both insert it.
package kv
