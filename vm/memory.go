package vm

import (
	"fmt"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
)

// Segment numbers. An address is segment<<32 | offset, so pointer
// arithmetic that stays inside a segment never changes the segment. One that
// leaves it faults, except that a change by a multiple of 2^32 lands in
// another segment and is checked against that one (spec/vm.md, Memory).
type Segment uint32

const (
	SegNull    Segment = 0 // never mapped: address 0 faults
	SegStack   Segment = 1
	SegContext Segment = 2
	SegRequest Segment = 3
	SegReply   Segment = 4
	// SegRegion0 is the first region; region i is SegRegion0+i.
	SegRegion0  Segment = 8
	numSegments         = 256
)

// MaxRegions is how many regions a program may address; it is the ABI's
// bytecode.MaxRegions.
const MaxRegions = bytecode.MaxRegions

// The interpreter masks with numSegments-1 and MaxCallDepth-1 instead of
// bounds-checking: both must be powers of two (an index out of range here
// does not compile), and the regions must fill the segments above SegRegion0.
var (
	_ = [1]struct{}{}[numSegments&(numSegments-1)]
	_ = [1]struct{}{}[MaxCallDepth&(MaxCallDepth-1)]
	_ = [1]struct{}{}[numSegments-int(SegRegion0)-MaxRegions]
)

// Stack layout: MaxCallDepth frames of StackSize bytes each. Frame 0 (the
// entry) is at the top; r10 of frame k is stackBytes - k*StackSize.
const (
	StackSize    = 512
	MaxCallDepth = 8
	stackBytes   = StackSize * MaxCallDepth
	// StackBytes is the whole stack: MaxCallDepth frames of StackSize bytes.
	StackBytes = stackBytes
)

// Addr returns the address of byte off of segment seg.
func Addr(seg Segment, off uint32) uint64 { return uint64(seg)<<32 | uint64(off) }

// RegionSegment returns the segment that holds region i.
func RegionSegment(i int) Segment { return SegRegion0 + Segment(i) }

type segment struct {
	base     unsafe.Pointer
	size     uint64
	writable bool
	data     []byte  // keeps base alive and serves helpers
	mem      *Memory // the Memory data starts, if it was mapped from one
}

func (s Segment) String() string {
	switch {
	case s == SegNull:
		return "null"
	case s == SegStack:
		return "stack"
	case s == SegContext:
		return "context"
	case s == SegRequest:
		return "request"
	case s == SegReply:
		return "reply"
	case s >= SegRegion0 && s < numSegments:
		return fmt.Sprintf("region%d", s-SegRegion0)
	}
	return fmt.Sprintf("segment%d", uint32(s))
}

// MaxSegmentSize is the largest segment in bytes: offsets are 32 bits, and
// so is a segment's length (as bytecode.MaxRegionSize).
const MaxSegmentSize = 1<<32 - 1

// Map makes data visible to programs as segment seg and returns its base
// address. Mapping an empty slice unmaps the segment. The stack and null
// segments cannot be mapped, nor more than MaxSegmentSize bytes.
//
// A writable segment must start on an 8-byte boundary, so that an atomic
// at an aligned address is a host atomic at an aligned address: Map refuses
// data that does not. Go's allocator aligns slices of 8 bytes or more;
// sub-slices (buf[1:]) and small allocations may not be aligned.
// Read-only segments may start anywhere (atomics write).
func (m *Machine) Map(seg Segment, data []byte, writable bool) (uint64, error) {
	return m.mapSegment(seg, data, writable, nil)
}

// MapMemory maps the first n bytes of mem as segment seg, as Map does;
// engines may map mem in place instead of copying it.
func (m *Machine) MapMemory(seg Segment, mem *Memory, n int, writable bool) (uint64, error) {
	if n < 0 || n > mem.Len() {
		return 0, fmt.Errorf("vm: %d bytes of a %d-byte memory cannot be mapped as %s", n, mem.Len(), seg)
	}
	return m.mapSegment(seg, mem.Bytes()[:n:n], writable, mem)
}

func (m *Machine) mapSegment(seg Segment, data []byte, writable bool, mem *Memory) (uint64, error) {
	if seg == SegNull || seg == SegStack || seg >= numSegments {
		return 0, fmt.Errorf("vm: segment %d (%s) cannot be mapped", uint32(seg), seg)
	}
	if uint64(len(data)) > MaxSegmentSize {
		return 0, fmt.Errorf("vm: %d bytes do not fit segment %s (at most %d)", len(data), seg, uint64(MaxSegmentSize))
	}
	if base := uintptr(unsafe.Pointer(unsafe.SliceData(data))); writable && len(data) > 0 && base&7 != 0 {
		return 0, fmt.Errorf("vm: writable segment %s must start on an 8-byte boundary (atomics), not at host address %#x", seg, base)
	}
	m.unmapRemote(seg)
	s := &m.segs[seg]
	m.mappedLimit = max(m.mappedLimit, seg+1)
	if len(data) == 0 {
		*s = segment{}
		return Addr(seg, 0), nil
	}
	// Field by field: a composite literal is built on the stack and
	// copied, and the copy's wide loads stall on the narrow stores before
	// them (a store-forwarding stall, a quarter of a short JIT run).
	s.base, s.size, s.writable, s.data, s.mem = unsafe.Pointer(unsafe.SliceData(data)), uint64(len(data)), writable, data, mem
	return Addr(seg, 0), nil
}

// Unmap removes segment seg; unmapping an unmappable segment does nothing.
func (m *Machine) Unmap(seg Segment) {
	if seg != SegNull && seg != SegStack && seg < numSegments {
		m.segs[seg] = segment{}
		m.unmapRemote(seg)
	}
}

// Bytes returns the n bytes at addr for a helper to read (or, with write,
// to modify), after the same checks a load or store gets.
func (m *Machine) Bytes(addr, n uint64, write bool) ([]byte, error) {
	s := &m.segs[(addr>>32)&(numSegments-1)]
	off := addr & 0xffffffff
	if addr>>32 >= numSegments || n > s.size || off > s.size-n {
		if b, err, ok := m.remoteBytes(addr, n, write); ok {
			return b, err
		}
		return nil, m.memFault(FaultOutOfBounds, m.pc, addr, int(n), "helper access")
	}
	if write && !s.writable {
		return nil, m.memFault(FaultReadOnly, m.pc, addr, int(n), "helper access")
	}
	return s.data[off : off+n : off+n], nil
}

// describe names addr for fault messages: "request+16 (length 12)".
func (m *Machine) describe(addr uint64) string {
	seg := Segment(addr >> 32)
	if addr>>32 >= numSegments {
		return "no segment"
	}
	s := &m.segs[seg]
	if rs := m.remoteAt(addr); rs != nil {
		return fmt.Sprintf("%s+%d (remote, length %d)", seg, addr&0xffffffff, rs.size)
	}
	if s.size == 0 && seg != SegStack {
		return fmt.Sprintf("%s+%d, not mapped", seg, addr&0xffffffff)
	}
	if seg == SegStack {
		return fmt.Sprintf("stack+%d (length %d)", addr&0xffffffff, stackBytes)
	}
	return fmt.Sprintf("%s+%d (length %d)", seg, addr&0xffffffff, s.size)
}

func (m *Machine) memFault(kind FaultKind, pc int, addr uint64, size int, op string) *Fault {
	return &Fault{Kind: kind, PC: pc, Addr: addr, Size: size, Op: op, Where: m.describe(addr)}
}
