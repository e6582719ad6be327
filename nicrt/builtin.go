package nicrt

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"
)

// The built-in verbs replace RDMA's one-sided operations (spec/nic.md,
// Built-in verbs). A request starts with a 24-byte header naming the
// region; the operands follow:
//
//	 0  key     u64   the region's key
//	 8  region  u32   the region's id
//	12  length  u32   READ: bytes to read; WRITE: bytes that follow; CAS, FETCH-ADD: 8
//	16  offset  u64   byte offset in the region
//	24  …             WRITE: the bytes; CAS: expected u64, desired u64; FETCH-ADD: delta u64
//
// All little-endian. The reply is the bytes read (READ), nothing (WRITE),
// or the old 8-byte value (CAS, FETCH-ADD; a CAS succeeded when it equals
// the expected value).
const verbHeader = 24

// RegionRef is what a peer needs to name a region in a verb: its id and key.
type RegionRef struct {
	ID  uint32
	Key uint64
}

// Ref returns the region's reference, to hand to the peers allowed to use it.
func (r *Region) Ref() RegionRef { return RegionRef{ID: r.ID, Key: r.Key} }

func appendHeader(dst []byte, ref RegionRef, length uint32, off uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(dst, ref.Key)
	dst = binary.LittleEndian.AppendUint32(dst, ref.ID)
	dst = binary.LittleEndian.AppendUint32(dst, length)
	return binary.LittleEndian.AppendUint64(dst, off)
}

// AppendRead appends a READ request for n bytes at off.
func AppendRead(dst []byte, ref RegionRef, off uint64, n uint32) []byte {
	return appendHeader(dst, ref, n, off)
}

// AppendWrite appends a WRITE request of data at off.
func AppendWrite(dst []byte, ref RegionRef, off uint64, data []byte) []byte {
	return append(appendHeader(dst, ref, uint32(len(data)), off), data...)
}

// AppendCAS appends a CAS request: the 8 bytes at off become desired if
// they hold expected.
func AppendCAS(dst []byte, ref RegionRef, off, expected, desired uint64) []byte {
	dst = binary.LittleEndian.AppendUint64(appendHeader(dst, ref, 8, off), expected)
	return binary.LittleEndian.AppendUint64(dst, desired)
}

// AppendFetchAdd appends a FETCH-ADD request adding delta to the 8 bytes at off.
func AppendFetchAdd(dst []byte, ref RegionRef, off, delta uint64) []byte {
	return binary.LittleEndian.AppendUint64(appendHeader(dst, ref, 8, off), delta)
}

// verb runs a built-in verb. Checks, in order: the payload's shape, the
// region (exists, same tenant, key), rights, size of a READ, bounds,
// alignment of an atomic.
func (c *core) verb(t *task) (Reply, cost) {
	n := c.n
	k := n.model.insns(n.cfg.BuiltinInsns, false)
	fail := func(s Status) (Reply, cost) {
		r := rejection(s)
		r.Insns = n.cfg.BuiltinInsns
		return r, k
	}
	p := t.msg.Payload
	if len(p) < verbHeader {
		return fail(StatusBadRequest)
	}
	le := binary.LittleEndian
	key, id, length, off := le.Uint64(p), le.Uint32(p[8:]), le.Uint32(p[12:]), le.Uint64(p[16:])
	want := uint64(verbHeader) // the payload's exact length
	switch t.h.verb {
	case HandlerWrite:
		want += uint64(length)
	case HandlerCAS:
		want += 16
	case HandlerFetchAdd:
		want += 8
	}
	atomicOp := t.h.verb == HandlerCAS || t.h.verb == HandlerFetchAdd
	if uint64(len(p)) != want || atomicOp && length != 8 {
		return fail(StatusBadRequest)
	}
	reg := n.regions.get(id)
	switch {
	case reg == nil:
		return fail(StatusUnknownRegion)
	case reg.Tenant != t.msg.Tenant:
		return fail(StatusForeignRegion)
	case reg.Key != key:
		return fail(StatusWrongKey)
	case t.h.verb != HandlerRead && !reg.Writable:
		return fail(StatusReadOnly)
	case t.h.verb == HandlerRead && int64(length) > int64(n.cfg.MaxReply):
		return fail(StatusTooLarge)
	case off > reg.Size() || uint64(length) > reg.Size()-off:
		return fail(StatusOutOfBounds)
	case atomicOp && off%8 != 0:
		return fail(StatusMisaligned)
	}
	r := Reply{Insns: n.cfg.BuiltinInsns}
	mem := reg.mem[off : off+uint64(length)]
	switch t.h.verb {
	case HandlerRead:
		r.Data = c.reply[:length]
		copy(r.Data, mem)
		k.add(n.model.access(uint64(length), false, false, false, reg.NICMem))
	case HandlerWrite:
		copy(mem, p[verbHeader:])
		k.add(n.model.access(uint64(length), true, false, false, reg.NICMem))
	case HandlerCAS:
		// reg.mem is backed by uint64s and off is a multiple of 8.
		word := (*uint64)(unsafe.Pointer(&mem[0]))
		expected, desired := le.Uint64(p[24:]), le.Uint64(p[32:])
		// The old value, linearisable: a failure reports a value the word
		// held at the moment of the comparison.
		old := atomic.LoadUint64(word)
		for old == expected && !atomic.CompareAndSwapUint64(word, expected, desired) {
			old = atomic.LoadUint64(word)
		}
		r.Data = le.AppendUint64(c.reply[:0], old)
		k.add(n.model.access(8, true, true, false, reg.NICMem))
	case HandlerFetchAdd:
		word := (*uint64)(unsafe.Pointer(&mem[0]))
		delta := le.Uint64(p[24:])
		old := atomic.AddUint64(word, delta) - delta
		r.Data = le.AppendUint64(c.reply[:0], old)
		k.add(n.model.access(8, true, true, false, reg.NICMem))
	}
	return r, k
}
