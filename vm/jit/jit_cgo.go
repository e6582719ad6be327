//go:build cgo

package jit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/bytecodealliance/wasmtime-go/v39"
	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/vm"
)

var (
	engineOnce sync.Once
	engine     *wasmtime.Engine
)

// sharedEngine is the process's one wasmtime engine: compiled modules
// belong to an engine, and one serves every machine.
func sharedEngine() *wasmtime.Engine {
	engineOnce.Do(func() {
		cfg := wasmtime.NewConfig()
		cfg.SetWasmThreads(true) // atomic read-modify-write instructions
		cfg.SetCraneliftOptLevel(wasmtime.OptLevelSpeed)
		pinMemory(cfg)
		engine = wasmtime.NewEngineWithConfig(cfg)
	})
	return engine
}

// Available reports whether the tier can run here: nil with cgo.
func Available() error { return nil }

// InPlace reports whether runs map mem into linear memory in place (a
// memory with a file, on Linux), so that their writes and atomics are
// shared with every other machine at once; other memory is copied in and
// out for each run.
func InPlace(mem *vm.Memory) bool {
	fd, _ := mem.FD()
	return mapsInPlace && fd >= 0
}

// Code is a program compiled to machine code: a vm.Executable, immutable,
// shared by every machine that runs it.
type Code struct {
	prog   *vm.Program
	tr     *translation
	module *wasmtime.Module
	opts   Options
	stats  Stats
}

// Compile loads insns (vm.Load's checks), translates them to Wasm and has
// wasmtime compile that. Errors name the instruction slot.
func Compile(insns asm.Instructions, opts Options) (*Code, error) {
	prog, err := vm.Load(insns)
	if err != nil {
		return nil, err
	}
	return compile(prog, opts)
}

// Compile implements vm.Engine: p compiled with e's mode and entries.
func (e Engine) Compile(p *vm.Program, entries []int) (vm.Executable, error) {
	c, err := compile(p, Options{Unchecked: e.Unchecked, Entries: entries})
	if err != nil {
		return nil, err
	}
	return c, nil
}

func compile(prog *vm.Program, opts Options) (*Code, error) {
	start := time.Now()
	tr, err := translate(prog.Insns(), append([]int{0}, opts.Entries...), !opts.Unchecked)
	if err != nil {
		return nil, err
	}
	translated := time.Now()
	mod, err := wasmtime.NewModule(sharedEngine(), tr.wasm)
	if err != nil {
		return nil, fmt.Errorf("jit: wasmtime rejected the translation: %w", err)
	}
	done := time.Now()
	return &Code{prog: prog, tr: tr, module: mod, opts: opts, stats: Stats{
		Translate: translated.Sub(start), Compile: done.Sub(translated),
		WasmBytes: len(tr.wasm), Blocks: len(tr.blocks), Loops: tr.loops, FastLoops: tr.fastLoops, Guarded: tr.guarded, Slots: tr.slots,
	}}, nil
}

// Close frees the machine code now instead of when the garbage collector
// finds c unreachable (wasmtime's memory is invisible to it). Instances
// already made keep working; no new one can be made.
func (c *Code) Close() { c.module.Close() }

// Program returns the interpreter's form of the same program.
func (c *Code) Program() *vm.Program { return c.prog }

// Stats returns what compiling c took.
func (c *Code) Stats() Stats { return c.stats }

// Unchecked reports whether c was compiled without memory checks.
func (c *Code) Unchecked() bool { return c.opts.Unchecked }

