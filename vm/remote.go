package vm

import (
	"errors"
	"fmt"
	"unsafe"
)

// RemoteMemory is a region whose bytes live elsewhere, in another node's
// memory reached with one-sided verbs, for running a handler away from
// its data (spec/vm.md, Remote regions). The machine calls it from the
// run, synchronously: a load calls ReadAt, which answers from the bytes
// it holds or fetches the rest; an 8-byte atomic add or fetch-add calls
// FetchAdd, an 8-byte cmpxchg CompareAndSwap, each of which is the verb
// itself, so the value the handler sees is what the owner of the memory
// returned. Offsets and lengths are inside [0, Len()) and atomics 8-byte
// aligned: the machine checks that first. An error ends the run with an
// ErrRemote fault that wraps it.
type RemoteMemory interface {
	// Len is the region's size in bytes, at most MaxSegmentSize.
	Len() int
	// ReadAt fills p with the bytes at off.
	ReadAt(p []byte, off uint32) error
	// FetchAdd adds delta to the word at off and returns its old value.
	FetchAdd(off uint32, delta uint64) (old uint64, err error)
	// CompareAndSwap stores new in the word at off if it holds old, and
	// returns the value it held.
	CompareAndSwap(off uint32, old, new uint64) (prev uint64, err error)
}

// maxRemoteHelperBytes bounds a helper's memory argument in a remote
// region: the machine copies those bytes out for the helper.
const maxRemoteHelperBytes = 1 << 20

// errRemoteWrite is why a store cannot reach a remote region.
var errRemoteWrite = errors.New("a remote region is changed only by 8-byte atomic add and cmpxchg (FETCH-ADD and CAS)")

// remoteSeg is a segment mapped with MapRemote.
type remoteSeg struct {
	mem      RemoteMemory
	size     uint64
	writable bool
}

// MapRemote maps mem as region segment seg (only regions can be remote)
// and returns its base address. Remote segments run only in the
// interpreter and only checked: an unchecked run, or an engine other than
// the interpreter, refuses to start while one is mapped. Any slice or
// memory mapped at seg before is unmapped.
func (m *Machine) MapRemote(seg Segment, mem RemoteMemory, writable bool) (uint64, error) {
	if seg < SegRegion0 || seg >= numSegments {
		return 0, fmt.Errorf("vm: segment %d (%s) cannot be remote: only regions can", uint32(seg), seg)
	}
	n := mem.Len()
	if n < 0 || uint64(n) > MaxSegmentSize {
		return 0, fmt.Errorf("vm: a remote memory of %d bytes does not fit segment %s (at most %d)", n, seg, uint64(MaxSegmentSize))
	}
	m.Unmap(seg)
	if m.remote == nil {
		m.remote = new([numSegments]remoteSeg)
	}
	m.remote[seg] = remoteSeg{mem: mem, size: uint64(n), writable: writable}
	m.nremote++
	return Addr(seg, 0), nil
}

// unmapRemote forgets a remote mapping of seg, if there is one.
func (m *Machine) unmapRemote(seg Segment) {
	if m.nremote > 0 && m.remote[seg].mem != nil {
		m.remote[seg] = remoteSeg{}
		m.nremote--
	}
}

// remoteAt is the remote segment addr is in, or nil.
func (m *Machine) remoteAt(addr uint64) *remoteSeg {
	if m.nremote == 0 || addr>>32 >= numSegments {
		return nil
	}
	if rs := &m.remote[addr>>32]; rs.mem != nil {
		return rs
	}
	return nil
}

// remoteLoad is where a load goes when hostPtr refused it: a pointer to
// the size bytes at addr read from a remote segment, or nil (the access
// faults; an error of the memory is left in m.remoteErr for accessFault).
func (m *Machine) remoteLoad(addr, size uint64) unsafe.Pointer {
	rs := m.remoteAt(addr)
	if rs == nil {
		return nil
	}
	off := addr & 0xffffffff
	if off+size > rs.size {
		return nil
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(&m.remoteWord)), size)
	if err := rs.mem.ReadAt(buf, uint32(off)); err != nil {
		m.remoteErr = err
		return nil
	}
	return unsafe.Pointer(&m.remoteWord)
}

// remoteAtomic runs an 8-byte atomic on a remote segment: add and
// fetch-add as FetchAdd, cmpxchg as CompareAndSwap; the others fault.
// m.pc is the instruction's slot.
func (m *Machine) remoteAtomic(rs *remoteSeg, op opcode, addr uint64, r *[16]uint64, src uint8) *Fault {
	off := addr & 0xffffffff
	switch {
	case off+8 > rs.size:
		return m.memFault(FaultOutOfBounds, m.pc, addr, 8, "atomic")
	case !rs.writable:
		return m.memFault(FaultReadOnly, m.pc, addr, 8, "atomic")
	case addr&7 != 0:
		return m.memFault(FaultMisaligned, m.pc, addr, 8, "atomic")
	}
	var err error
	switch op {
	case opAtomAddDW:
		_, err = rs.mem.FetchAdd(uint32(off), r[src])
	case opAtomFetchAddDW:
		r[src], err = rs.mem.FetchAdd(uint32(off), r[src])
	case opAtomCmpXchgDW:
		r[0], err = rs.mem.CompareAndSwap(uint32(off), r[0], r[src])
	default:
		err = errRemoteWrite
	}
	if err != nil {
		f := m.memFault(FaultRemote, m.pc, addr, 8, "atomic")
		f.Err = err
		return f
	}
	return nil
}

// remoteBytes is Machine.Bytes for a remote segment: a copy of the bytes
// for a helper to read. ok is false when addr is not in a remote segment
// or the bytes are not inside it.
func (m *Machine) remoteBytes(addr, n uint64, write bool) (b []byte, err error, ok bool) {
	rs := m.remoteAt(addr)
	off := addr & 0xffffffff
	if rs == nil || n > rs.size || off > rs.size-n {
		return nil, nil, false
	}
	fault := func(cause error) *Fault {
		f := m.memFault(FaultRemote, m.pc, addr, int(n), "helper access")
		f.Err = cause
		return f
	}
	switch {
	case write:
		return nil, fault(errRemoteWrite), true
	case n > maxRemoteHelperBytes:
		return nil, fault(fmt.Errorf("a helper may read at most %d bytes of a remote region at once", maxRemoteHelperBytes)), true
	}
	b = make([]byte, n)
	if err := rs.mem.ReadAt(b, uint32(off)); err != nil {
		return nil, fault(err), true
	}
	return b, nil, true
}
