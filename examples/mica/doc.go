// Package mica is a MICA-style key-value cache (Lim et al., "MICA: A
// Holistic Approach to Fast In-Memory Key-Value Storage", NSDI'14) in one
// region of a NAAM node: a lossy bucket index over a circular,
// append-only log, served by handlers written in the handler language
// (mica.naam, embedded) and reached with one active message per operation
// (Client) or with one-sided verbs, as an RDMA client would (RDMAClient:
// READ the bucket, READ the entry).
//
// The store (mica.naam has the algorithm):
//
//	region mica: Store rw, Config.RegionSize() bytes, bound at install to
//	             the registered region Config.Region (Config.InstallOptions)
//	Store  = tail u64 @0, reserved to 64, buckets [Bucket; Buckets], log [Entry; Entries]
//	Bucket = version u64 @0, slots [u64; Ways] @8 (slot: tag << 48 | stamp)
//	Entry  = stamp u64 @0, key [u8; 16] @8, vlen u32 @24, flags u32 @28,
//	         value [u8; ValueSize] @32, stamp u64 (the same, written first)
//
// PUT appends (a fetch-and-add on the tail gives it sequence number s,
// its entry is s % Entries, its stamp s + 1) and then, holding its
// bucket's writers' lock (a compare-and-swap on the version), points a
// slot at the entry: the key's own slot, a free one, or the oldest, whose
// key is displaced. The log's wrap evicts: an entry is live while fewer
// than Entries appends followed it. GET takes no lock and checks the
// stamps at both ends of the entry around its copy, so it never returns
// an overwritten value nor another key's; it may miss a key that was
// evicted or displaced, as a cache may.
//
// What it owns: the program source and its parameters (Config, Compile,
// InstallOptions), the layout (the Bucket*, Entry* constants and Config's
// offsets), host-side access to a store's bytes (Store: the same
// algorithm with the same atomics, for loading and checks), the handlers'
// request and reply encoders, and the two clients. What it must never
// do: reach into the runtime beyond call.Caller and call.Reader, so that
// the same client runs in process and over the network.
//
// Limits: keys are 16 bytes (kv.Key; record n of a benchmark is
// kv.KeyOf(n)); a value is at most ValueSize bytes and every GET reply
// and PUT request carries ValueSize bytes (the language has no
// variable-length byte ranges); entries are fixed-size slots of the log,
// not MICA's variable-length records; stamps are 48 bits, so a store
// takes 2^48 − 1 PUTs; the one-sided PUT leaves its bucket locked if the
// client dies part way.
package mica
