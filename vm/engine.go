package vm

import (
	"fmt"
	"unsafe"
)

// RunFunc runs p from slot entry on m, whose segments are mapped, with r1
// and r2 (the other registers zero), in place of the interpreter. It returns r0
// or a *Fault, and leaves the run's instruction count and final exit slot
// in m (EndRun). Another engine, vm/jit, supplies one to RunRawWith
// and InvokeWith, so that raw mode's memory handling and the handler ABI
// (context, mapping, return classification) are this package's alone.
type RunFunc func(m *Machine, p *Program, entry int, r1, r2 uint64) (uint64, error)

// RunRawWith is RunRaw with the run done by run.
func (m *Machine) RunRawWith(p *Program, mem []byte, run RunFunc) (uint64, error) {
	m.runner = run
	defer func() { m.runner = nil }()
	return m.RunRaw(p, mem)
}

// InvokeWith is Invoke with the run done by run.
func (m *Machine) InvokeWith(p *Program, inv *Invocation, run RunFunc) (Result, error) {
	m.runner = run
	defer func() { m.runner = nil }()
	return m.Invoke(p, inv)
}

// runEntry runs p at entry with the engine set by RunRawWith or
// InvokeWith, or the interpreter. (Not variadic: a slice handed to the
// runner would escape, and the interpreter's runs would allocate.)
func (m *Machine) runEntry(p *Program, entry int, r1, r2 uint64) (uint64, error) {
	if m.runner != nil {
		return m.runner(m, p, entry, r1, r2)
	}
	return m.RunAt(p, entry, r1, r2)
}

// SegmentInfo is one segment of a machine's memory map, for engines.
type SegmentInfo struct {
	Data     []byte // nil when the segment is not mapped
	Writable bool
}

// Segment returns what is mapped as seg; the stack segment is the
// machine's own stack (or what MapStack put there).
func (m *Machine) Segment(seg Segment) SegmentInfo {
	if seg >= numSegments {
		return SegmentInfo{}
	}
	s := &m.segs[seg]
	return SegmentInfo{Data: s.data, Writable: s.writable}
}

// MapStack makes data, exactly StackBytes long and 8-byte aligned, the
// machine's stack segment until UnmapStack: an engine whose stack lives
// elsewhere (vm/jit's linear memory) maps it so that helpers see it.
func (m *Machine) MapStack(data []byte) error {
	if len(data) != StackBytes || uintptr(unsafe.Pointer(unsafe.SliceData(data)))&7 != 0 {
		return fmt.Errorf("vm: a stack must be %d bytes on an 8-byte boundary", StackBytes)
	}
	m.segs[SegStack] = segment{base: unsafe.Pointer(unsafe.SliceData(data)), size: StackBytes, writable: true, data: data}
	return nil
}

// UnmapStack gives the machine its own stack back.
func (m *Machine) UnmapStack() {
	base := unsafe.Pointer(&m.stack[0])
	m.segs[SegStack] = segment{base: base, size: stackBytes, writable: true, data: unsafe.Slice((*byte)(base), stackBytes)}
}

// StackBytes is the whole stack: MaxCallDepth frames of StackSize bytes.
const StackBytes = stackBytes

// BeginRun starts a run as RunAt does: the forward helper's per-run
// state is cleared.
func (m *Machine) BeginRun() { m.forwarded = false }

// EndRun records what an engine's run did: the instructions it executed
// (Executed, Result.Insns) and the slot of the exit that ended it (the PC
// of a FaultReturn).
func (m *Machine) EndRun(steps uint64, exit int) { m.steps, m.exit = steps, exit }

// AccessFault is the fault of a load, store or atomic ("load", "store",
// "atomic") of size bytes at addr that the memory map refuses, at slot pc:
// out of bounds, or read-only when the access is in bounds but writes.
func (m *Machine) AccessFault(pc int, addr, size uint64, write bool, op string) *Fault {
	return m.accessFault(m.steps, pc, addr, size, write, op)
}

// MisalignedFault is the fault of an atomic at an address not a multiple
// of its size.
func (m *Machine) MisalignedFault(pc int, addr, size uint64) *Fault {
	return m.memFault(FaultMisaligned, pc, addr, int(size), "atomic")
}

// CallHelper runs helper id for the call at slot pc as the interpreter
// does: a machine without helpers, or a helper's error, is a FaultHelper
// fault at pc (or the helper's own *Fault, such as a bad memory argument).
func (m *Machine) CallHelper(pc int, id uint32, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	m.pc = pc
	if m.opts.Helpers == nil {
		return 0, &Fault{Kind: FaultHelper, PC: pc, Err: errNoHelpers(id)}
	}
	v, err := m.opts.Helpers.Call(m, id, r1, r2, r3, r4, r5)
	if err != nil {
		if f, ok := err.(*Fault); ok {
			return 0, f
		}
		return 0, &Fault{Kind: FaultHelper, PC: pc, Err: err}
	}
	return v, nil
}

// Budget returns the machine's instruction budget per run.
func (m *Machine) Budget() uint64 { return m.budget }

// MappedLimit is a segment number above every segment mapped now (it
// may also be above some that were mapped once and are not any more).
func (m *Machine) MappedLimit() Segment { return m.mappedLimit }
