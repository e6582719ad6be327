package btree

import (
	"encoding/binary"
	"fmt"
)

// The request and reply layouts of the handlers (spec/language.md,
// Request and reply), for Config c with S = c.Scan:
//
//	lookup request key u64 (8);                 reply value u64 (8)
//	scan   request start u64 @0, n u32 @8 (16); reply count u32 @0, end bool @4,
//	                                                 keys [u64; S] @8, vals [u64; S] @8+8S (8+16S)
//	update request key u64 @0, value u64 @8 (16); reply the old value u64 (8)
//
// The tests check these against the compiled object's layouts.

// ScanReplySize is the scan reply's size.
func (c Config) ScanReplySize() int { return 8 + 16*int(c.withDefaults().Scan) }

// Pair is a key and its value.
type Pair struct{ Key, Value uint64 }

// AppendU64 appends a lookup request (the key) to dst.
func AppendU64(dst []byte, v uint64) []byte { return binary.LittleEndian.AppendUint64(dst, v) }

// AppendScan appends a scan request.
func AppendScan(dst []byte, start uint64, n uint32) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, start)
	dst = binary.LittleEndian.AppendUint32(dst, n)
	return append(dst, 0, 0, 0, 0)
}

// AppendUpdate appends an update request.
func AppendUpdate(dst []byte, key, value uint64) []byte {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(dst, key), value)
}

// DecodeU64 decodes a lookup or update reply.
func DecodeU64(reply []byte) (uint64, error) {
	if len(reply) != 8 {
		return 0, fmt.Errorf("btree: reply of %d bytes, want 8", len(reply))
	}
	return binary.LittleEndian.Uint64(reply), nil
}

// DecodeScan decodes a scan reply: the pairs and whether the tree ended.
func (c Config) DecodeScan(reply []byte) ([]Pair, bool, error) {
	c = c.withDefaults()
	if len(reply) != c.ScanReplySize() {
		return nil, false, fmt.Errorf("btree: scan reply of %d bytes, want %d", len(reply), c.ScanReplySize())
	}
	n := binary.LittleEndian.Uint32(reply)
	if n > c.Scan {
		return nil, false, fmt.Errorf("btree: scan reply says %d pairs, at most %d", n, c.Scan)
	}
	pairs := make([]Pair, n)
	vals := 8 + 8*int(c.Scan)
	for i := range pairs {
		pairs[i] = Pair{binary.LittleEndian.Uint64(reply[8+8*i:]), binary.LittleEndian.Uint64(reply[vals+8*i:])}
	}
	return pairs, reply[4] != 0, nil
}
