//go:build cgo

package jit

import (
	"encoding/binary"
	"errors"
	"fmt"
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
		engine = wasmtime.NewEngineWithConfig(cfg)
	})
	return engine
}

// Available reports whether the tier can run here: nil with cgo.
func Available() error { return nil }

// Code is a program compiled to machine code: immutable, shared by every
// Machine that runs it.
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
	start := time.Now()
	tr, err := translate(insns, append([]int{0}, opts.Entries...), !opts.Unchecked)
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
		WasmBytes: len(tr.wasm), Blocks: len(tr.blocks), Slots: tr.slots,
	}}, nil
}

// Close frees the machine code now instead of when the garbage collector
// finds c unreachable (wasmtime's memory is invisible to it). No machine
// may run c afterwards.
func (c *Code) Close() { c.module.Close() }

// Program returns the interpreter's form of the same program.
func (c *Code) Program() *vm.Program { return c.prog }

// Stats returns what compiling c took.
func (c *Code) Stats() Stats { return c.stats }

// Unchecked reports whether c was compiled without memory checks.
func (c *Code) Unchecked() bool { return c.opts.Unchecked }

// Machine is one core running compiled code: a vm.Machine (memory map,
// helpers, budget, the handler ABI) and a wasmtime store holding an
// instance, with its own linear memory, of each Code it has run. Not safe
// for concurrent use.
type Machine struct {
	vm        *vm.Machine
	store     *wasmtime.Store
	linker    *wasmtime.Linker
	instances map[*Code]*instance
	run       vm.RunFunc // m.runOn, bound once
	cur       *Code
	// helperErr and helperSteps record a helper's fault, which ends the
	// run as a trap.
	helperErr   error
	helperSteps uint64
	out         callOut        // a failed call's report, from callRun
	ctx         unsafe.Pointer // the store's context
}

type instance struct {
	run    *wasmtime.Func
	memory *wasmtime.Memory
	mem    []byte // the linear memory, refreshed after it grows
	mapped []mapping
}

// mapping is one segment copied into linear memory for a run.
type mapping struct {
	seg      vm.Segment
	off      int // in linear memory
	orig     []byte
	writable bool
}

// NewMachine returns a machine with opts (budget, helpers; Unchecked is
// the Code's business, not the machine's).
func NewMachine(opts vm.Options) (*Machine, error) {
	m := &Machine{vm: vm.NewMachine(opts), instances: map[*Code]*instance{}}
	m.store = wasmtime.NewStore(sharedEngine())
	m.ctx = storeContext(m.store)
	m.linker = wasmtime.NewLinker(sharedEngine())
	i32, i64 := wasmtime.NewValType(wasmtime.KindI32), wasmtime.NewValType(wasmtime.KindI64)
	ty := wasmtime.NewFuncType([]*wasmtime.ValType{i32, i32, i64, i64, i64, i64, i64, i64}, []*wasmtime.ValType{i64})
	if err := m.linker.FuncNew("naam", "helper", ty, m.helper); err != nil {
		return nil, err
	}
	m.run = m.runOn
	return m, nil
}

// helper serves the module's helper import: id, pc, steps, r1–r5.
func (m *Machine) helper(_ *wasmtime.Caller, args []wasmtime.Val) (res []wasmtime.Val, trap *wasmtime.Trap) {
	defer func() {
		// A panicking helper ends the run as the checked interpreter's
		// recover does, instead of unwinding through wasmtime.
		if r := recover(); r != nil {
			m.helperErr = &vm.Fault{Kind: vm.FaultInternal, PC: int(args[1].I32()), Err: fmt.Errorf("%v", r)}
			m.helperSteps = uint64(args[2].I64())
			res, trap = nil, wasmtime.NewTrap("helper panic")
		}
	}()
	v, err := m.vm.CallHelper(int(args[1].I32()), uint32(args[0].I32()),
		uint64(args[3].I64()), uint64(args[4].I64()), uint64(args[5].I64()), uint64(args[6].I64()), uint64(args[7].I64()))
	if err != nil {
		m.helperErr, m.helperSteps = err, uint64(args[2].I64())
		return nil, wasmtime.NewTrap("helper fault")
	}
	return []wasmtime.Val{wasmtime.ValI64(int64(v))}, nil
}