// Instantiate implements vm.Executable: a wasmtime store of its own with
// an instance of c and its linear memory, for one machine.
func (c *Code) Instantiate(ec *vm.EngineContext) (vm.Instance, error) {
	in := &instance{code: c, ec: ec, entry: -1, mapTop: mapBase,
		unchecked: c.opts.Unchecked, helpers: c.tr.helpers, writes: c.tr.writes, stackLow: c.tr.stackLow}
	in.store = wasmtime.NewStore(sharedEngine())
	i32, i64 := wasmtime.NewValType(wasmtime.KindI32), wasmtime.NewValType(wasmtime.KindI64)
	ty := wasmtime.NewFuncType([]*wasmtime.ValType{i32, i32, i64, i64, i64, i64, i64, i64}, []*wasmtime.ValType{i64})
	helper := wasmtime.NewFunc(in.store, ty, in.helper)
	inst, err := wasmtime.NewInstance(in.store, c.module, []wasmtime.AsExtern{helper})
	if err != nil {
		in.Close()
		return nil, fmt.Errorf("jit: instantiate: %w", err)
	}
	in.run = inst.GetFunc(in.store, "run")
	if ex := inst.GetExport(in.store, "memory"); ex != nil {
		in.memory = ex.Memory()
	}
	if in.run == nil || in.memory == nil {
		in.Close()
		return nil, errors.New("jit: module lacks run or memory")
	}
	if in.call, err = newRunCall(in.store, in.run); err != nil {
		in.Close()
		return nil, err
	}
	in.base = in.memory.Data(in.store)
	in.mem = unsafe.Slice((*byte)(in.base), in.memory.DataSize(in.store))
	// The stack's table entries never change.
	setLimits(in.mem, vm.SegStack, stackBase, vm.StackBytes, true)
	return in, nil
}

// instance is a Code on one machine: a store with an instance of the
// module, and the state of its linear memory (spec/jit.md, Memory).
type instance struct {
	// The instance is large enough to start on a page: its hot fields at
	// offset 0 would share an L1 set with the other page-aligned things a
	// run touches (linear memory's control block and tables, the memories
	// mapped in place, the machine).
	_      [64]byte
	code   *Code
	ec     *vm.EngineContext
	store  *wasmtime.Store
	run    *wasmtime.Func
	call   runCall // how a run calls run
	memory *wasmtime.Memory
	base   unsafe.Pointer // linear memory's base: it never moves (pinMemory)
	mem    []byte         // linear memory, as large as it has grown
	// entry and entryBlock are the last run's entry slot and its dispatch
	// index.
	entry, entryBlock int
	// What a run asks of the code, copied here so that a run reads the
	// instance's lines only: Options.Unchecked and the translation's
	// helpers, writes and stackLow.
	unchecked, helpers, writes bool
	stackLow                   int
	// tables is what the base and limit tables say of each segment.
	tables [256]tableEntry
	// placed are the memories mapped in place, from mapBase up to mapTop;
	// they stay mapped for the instance's life (or until space runs out).
	placed []placement
	mapTop int
	// copies are the run's segments copied in above mapTop.
	copies []copied
	// budget is the run's (runBudget); helperErr and helperSteps record a
	// helper's fault, which ends the run as a trap.
	budget      uint64
	helperErr   error
	helperSteps uint64
}

type tableEntry struct {
	off, n   int
	writable bool
	mem      *vm.Memory // mapped in place there; nil for a copy
}

// placement is a vm.Memory's file mapped at off, n bytes (whole pages).
type placement struct {
	mem    *vm.Memory
	off, n int
}

// copied is a segment copied into linear memory at off for a run.
type copied struct {
	seg      vm.Segment
	off      int
	data     []byte
	writable bool
}

// helper serves the module's helper import: id, pc, budget left, r1–r5.
func (in *instance) helper(_ *wasmtime.Caller, args []wasmtime.Val) (res []wasmtime.Val, trap *wasmtime.Trap) {
	defer func() {
		// A panicking helper ends the run as the checked interpreter's
		// recover does, instead of unwinding through wasmtime.
		if r := recover(); r != nil {
			in.helperErr = &vm.Fault{Kind: vm.FaultInternal, PC: int(args[1].I32()), Err: fmt.Errorf("%v", r)}
			in.helperSteps = in.budget - uint64(args[2].I64())
			res, trap = nil, wasmtime.NewTrap("helper panic")
		}
	}()
	v, err := in.ec.CallHelper(int(args[1].I32()), uint32(args[0].I32()),
		uint64(args[3].I64()), uint64(args[4].I64()), uint64(args[5].I64()), uint64(args[6].I64()), uint64(args[7].I64()))
	if err != nil {
		in.helperErr, in.helperSteps = err, in.budget-uint64(args[2].I64())
		return nil, wasmtime.NewTrap("helper fault")
	}
	return []wasmtime.Val{wasmtime.ValI64(int64(v))}, nil
}

