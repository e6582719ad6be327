// Package btree is a B+tree in one region of a NAAM node, in the manner
// of Cell (Mitchell et al., "Balancing CPU and Network in the Cell
// Distributed B-Tree Store", USENIX ATC'16): a B-link tree of 8-byte keys
// and values whose lookups run on the server in one active message
// (Client: the lookup, scan and update handlers of btree.naam, embedded)
// or at the client, with one READ per level and the upper levels cached:
// the lookup handler itself run at the caller (host.AtClient, with
// Tree.KeepUpperLevels kept there by host.Peer.KeepAtClient), or a descent in
// Go (RDMAClient).
//
// The tree (btree.naam has the protocol):
//
//	region btree: Tree rw, Config.RegionSize() bytes, bound at install to
//	              the registered region Config.Region (Config.InstallOptions)
//	Tree   = header (used u32 @0, height u32 @4, keys u64 @8; 64 bytes), nodes [Node; Nodes]
//	Node   = version u64 @0, level u32 @8, count u32 @12, next u32 @16, flags u32 @20,
//	         high u64 @24, keys [u64; Fanout] @32, vals [u64; Fanout], version_end u64
//
// Node 0 is the root. A leaf's vals are values, an inner node's the
// indices of its children; every node links to its right sibling and
// holds only keys below its high fence, so a reader that meets a node a
// split has just halved moves right (a B-link tree). Writers hold a node
// by its version (a sequence lock, taken with a compare-and-swap);
// handlers check the version around their reads, and that version_end
// equals it (a handler run at the client reads a copy), one-sided readers
// that the version and version_end they READ are even and equal.
//
// What it owns: the program source and its parameters (Config, Compile,
// InstallOptions), the layout (the Node*, Header* constants and Config's
// offsets), host-side access to a tree's bytes (Tree: the bulk loader,
// inserts with splits at every level, lookups, a full structural Check),
// the handlers' request and reply encoders, and the two clients. What it
// must never do: reach into the runtime beyond call.Caller and
// call.Reader, so that the same client runs in process and over the
// network.
//
// Limits: inserts are the host's (Tree.Insert, one writer at a time);
// the handlers look up, scan and replace values of keys that are there,
// and nothing deletes. A scan returns at most Config.Scan pairs a
// message. The one-sided update leaves its leaf locked if the client dies
// part way. Tree.UpperLevels is the levels as BulkLoad laid them: inner
// nodes that inserts allocate later are not among them.
package btree
