package kv

import (
	"encoding/binary"
	"fmt"
)

// The request and reply layouts of the handlers (spec/language.md,
// Request and reply), for Config c with V = c.ValueSize:
//
//	get    request key @0..16 (16 bytes)
//	       reply   version u64 @0, vlen u32 @8, value @12..12+V (12+V rounded up to 8)
//	put    request key @0..16, vlen u32 @16, value @20..20+V (20+V)
//	       reply   version u64 (8)
//	delete request key @0..16 (16); reply version u64 (8)
//	cas    request key @0..16, expected u64 @16, vlen u32 @24, value @28..28+V (28+V rounded up to 8)
//	       reply   version u64 @0, swapped bool @8 (16)
//
// The tests check these against the compiled object's layouts.

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// GetRequestSize … CASReplySize are the layouts' sizes.
func (c Config) GetRequestSize() int { return KeySize }
func (c Config) GetReplySize() int   { return roundUp(12+int(c.withDefaults().ValueSize), 8) }
func (c Config) PutRequestSize() int { return 20 + int(c.withDefaults().ValueSize) }
func (c Config) CASRequestSize() int { return roundUp(28+int(c.withDefaults().ValueSize), 8) }

// VersionReplySize is the reply of put and delete; CASReplySize of cas.
const (
	VersionReplySize = 8
	CASReplySize     = 16
)

// AppendGet appends a get (or delete) request for key to dst.
func AppendGet(dst []byte, key Key) []byte { return append(dst, key[:]...) }

// AppendDelete appends a delete request: the same bytes as a get.
func AppendDelete(dst []byte, key Key) []byte { return append(dst, key[:]...) }

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

// AppendCAS appends a cas request: replace key's value with value if its
// version is expected.
func (c Config) AppendCAS(dst []byte, key Key, expected uint64, value []byte) ([]byte, error) {
	c = c.withDefaults()
	if len(value) > int(c.ValueSize) {
		return dst, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(value), c.ValueSize)
	}
	start := len(dst)
	dst = append(dst, key[:]...)
	dst = binary.LittleEndian.AppendUint64(dst, expected)
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(value)))
	dst = append(dst, value...)
	return append(dst, make([]byte, c.CASRequestSize()-(len(dst)-start))...), nil
}

// DecodeGet decodes a get reply: the version and the value (aliasing
// reply).
func (c Config) DecodeGet(reply []byte) (version uint64, value []byte, err error) {
	c = c.withDefaults()
	if len(reply) != c.GetReplySize() {
		return 0, nil, fmt.Errorf("kv: get reply of %d bytes, want %d", len(reply), c.GetReplySize())
	}
	vlen := binary.LittleEndian.Uint32(reply[8:])
	if vlen > c.ValueSize {
		return 0, nil, fmt.Errorf("kv: get reply says %d value bytes, at most %d", vlen, c.ValueSize)
	}
	return binary.LittleEndian.Uint64(reply), reply[12 : 12+vlen], nil
}

// DecodeVersion decodes a put or delete reply.
func DecodeVersion(reply []byte) (uint64, error) {
	if len(reply) != VersionReplySize {
		return 0, fmt.Errorf("kv: version reply of %d bytes, want %d", len(reply), VersionReplySize)
	}
	return binary.LittleEndian.Uint64(reply), nil
}

// DecodeCAS decodes a cas reply.
func DecodeCAS(reply []byte) (version uint64, swapped bool, err error) {
	if len(reply) != CASReplySize {
		return 0, false, fmt.Errorf("kv: cas reply of %d bytes, want %d", len(reply), CASReplySize)
	}
	return binary.LittleEndian.Uint64(reply), reply[8] != 0, nil
}
