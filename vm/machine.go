package vm

import (
	"fmt"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
)

// DefaultBudget is the instruction budget of a run when Options.Budget is 0.
const DefaultBudget = 10_000_000

// Options configure a Machine. The zero value is a checked machine with the
// default budget and no helpers.
type Options struct {
	// Budget is the most instructions one run may execute; exceeding it is
	// an ErrBudget fault. 0 means DefaultBudget.
	Budget uint64
	// Helpers serves call instructions; nil means every call faults.
	Helpers Helpers
	// Unchecked drops bounds, rights and alignment checks on memory
	// accesses. Only programs accepted by the verifier may run unchecked,
	// with every region they address mapped (RunAt checks that): an
	// unverified program can corrupt the host process.
	Unchecked bool
}

// Helpers serves helper calls. Call runs helper id with the arguments in
// r1–r5 and returns the value for r0; an error becomes an ErrHelper fault.
// m gives access to the program's memory (Machine.Bytes).
type Helpers interface {
	Call(m *Machine, id uint32, r1, r2, r3, r4, r5 uint64) (uint64, error)
}

// HelperFunc is one helper.
type HelperFunc func(m *Machine, r1, r2, r3, r4, r5 uint64) (uint64, error)

// HelperTable serves helpers by number; a nil entry is an unknown helper.
type HelperTable []HelperFunc

// Call implements Helpers.
func (t HelperTable) Call(m *Machine, id uint32, r1, r2, r3, r4, r5 uint64) (uint64, error) {
	if uint64(id) >= uint64(len(t)) || t[id] == nil {
		return 0, fmt.Errorf("unknown helper %d", id)
	}
	return t[id](m, r1, r2, r3, r4, r5)
}

// frame is what a local call saves: the return slot and the caller's
// callee-saved registers r6–r9 and frame pointer.
type frame struct {
	ret  int
	regs [5]uint64 // r6..r10
}

// Machine is the state of one core: stack, call frames and memory map. A
// Machine runs one program at a time and is not safe for concurrent use;
// give each core its own.
type Machine struct {
	stack  [stackBytes / 8]uint64 // first, so it is 8-byte aligned
	segs   [numSegments]segment
	frames [MaxCallDepth]frame
	opts   Options
	budget uint64
	pc     int      // slot being executed, for helper faults
	prog   *Program // the program the interpreter runs (or ran last), for loadOutOfLine
	depth  int      // call depth of the current run
	steps  uint64   // instructions executed by the last run
	exit   int      // slot of the exit that ended the last successful run
	// ctx is the handler context Invoke maps as SegContext (uint64s, so
	// that it is 8-byte aligned like every segment the machine owns).
	ctx [bytecode.CtxSize / 8]uint64
	// forwarded and forward are the forward helper's per-run state: whether
	// this run forwarded its request, and where. RunAt clears forwarded.
	forwarded bool
	forward   Forward
	// aligned is RunRaw's copy of memory whose base is not 8-byte aligned,
	// kept so that such runs do not allocate each time.
	aligned []uint64
	// mappedLimit is above every segment Map has ever mapped, so engines
	// need not scan all 256 (EngineContext.MappedLimit).
	mappedLimit Segment
	// ec is what instances of other engines see of the machine; instances
	// holds them by executable, lastExec and lastInst the last one run.
	ec        EngineContext
	instances map[Executable]Instance
	lastExec  Executable
	lastInst  Instance
	// saved holds the segments an engine's run redirected, restored when
	// the run ends.
	saved []savedSegment
	// remote holds the segments MapRemote mapped (nil until the first),
	// nremote how many there are; remoteWord receives a remote load and
	// remoteErr the error of one that failed (remote.go).
	remote     *[numSegments]remoteSeg
	nremote    int
	remoteWord uint64
	remoteErr  error
}

// NewMachine returns a machine with an empty memory map but for its stack.
func NewMachine(opts Options) *Machine {
	m := &Machine{opts: opts, budget: opts.Budget}
	m.ec.m = m
	if m.budget == 0 {
		m.budget = DefaultBudget
	}
	base := unsafe.Pointer(&m.stack[0])
	m.segs[SegStack] = segment{base: base, size: stackBytes, writable: true, data: unsafe.Slice((*byte)(base), stackBytes)}
	return m
}

// Executed returns the number of instructions the last run executed,
// including the one that faulted.
func (m *Machine) Executed() uint64 { return m.steps }

// Options returns the machine's configuration.
func (m *Machine) Options() Options { return m.opts }

