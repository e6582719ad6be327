package vm

import (
	"fmt"
	"unsafe"
)

// Engine is a way of executing programs: the interpreter of this package
// (Interpreter) or another one built on it (vm/jit). A program is prepared
// for an engine once, by Compile, and the Executable it returns runs on
// any number of machines; which engine runs a program is decided there,
// not per run.
type Engine interface {
	// Compile prepares p for runs that start at slot 0 or at one of
	// entries (a handler's entry points).
	Compile(p *Program, entries []int) (Executable, error)
}

// Executable is a program prepared by an engine: immutable, shared by
// every machine that runs it. Machine.RunRaw and Machine.Invoke take one;
// a *Program is the interpreter's.
type Executable interface {
	// Program is the program the executable was prepared from, which
	// Machine checks entries and regions against.
	Program() *Program
	// Instantiate returns the executable's state on one machine, which
	// calls it on its first run of the executable and keeps the instance
	// until Machine.Forget or Machine.Close. The instance reaches the
	// machine through ec only.
	Instantiate(ec *EngineContext) (Instance, error)
}

// Instance is an executable's state on one machine. It is used by that
// machine's goroutine only.
type Instance interface {
	// Run runs from slot entry, which the machine has checked is an
	// instruction, with r1 and r2 (the other registers zero), on the
	// segments the machine maps. It returns r0 or a *Fault (or a plain
	// error for a run it cannot start) and reports the run's instruction
	// count and final exit slot through EngineContext.Finish.
	Run(entry int, r1, r2 uint64) (uint64, error)
	// Close frees what the instance holds outside the Go heap.
	Close()
}

// Interpreter is this package's engine: Compile checks the entries and
// returns the program itself, which Machine interprets.
type Interpreter struct{}

// Compile implements Engine.
func (Interpreter) Compile(p *Program, entries []int) (Executable, error) {
	for _, e := range entries {
		if err := p.checkEntry(e); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Program implements Executable: p is its own executable.
func (p *Program) Program() *Program { return p }

// Instantiate implements Executable. (Machine interprets a *Program
// directly; the instance serves callers that hold an Executable.)
func (p *Program) Instantiate(ec *EngineContext) (Instance, error) {
	return interpInstance{ec.m, p}, nil
}

type interpInstance struct {
	m *Machine
	p *Program
}

func (i interpInstance) Run(entry int, r1, r2 uint64) (uint64, error) {
	return i.m.RunAt(i.p, entry, r1, r2)
}

func (interpInstance) Close() {}

// checkEntry refuses an entry that is not an instruction of p.
func (p *Program) checkEntry(entry int) error {
	if entry < 0 || entry >= p.slots || p.code[entry].op == opInvalid {
		return fmt.Errorf("vm: entry point %d is not an instruction of a %d-slot program", entry, p.slots)
	}
	return nil
}

// EngineContext is what an engine's instance may use of its machine: the
// budget, the memory map, helpers, the fault texts and the run's result.
// Raw mode's memory handling and the handler ABI (context, mapping, return
// classification) stay the machine's, so that engines cannot drift from
// the interpreter there.
type EngineContext struct{ m *Machine }

// Budget is the machine's instruction budget per run.
func (c *EngineContext) Budget() uint64 { return c.m.budget }

// Segment returns what is mapped as seg: its bytes (nil when it is not
// mapped), whether it is writable, and the Memory that data starts when
// it was mapped from one (an engine may map that in place; nil for plain
// slices).
func (c *EngineContext) Segment(seg Segment) (data []byte, writable bool, mem *Memory) {
	if seg >= numSegments {
		return nil, false, nil
	}
	s := &c.m.segs[seg]
	return s.data, s.writable, s.mem
}

// MappedLimit is a segment number above every segment mapped now (it may
// also be above some that were mapped once and are not any more).
func (c *EngineContext) MappedLimit() Segment { return c.m.mappedLimit }

// Redirect makes data, of seg's length, what helpers see as seg for the
// rest of the run: an engine that runs on its own copy of a segment (or
// its own stack) points helpers there. The machine restores the segment
// when the run ends. A writable segment's copy must start on an 8-byte
// boundary, as Map requires.
func (c *EngineContext) Redirect(seg Segment, data []byte) error {
	m := c.m
	if seg == SegNull || seg >= numSegments {
		return fmt.Errorf("vm: segment %d cannot be redirected", uint32(seg))
	}
	s := &m.segs[seg]
	if uint64(len(data)) != s.size {
		return fmt.Errorf("vm: redirecting %s: %d bytes for a segment of %d", seg, len(data), s.size)
	}
	if s.writable && len(data) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(data)))&7 != 0 {
		return fmt.Errorf("vm: redirecting %s: a writable segment must start on an 8-byte boundary", seg)
	}
	m.saved = append(m.saved, savedSegment{seg, *s})
	s.base, s.data = unsafe.Pointer(unsafe.SliceData(data)), data
	return nil
}