// Close frees the machine's store, with every instance and linear memory
// in it (each reserves gigabytes of address space for Wasm's guard
// pages), now instead of when the garbage collector finds the machine
// unreachable. The machine cannot run anything afterwards.
func (m *Machine) Close() {
	m.store.Close()
	m.instances = nil
}

// VM returns the machine's vm.Machine (memory map, options).
func (m *Machine) VM() *vm.Machine { return m.vm }

// Executed returns the instructions the last run executed.
func (m *Machine) Executed() uint64 { return m.vm.Executed() }

// RunRaw runs c in raw mode (vm.Machine.RunRaw's convention).
func (m *Machine) RunRaw(c *Code, mem []byte) (uint64, error) {
	m.cur = c
	return m.vm.RunRawWith(c.prog, mem, m.run)
}

// Invoke runs the handler at inv.Entry under the handler ABI
// (vm.Machine.Invoke's contract); inv.Entry must be slot 0 or one of the
// Entries c was compiled with.
func (m *Machine) Invoke(c *Code, inv *vm.Invocation) (vm.Result, error) {
	m.cur = c
	return m.vm.InvokeWith(c.prog, inv, m.run)
}

func (m *Machine) instance(c *Code) (*instance, error) {
	if in := m.instances[c]; in != nil {
		return in, nil
	}
	inst, err := m.linker.Instantiate(m.store, c.module)
	if err != nil {
		return nil, fmt.Errorf("jit: instantiate: %w", err)
	}
	in := &instance{run: inst.GetFunc(m.store, "run"), memory: inst.GetExport(m.store, "memory").Memory()}
	if in.run == nil || in.memory == nil {
		return nil, errors.New("jit: module lacks run or memory")
	}
	in.mem = in.memory.UnsafeData(m.store)
	// The stack's table entries never change.
	setLimits(in.mem, vm.SegStack, stackBase, vm.StackBytes, true)
	m.instances[c] = in
	return in, nil
}

// trapFrame finds the innermost frame's module offset in a trap message
// ("0:     0xe8 - <unknown>!<wasm function 2>").
var trapFrame = regexp.MustCompile(`(?m)^\s*0:\s+0x([0-9a-f]+) - `)

// maxLinear is the most linear memory a run may use: 4 GiB less a page.
const maxLinear = 1<<32 - 1<<16

