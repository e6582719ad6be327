package mica

import (
	"encoding/binary"
	"fmt"
)

// The request and reply layouts of the handlers (spec/language.md,
// Request and reply), for Config c with V = c.ValueSize:
//
//	get    request key @0..16 (16 bytes)
//	       reply   seq u64 @0, vlen u32 @8, value @12..12+V (12+V rounded up to 8)
//	put    request key @0..16, vlen u32 @16, value @20..20+V (20+V)
//	       reply   seq u64 (8)
//	delete request key @0..16 (16); reply seq u64 (8)
//
// The tests check these against the compiled object's layouts.

// GetReplySize and PutRequestSize are the layouts' sizes that depend on c.
func (c Config) GetReplySize() int   { return (12 + int(c.withDefaults().ValueSize) + 7) / 8 * 8 }
func (c Config) PutRequestSize() int { return 20 + int(c.withDefaults().ValueSize) }

// KeyRequestSize is the request of get and delete; SeqReplySize the reply
// of put and delete.
const (
	KeyRequestSize = KeySize
	SeqReplySize   = 8
)

// AppendKey appends a get or delete request for key to dst.
func AppendKey(dst []byte, key Key) []byte { return append(dst, key[:]...) }

// AppendPut appends a put request. A value longer than ValueSize is an
// error here (the handler would fail with CodeTooLong).
func (c Config) AppendPut(dst []byte, key Key, value []byte) ([]byte, error) {
	c = c.withDefaults()
	if len(value) > int(c.ValueSize) {
		return dst, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(value), c.ValueSize)
	}
	dst = append(dst, key[:]...)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	dst = append(dst, value...)
	return append(dst, make([]byte, int(c.ValueSize)-len(value))...), nil
}

// DecodeGet decodes a get reply: the entry's sequence number and the
// value (aliasing reply).
func (c Config) DecodeGet(reply []byte) (seq uint64, value []byte, err error) {
	c = c.withDefaults()
	if len(reply) != c.GetReplySize() {
		return 0, nil, fmt.Errorf("mica: get reply of %d bytes, want %d", len(reply), c.GetReplySize())
	}
	vlen := binary.LittleEndian.Uint32(reply[8:])
	if vlen > c.ValueSize {
		return 0, nil, fmt.Errorf("mica: get reply says %d value bytes, at most %d", vlen, c.ValueSize)
	}
	return binary.LittleEndian.Uint64(reply), reply[12 : 12+vlen], nil
}

// DecodeSeq decodes a put or delete reply.
func DecodeSeq(reply []byte) (uint64, error) {
	if len(reply) != SeqReplySize {
		return 0, fmt.Errorf("mica: reply of %d bytes, want %d", len(reply), SeqReplySize)
	}
	return binary.LittleEndian.Uint64(reply), nil
}