// CallHelper runs helper id for the call at slot pc as the interpreter
// does: a machine without helpers, or a helper's error, is a FaultHelper
// fault at pc (or the helper's own *Fault, such as a bad memory argument).
func (c *EngineContext) CallHelper(pc int, id uint32, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	m := c.m
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

// AccessFault is the fault of a load, store or atomic ("load", "store",
// "atomic") of size bytes at addr that the memory map refuses, at slot
// pc: out of bounds, or read-only when the access is in bounds but
// writes. Call Finish first: the fault's run keeps its count.
func (c *EngineContext) AccessFault(pc int, addr, size uint64, write bool, op string) *Fault {
	return c.m.accessFault(c.m.steps, pc, addr, size, write, op)
}

// MisalignedFault is the fault of an atomic at an address not a multiple
// of its size.
func (c *EngineContext) MisalignedFault(pc int, addr, size uint64) *Fault {
	return c.m.memFault(FaultMisaligned, pc, addr, int(size), "atomic")
}

// Finish records what the run did: the instructions it executed
// (Machine.Executed, Result.Insns) and the slot of the exit that ended it
// (the PC of a FaultReturn).
func (c *EngineContext) Finish(steps uint64, exit int) { c.m.steps, c.m.exit = steps, exit }

// savedSegment is a segment as it was before Redirect.
type savedSegment struct {
	seg Segment
	s   segment
}

// instance returns the machine's instance of x, made on its first run.
func (m *Machine) instance(x Executable) (Instance, error) {
	if m.lastInst != nil && x == m.lastExec {
		return m.lastInst, nil
	}
	in := m.instances[x]
	if in == nil {
		var err error
		if in, err = x.Instantiate(&m.ec); err != nil {
			return nil, err
		}
		if m.instances == nil {
			m.instances = map[Executable]Instance{}
		}
		m.instances[x] = in
	}
	m.lastExec, m.lastInst = x, in
	return in, nil
}

// runEntry runs x at entry: a *Program in the interpreter, any other
// executable through its instance on m.
func (m *Machine) runEntry(x Executable, p *Program, entry int, r1, r2 uint64) (uint64, error) {
	if q, ok := x.(*Program); ok && q == p {
		return m.RunAt(p, entry, r1, r2)
	}
	m.pc, m.forwarded = entry, false
	if err := p.checkEntry(entry); err != nil {
		return 0, err
	}
	if m.nremote > 0 {
		return 0, fmt.Errorf("vm: a remote region is mapped; remote regions run only in the interpreter")
	}
	in, err := m.instance(x)
	if err != nil {
		return 0, err
	}
	return m.runInstance(in, entry, r1, r2)
}

// runInstance runs in and then gives back the segments it redirected. A
// Go panic in the engine (a bug there) ends the run as an internal fault,
// as in a checked interpreted run, and never leaves a segment redirected.
func (m *Machine) runInstance(in Instance, entry int, r1, r2 uint64) (r0 uint64, err error) {
	defer func() {
		for i := len(m.saved) - 1; i >= 0; i-- {
			m.segs[m.saved[i].seg] = m.saved[i].s
		}
		clear(m.saved)
		m.saved = m.saved[:0]
		if r := recover(); r != nil {
			r0, err = 0, &Fault{Kind: FaultInternal, PC: m.pc, Err: fmt.Errorf("engine: %v", r)}
		}
	}()
	return in.Run(entry, r1, r2)
}

// Forget frees the machine's instance of x, if it has one: x will not run
// here again, or will be instantiated anew.
func (m *Machine) Forget(x Executable) {
	if in := m.instances[x]; in != nil {
		in.Close()
		delete(m.instances, x)
	}
	if m.lastExec == x {
		m.lastExec, m.lastInst = nil, nil
	}
}

// Close frees every instance the machine holds (an engine's instance may
// hold memory the garbage collector does not see, such as vm/jit's
// linear memories). The machine may still run programs afterwards; it
// instantiates them anew.
func (m *Machine) Close() {
	for x, in := range m.instances {
		in.Close()
		delete(m.instances, x)
	}
	m.lastExec, m.lastInst = nil, nil
}