// runOn is the vm.RunFunc of the tier: it copies the machine's mapped
// segments into the instance's linear memory, runs, copies the writable
// ones back and turns the outcome into r0 or a *vm.Fault.
func (m *Machine) runOn(vmm *vm.Machine, p *vm.Program, entry int, r1, r2 uint64) (uint64, error) {
	c := m.cur
	vmm.BeginRun()
	blk, ok := c.tr.dispatch[entry]
	if !ok || entry >= c.tr.slots {
		return 0, fmt.Errorf("jit: entry point %d is not an entry the code was compiled with", entry)
	}
	if c.opts.Unchecked {
		for i := range p.Regions() {
			if vmm.Segment(vm.RegionSegment(i)).Data == nil {
				return 0, fmt.Errorf("jit: the program addresses region %d, which is not mapped (unchecked runs need every region mapped)", i)
			}
		}
	}
	in, err := m.instance(c)
	if err != nil {
		return 0, err
	}
	if err := m.mapSegments(vmm, in); err != nil {
		m.unmapSegments(vmm, in, false) // nothing ran: restore the maps, copy nothing back
		return 0, err
	}
	mem := in.mem
	le := binary.LittleEndian
	le.PutUint32(mem[ctlEntry:], uint32(blk))
	le.PutUint64(mem[ctlBudget:], vmm.Budget())
	le.PutUint64(mem[ctlArgs:], r1)
	le.PutUint64(mem[ctlArgs+8:], r2)
	clear(mem[ctlArgs+16 : ctlArgs+40]) // r3–r5
	le.PutUint32(mem[ctlKind:], 0)
	if !c.opts.Unchecked {
		clear(mem[stackBase : stackBase+vm.StackBytes]) // as the checked interpreter does
	}
	m.helperErr = nil
	r0, callErr := callRun(m.store, m.ctx, in.run, &m.out)
	m.unmapSegments(vmm, in, c.tr.writes)

	if callErr != nil {
		if m.helperErr != nil {
			vmm.EndRun(m.helperSteps, 0)
			return 0, m.helperErr
		}
		vmm.EndRun(0, 0)
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
	steps := le.Uint64(mem[ctlSteps:])
	pc := int(le.Uint32(mem[ctlPC:]))
	kind := le.Uint32(mem[ctlKind:])
	vmm.EndRun(steps, pc)
	switch {
	case kind == 0:
		return uint64(r0), nil
	case kind == statusMem:
		info := le.Uint32(mem[ctlInfo:])
		op := [...]string{infoLoad: "load", infoStore: "store", infoAtomic: "atomic"}[info>>9&3]
		return 0, vmm.AccessFault(pc, le.Uint64(mem[ctlAddr:]), uint64(info&0xff), info>>8&1 != 0, op)
	case kind == uint32(vm.FaultMisaligned):
		info := le.Uint32(mem[ctlInfo:])
		return 0, vmm.MisalignedFault(pc, le.Uint64(mem[ctlAddr:]), uint64(info&0xff))
	default:
		return 0, &vm.Fault{Kind: vm.FaultKind(kind), PC: pc}
	}
}

// mapSegments copies every mapped segment but the stack into linear
// memory, fills the segment tables, and maps the copies into vmm so that
// helpers work on them.
func (m *Machine) mapSegments(vmm *vm.Machine, in *instance) error {
	for _, mp := range in.mapped {
		setLimits(in.mem, mp.seg, 0, 0, false)
	}
	in.mapped = in.mapped[:0]
	off := dynBase
	for seg := vm.SegContext; seg < vmm.MappedLimit(); seg++ {
		s := vmm.Segment(seg)
		if s.Data == nil {
			continue
		}
		in.mapped = append(in.mapped, mapping{seg: seg, off: off, orig: s.Data, writable: s.Writable})
		off += (len(s.Data) + 7) &^ 7
		if off > maxLinear {
			return fmt.Errorf("jit: the mapped segments need more than %d bytes of linear memory", maxLinear)
		}
	}
	if need := uint64(off); need > uint64(len(in.mem)) {
		pages := (need - uint64(len(in.mem)) + 1<<16 - 1) >> 16
		if _, err := in.memory.Grow(m.store, pages); err != nil {
			return fmt.Errorf("jit: grow linear memory: %w", err)
		}
		in.mem = in.memory.UnsafeData(m.store)
	}
	for _, mp := range in.mapped {
		n := len(mp.orig)
		copy(in.mem[mp.off:mp.off+n], mp.orig)
		setLimits(in.mem, mp.seg, mp.off, n, mp.writable)
		if _, err := vmm.Map(mp.seg, in.mem[mp.off:mp.off+n:mp.off+n], mp.writable); err != nil {
			return err
		}
	}
	return vmm.MapStack(in.mem[stackBase : stackBase+vm.StackBytes : stackBase+vm.StackBytes])
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

// unmapSegments copies the writable segments back, if the code can write
// them, and gives vmm its original mappings.
func (m *Machine) unmapSegments(vmm *vm.Machine, in *instance, writes bool) {
	for _, mp := range in.mapped {
		n := len(mp.orig)
		if mp.writable && writes {
			copy(mp.orig, in.mem[mp.off:mp.off+n])
		}
		vmm.Map(mp.seg, mp.orig, mp.writable)
	}
	vmm.UnmapStack()
}