// Close frees the store, with the instance and its linear memory (which
// reserves gigabytes of address space for Wasm's guard pages and holds
// the mappings of the memories placed in it), now instead of when the
// garbage collector finds it unreachable.
func (in *instance) Close() {
	if in.call.p != nil {
		in.call.free()
		in.call = runCall{}
	}
	in.store.Close()
	in.placed, in.copies = nil, nil
}

// trapFrame finds the innermost frame's module offset in a trap message
// ("0:     0xe8 - <unknown>!<wasm function 2>").
var trapFrame = regexp.MustCompile(`(?m)^\s*0:\s+0x([0-9a-f]+) - `)

// maxLinear is the most linear memory a run may use: 4 GiB less a page.
const maxLinear = 1<<32 - 1<<16

// mapBase is where memories mapped in place begin: the first host page
// boundary at or above dynBase.
var mapBase = (dynBase + os.Getpagesize() - 1) &^ (os.Getpagesize() - 1)

// maxPlaced bounds the memories one instance keeps mapped; past it (or
// past the linear memory) it drops them all and maps what runs need anew.
const maxPlaced = 256

// Run implements vm.Instance: it lays out the machine's segments in linear
// memory (memories with a file mapped in place once, others copied in),
// runs, copies the writable copies back and turns the outcome into r0 or
// a *vm.Fault.
func (in *instance) Run(entry int, r1, r2 uint64) (uint64, error) {
	c, ec := in.code, in.ec
	if entry != in.entry {
		blk, ok := c.tr.dispatch[entry]
		if !ok || entry >= c.tr.slots {
			return 0, fmt.Errorf("jit: entry point %d is not an entry the code was compiled with", entry)
		}
		in.entry, in.entryBlock = entry, blk
	}
	if in.unchecked {
		for i := range c.prog.Regions() {
			if data, _, _ := ec.Segment(vm.RegionSegment(i)); data == nil {
				return 0, fmt.Errorf("jit: the program addresses region %d, which is not mapped (unchecked runs need every region mapped)", i)
			}
		}
	}
	if err := in.layout(); err != nil {
		in.dropCopies()
		return 0, err
	}
	mem := in.mem
	// The control block as an array: constant offsets, no bounds checks.
	ctl := (*[ctlBytes]byte)(in.base)
	le := binary.LittleEndian
	le.PutUint32(ctl[ctlEntry:], uint32(in.entryBlock))
	budget := runBudget(ec.Budget())
	in.budget = budget
	le.PutUint64(ctl[ctlBudget:], budget)
	le.PutUint64(ctl[ctlArgs:], r1)
	le.PutUint64(ctl[ctlArgs+8:], r2)
	le.PutUint32(ctl[ctlKind:], 0)
	if !in.unchecked {
		// As the checked interpreter does; below stackLow no run of this
		// code has written.
		if low := in.stackLow; low < vm.StackBytes {
			clear(mem[stackBase+low : stackBase+vm.StackBytes])
		}
	}
	if in.helpers {
		if err := in.redirect(); err != nil {
			in.dropCopies()
			return 0, err
		}
	}
	if in.helperErr != nil {
		in.helperErr = nil
	}
	r0, callErr := in.call.call()
	if in.writes {
		for _, cp := range in.copies {
			if cp.writable {
				copy(cp.data, mem[cp.off:cp.off+len(cp.data)])
			}
		}
	}
	in.dropCopies()

	if callErr != nil {
		if in.helperErr != nil {
			ec.Finish(in.helperSteps, 0)
			return 0, in.helperErr
		}
		ec.Finish(0, 0)
		// wasmtime's message spans lines and ends in a native backtrace; its
		// first frame gives the module offset, which names the slot.
		msg, _, _ := strings.Cut(callErr.Error(), "Stack backtrace")
		pc := entry
		if f := trapFrame.FindStringSubmatch(msg); f != nil {
			if off, err := strconv.ParseUint(f[1], 16, 32); err == nil {
				if slot, ok := c.tr.slotOf(int(off)); ok {
					pc = slot
				}
			}
		}
		return 0, &vm.Fault{Kind: vm.FaultInternal, PC: pc, Err: fmt.Errorf("jit: wasm trap: %s", strings.Join(strings.Fields(msg), " "))}
	}
	steps := budget - le.Uint64(ctl[ctlSteps:])
	pc := int(le.Uint32(ctl[ctlPC:]))
	kind := le.Uint32(ctl[ctlKind:])
	ec.Finish(steps, pc)
	switch {
	case kind == 0:
		return uint64(r0), nil
	case kind == statusMem:
		info := le.Uint32(ctl[ctlInfo:])
		op := [...]string{infoLoad: "load", infoStore: "store", infoAtomic: "atomic"}[info>>9&3]
		return 0, ec.AccessFault(pc, le.Uint64(ctl[ctlAddr:]), uint64(info&0xff), info>>8&1 != 0, op)
	case kind == uint32(vm.FaultMisaligned):
		info := le.Uint32(ctl[ctlInfo:])
		return 0, ec.MisalignedFault(pc, le.Uint64(ctl[ctlAddr:]), uint64(info&0xff))
	default:
		return 0, &vm.Fault{Kind: vm.FaultKind(kind), PC: pc}
	}
}

