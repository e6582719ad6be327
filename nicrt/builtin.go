package nicrt

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/naam-project/naam/nicrt/wire"
)

// The built-in verbs replace RDMA's one-sided operations (spec/nic.md,
// Built-in verbs); their requests are the wire's (wire.ParseVerb).

// RegionRef is what a peer needs to name a region in a verb: its id and key.
type RegionRef = wire.RegionRef

// Ref returns the region's reference, to hand to the peers allowed to use it.
func (r *Region) Ref() RegionRef { return RegionRef{ID: r.ID, Key: r.Key} }

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
	req, ok := wire.ParseVerb(t.h.verb, t.msg.Payload)
	if !ok {
		return fail(StatusBadRequest)
	}
	le := binary.LittleEndian
	key, id, length, off := req.Ref.Key, req.Ref.ID, req.Length, req.Offset
	atomicOp := t.h.verb == HandlerCAS || t.h.verb == HandlerFetchAdd
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
		copyInOrder(r.Data, mem)
		k.add(n.model.access(uint64(length), false, false, false, reg.NICMem))
	case HandlerWrite:
		copy(mem, req.Operands)
		k.add(n.model.access(uint64(length), true, false, false, reg.NICMem))
	case HandlerCAS:
		// reg.mem is backed by uint64s and off is a multiple of 8.
		word := (*uint64)(unsafe.Pointer(&mem[0]))
		expected, desired := le.Uint64(req.Operands), le.Uint64(req.Operands[8:])
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
		delta := le.Uint64(req.Operands)
		old := atomic.AddUint64(word, delta) - delta
		r.Data = le.AppendUint64(c.reply[:0], old)
		k.add(n.model.access(8, true, true, false, reg.NICMem))
	}
	return r, k
}

// copyInOrder copies src into dst (as long) reading src from its first
// byte to its last: 8-byte atomic loads on 8-byte boundaries, single
// bytes at unaligned ends. A one-sided reader's check of a record (a
// version first, its repeat last: the B+tree's version and version_end,
// MICA's stamps) holds only for a copy made in that order, and the
// built-in copy may read the end first (amd64's, past 256 bytes, loads
// the last 128 bytes before the rest), so that a writer who starts
// during the READ goes unseen.
func copyInOrder(dst, src []byte) {
	dst = dst[:len(src)]
	i := 0
	for ; i < len(src) && uintptr(unsafe.Pointer(&src[i]))%8 != 0; i++ {
		dst[i] = src[i]
	}
	for ; i+8 <= len(src); i += 8 {
		binary.NativeEndian.PutUint64(dst[i:], atomic.LoadUint64((*uint64)(unsafe.Pointer(&src[i]))))
	}
	for ; i < len(src); i++ {
		dst[i] = src[i]
	}
}