// RunRaw runs x in raw mode, the bpf_conformance convention: r1 points to
// mem (mapped read-write as the request segment for the run), r2 holds its
// length. If mem does not start on an 8-byte boundary, which atomics need,
// the run works on an aligned copy that is copied back into mem afterwards.
// Memory of more than MaxSegmentSize bytes is refused: an offset of 2^32
// would be the next segment's.
func (m *Machine) RunRaw(x Executable, mem []byte) (uint64, error) {
	if err := checkRawSize(len(mem)); err != nil {
		return 0, err
	}
	seg := mem
	copied := uintptr(unsafe.Pointer(unsafe.SliceData(mem)))&7 != 0
	if copied {
		seg = m.alignedCopy(mem)
	}
	addr, err := m.Map(SegRequest, seg, true)
	if err != nil {
		return 0, err
	}
	if len(mem) == 0 {
		addr = 0
	}
	r0, err := m.runEntry(x, x.Program(), 0, addr, uint64(len(mem)))
	m.Unmap(SegRequest)
	if copied {
		copy(mem, seg)
	}
	return r0, err
}

// RunRawMemory is RunRaw on mem, which engines may map in place: a
// program's raw memory that lives across runs.
func (m *Machine) RunRawMemory(x Executable, mem *Memory) (uint64, error) {
	if err := checkRawSize(mem.Len()); err != nil {
		return 0, err
	}
	addr, err := m.MapMemory(SegRequest, mem, mem.Len(), true)
	if err != nil {
		return 0, err
	}
	if mem.Len() == 0 {
		addr = 0
	}
	r0, err := m.runEntry(x, x.Program(), 0, addr, uint64(mem.Len()))
	m.Unmap(SegRequest)
	return r0, err
}

func checkRawSize(n int) error {
	if uint64(n) > MaxSegmentSize {
		return fmt.Errorf("vm: raw memory of %d bytes, more than one segment holds (%d)", n, uint64(MaxSegmentSize))
	}
	return nil
}

// alignedCopy returns a copy of mem in m's scratch buffer, 8-byte aligned.
func (m *Machine) alignedCopy(mem []byte) []byte {
	words := (len(mem) + 7) / 8
	if cap(m.aligned) < words {
		m.aligned = make([]uint64, words)
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(m.aligned[:words]))), len(mem))
	copy(buf, mem)
	return buf
}

// Run executes p from its first instruction with args in r1, r2, … (at most
// five) and returns r0. Registers not given start at zero; r10 points to the
// top of the first stack frame.
func (m *Machine) Run(p *Program, args ...uint64) (uint64, error) {
	return m.RunAt(p, 0, args...)
}

// RunAt is Run starting at slot entry (a handler's entry point).
//
// Besides r0 or a *Fault, RunAt returns a plain error, before running
// anything, for an entry that is not an instruction, more than five
// arguments, or (unchecked) a region the program addresses but that is not
// mapped.
func (m *Machine) RunAt(p *Program, entry int, args ...uint64) (r0 uint64, err error) {
	m.pc = entry // what a recovered panic reports, not the last run's slot
	m.forwarded = false
	if err := p.checkEntry(entry); err != nil {
		return 0, err
	}
	if len(args) > 5 {
		return 0, fmt.Errorf("vm: %d arguments, at most 5 (r1-r5)", len(args))
	}
	if m.opts.Unchecked {
		if m.nremote > 0 {
			return 0, fmt.Errorf("vm: a remote region is mapped; remote regions run only on checked machines")
		}
		// Unchecked accesses add the offset to the segment's base without
		// looking: through an unmapped region's nil base that is a wild
		// pointer, which kills the process instead of panicking.
		for i := range p.regions {
			if m.segs[RegionSegment(i)].base == nil {
				return 0, fmt.Errorf("vm: the program addresses region %d, which is not mapped (unchecked runs need every region mapped)", i)
			}
		}
	}
	m.remoteErr, m.prog = nil, p // here, not in run: its prologue stays as it is
	var regs [11]uint64
	copy(regs[1:], args)
	regs[10] = Addr(SegStack, stackBytes)
	if !m.opts.Unchecked {
		// Unverified code may read stack it never wrote: give it zeros, not
		// the previous run's bytes.
		clear(m.stack[:])
		defer func() {
			if r := recover(); r != nil {
				r0, err = 0, &Fault{Kind: FaultInternal, PC: m.pc, Err: fmt.Errorf("%v", r)}
			}
		}()
	}
	return m.run(p, entry, &regs)
}