// dropCopies forgets the run's copies, so that the instance keeps none of
// the caller's memory reachable.
func (in *instance) dropCopies() {
	if len(in.copies) > 0 {
		clear(in.copies)
		in.copies = in.copies[:0]
	}
}

// redirect points the machine's stack and copied segments at their linear
// memory, so that helpers work on what the code works on. (Memories mapped
// in place need nothing: both views are the same pages.)
func (in *instance) redirect() error {
	if err := in.ec.Redirect(vm.SegStack, in.mem[stackBase:stackBase+vm.StackBytes:stackBase+vm.StackBytes]); err != nil {
		return err
	}
	for _, cp := range in.copies {
		n := len(cp.data)
		if err := in.ec.Redirect(cp.seg, in.mem[cp.off:cp.off+n:cp.off+n]); err != nil {
			return err
		}
	}
	return nil
}

// errNoRoom is layoutOnce's report that the placed memories and the
// run's copies do not fit in linear memory together.
var errNoRoom = errors.New("no room")

// layout makes linear memory and its tables hold the machine's segments
// for a run. When they do not fit beside the memories placed so far, it
// drops those and tries once more.
func (in *instance) layout() error {
	if in.unchanged() {
		return nil
	}
	err := in.layoutOnce()
	if err == errNoRoom && len(in.placed) > 0 {
		if err = in.unplace(); err == nil {
			err = in.layoutOnce()
		}
	}
	if err == errNoRoom {
		return fmt.Errorf("jit: the run's segments need %d bytes of linear memory, which holds %d beside the JIT's own", in.need(), maxLinear-mapBase)
	}
	return err
}

// unchanged reports whether the tables already say what the machine
// maps: every segment unmapped or mapped in place as in the last run, so
// that there is nothing to copy or map (a raw run on a vm.Memory, a
// handler on regions, in the common case).
func (in *instance) unchanged() bool {
	ec := in.ec
	for seg := vm.SegContext; seg < ec.MappedLimit(); seg++ {
		data, writable, mem := ec.Segment(seg)
		e := &in.tables[seg]
		if data == nil {
			if e.n != 0 {
				return false
			}
			continue
		}
		if mem == nil || e.mem != mem || e.n != len(data) || e.writable != writable {
			return false
		}
	}
	return true
}

// need is how much linear memory the machine's segments take: whole
// files for memories mapped in place, the bytes of the others.
func (in *instance) need() uint64 {
	var n uint64
	for seg := vm.SegContext; seg < in.ec.MappedLimit(); seg++ {
		data, _, mem := in.ec.Segment(seg)
		if mem != nil && InPlace(mem) {
			_, size := mem.FD()
			n += uint64(size)
			continue
		}
		n += uint64(len(data)+7) &^ 7
	}
	return n
}

func (in *instance) layoutOnce() error {
	ec := in.ec
	limit := ec.MappedLimit()
	in.copies = in.copies[:0]
	for seg := vm.SegContext; seg < limit; seg++ {
		data, writable, mem := ec.Segment(seg)
		if data == nil {
			in.setTable(seg, 0, 0, false)
			continue
		}
		if e := &in.tables[seg]; mem != nil && e.mem == mem && e.n == len(data) && e.writable == writable {
			continue // in place, as in the last run
		}
		if mem != nil && InPlace(mem) {
			fd, size := mem.FD()
			off, err := in.place(mem, fd, size)
			if err != nil {
				return err
			}
			in.setTable(seg, off, len(data), writable)
			in.tables[seg].mem = mem
			continue
		}
		in.copies = append(in.copies, copied{seg: seg, data: data, writable: writable})
	}
	off := in.mapTop
	for i := range in.copies {
		in.copies[i].off = off
		off += (len(in.copies[i].data) + 7) &^ 7
	}
	if off > maxLinear {
		return errNoRoom
	}
	if err := in.grow(off); err != nil {
		return err
	}
	for _, cp := range in.copies {
		copy(in.mem[cp.off:], cp.data)
		in.setTable(cp.seg, cp.off, len(cp.data), cp.writable)
	}
	return nil
}

// place returns where mem's file (fd, size bytes) is mapped in linear
// memory, mapping it above the others the first time.
func (in *instance) place(mem *vm.Memory, fd, size int) (int, error) {
	for _, p := range in.placed {
		if p.mem == mem {
			return p.off, nil
		}
	}
	off := in.mapTop
	if off+size > maxLinear || len(in.placed) == maxPlaced {
		return 0, errNoRoom
	}
	if err := in.grow(off + size); err != nil {
		return 0, err
	}
	if err := mapFile(unsafe.Add(in.base, off), size, fd); err != nil {
		return 0, err
	}
	in.placed = append(in.placed, placement{mem: mem, off: off, n: size})
	in.mapTop = off + size
	return off, nil
}

// unplace drops every memory placed in linear memory, giving it zeroed
// private pages back, and forgets the tables that pointed there.
func (in *instance) unplace() error {
	for _, p := range in.placed {
		if err := unmapFile(unsafe.Add(in.base, p.off), p.n); err != nil {
			return fmt.Errorf("jit: unmap a memory from linear memory: %w", err)
		}
	}
	clear(in.placed)
	in.placed, in.mapTop = in.placed[:0], mapBase
	for seg := vm.SegContext; seg < vm.Segment(len(in.tables)); seg++ {
		in.setTable(seg, 0, 0, false)
	}
	return nil
}

// grow makes linear memory at least n bytes long.
func (in *instance) grow(n int) error {
	if n <= len(in.mem) {
		return nil
	}
	pages := (uint64(n-len(in.mem)) + 1<<16 - 1) >> 16
	if _, err := in.memory.Grow(in.store, pages); err != nil {
		return fmt.Errorf("jit: grow linear memory to %d bytes: %w", n, err)
	}
	if in.memory.Data(in.store) != in.base {
		return errors.New("jit: linear memory moved as it grew")
	}
	in.mem = unsafe.Slice((*byte)(in.base), in.memory.DataSize(in.store))
	return nil
}

// setTable makes the tables say that seg is n bytes at linear offset off
// (n = 0: unmapped), if they do not already.
func (in *instance) setTable(seg vm.Segment, off, n int, writable bool) {
	e := &in.tables[seg]
	e.mem = nil
	if n == 0 {
		off, writable = 0, false
	}
	if e.off == off && e.n == n && e.writable == writable {
		return
	}
	e.off, e.n, e.writable = off, n, writable
	setLimits(in.mem, seg, off, n, writable)
}

// setLimits fills seg's entries of the base and limit tables for n bytes
// at linear offset off (n = 0: unmapped).
func setLimits(mem []byte, seg vm.Segment, off, n int, writable bool) {
	le := binary.LittleEndian
	le.PutUint32(mem[baseTable+8*int(seg):], uint32(off))
	for _, size := range []uint32{1, 2, 4, 8} {
		var limit uint64
		if n > 0 {
			// Segment numbers are at least 1 here, so this is positive.
			limit = vm.Addr(seg, 0) + uint64(n) - uint64(size-1)
		}
		le.PutUint64(mem[limitTable(size, false)+8*uint32(seg):], limit)
		if !writable {
			limit = 0
		}
		le.PutUint64(mem[limitTable(size, true)+8*uint32(seg):], limit)
	}
}
