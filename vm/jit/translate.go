package jit

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// Linear memory layout (spec/jit.md, Memory). The control block and the
// tables sit below the stack; from dynBase (rounded up to a page) on come
// the memories mapped in place, then the run's copies of other segments.
const (
	ctlEntry  = 0  // u32: dispatch index of the entry block
	ctlBudget = 8  // u64: the run's budget (runBudget)
	ctlArgs   = 16 // 2 × u64: r1, r2 (r3–r5 start at zero, as Wasm's locals do)
	ctlKind   = 64 // u32: 0, or how the run ended in a fault (status*)
	ctlPC     = 68 // u32: slot of the fault or of the final exit
	ctlAddr   = 72 // u64: address of a memory fault
	ctlInfo   = 80 // u32: size | write<<8 | op<<9 of a memory fault
	ctlSteps  = 88 // u64: the budget left (runBudget less the instructions executed)
	ctlBytes  = 96

	frameArea  = 256 // 8 × frameBytes: local-call frames
	frameBytes = 48  // return block (u32, padded), r6–r10
	// baseTable holds the host (linear) base of each segment, a u32 every
	// 8 bytes, so that one index, segment×8 = (a >> 29) & 0x7f8, serves it
	// and the limit tables.
	baseTable = 1024
	// limitTables holds 8 tables of 256 × u64, one per access size (1, 2,
	// 4, 8) for reads, then for writes: segment<<32 + length - (size-1),
	// the first address at which such an access no longer fits, or 0 where
	// it cannot be made at all (unmapped; read-only for writes).
	limitTables = 4096
	limitBytes  = 256 * 8
	stackBase   = limitTables + 8*limitBytes // vm.StackBytes of stack
	dynBase     = stackBase + vm.StackBytes
)

// limitTable returns the offset of the limit table for size-byte reads or
// writes.
func limitTable(size uint32, write bool) uint32 {
	var i uint32
	switch size {
	case 2:
		i = 1
	case 4:
		i = 2
	case 8:
		i = 3
	}
	if write {
		i += 4
	}
	return limitTables + i*limitBytes
}

// Fault statuses in ctlKind besides vm.FaultKind values.
const (
	statusMem = 100 // a load, store or atomic refused: ctlAddr, ctlInfo
)

// Memory operation kinds in ctlInfo.
const (
	infoLoad   = 0
	infoStore  = 1
	infoAtomic = 2
)

// Locals of the run function.
const (
	// lLeft is the budget left: runBudget less the instructions executed
	// so far (flushed at block ends). Counting down, one subtraction and
	// a sign test check the budget, and the budget needs no local of its
	// own.
	lLeft  = 11
	lA     = 12 // eBPF address of the access being made
	lT     = 13 // i64 scratch
	lBlk   = 14 // i32: block to dispatch to
	lDepth = 15 // i32: call depth
	lH     = 16 // i32: segment index, then host address
	lF     = 17 // i32: frame address
	lHost  = 18 // i32: host address of a cached access
	// lFirst is the first of the locals a translation adds as it needs
	// them (newLocal): segment caches, fast loops' guards and bases.
	lFirst = 19
)

// runBudget is the budget a run starts lLeft with: the machine's, but at
// most 2^62, so that lLeft turns negative, not around, when a run goes
// over it (no run executes 2^62 instructions).
func runBudget(budget uint64) uint64 { return min(budget, 1<<62) }

// Function indices: the imported helper, the fault recorder, run.
const (
	fnHelper = 0
	fnFault  = 1
	fnRun    = 2
)

// label is an open Wasm construct: the dispatch loop, a block whose end
// starts block's code, a structured loop headed by block, or (block -1)
// a construct no jump targets (if, else).
type label struct {
	block    int
	loop     bool
	dispatch bool
}

// push opens a construct; pop closes the innermost one.
func (t *translator) push(l label) { t.labels = append(t.labels, l) }

func (t *translator) pop() {
	t.c.op(opEnd)
	t.labels = t.labels[:len(t.labels)-1]
}

// translation is a program as a Wasm module.
type translation struct {
	wasm   []byte
	blocks []int       // first slot of each block, ascending
	index  map[int]int // slot → block index, for the blocks that start there
	// dispatch maps the slot of each block control can reach through the
	// dispatch loop (entries, backward jump targets, local-call targets
	// and return points) to its index in the loop's br_table.
	dispatch map[int]int
	slots    int
	// bodyAt is the module offset of run's body; slotAt lists, in code
	// order, the body offset where each instruction's code begins, so that
	// a trap's offset names its slot.
	bodyAt int
	slotAt []codeSpan
	// writes is false when no instruction can change memory outside the
	// stack: no store or atomic through a register other than r10, no
	// helper call. Then nothing needs copying back after a run.
	writes bool
	// helpers is set when the program calls helpers, which see memory
	// through the machine's segments: a run points those at its copies.
	helpers bool
	// stackLow is the lowest stack offset a run can write: checked runs
	// clear the stack from there up (the rest was never written).
	stackLow int
	// loops, fastLoops and guarded count the structured loops, the fast
	// copies and the accesses those make unchecked.
	loops, fastLoops, guarded int
}

// translator holds the state of one translation.
type translator struct {
	insns   []*asm.Instruction // by slot; nil for lddw's second slot
	total   int
	checked bool
	blocks  []int
	index   map[int]int
	// dispatch and dispatchBlocks: the br_table's targets (see
	// translation.dispatch), by slot and in table order as block indices.
	dispatch       map[int]int
	dispatchBlocks []int
	c              code
	slotAt         []codeSpan // see translation.slotAt
	pending        int        // instructions counted but not yet taken off lLeft
	// loops are the structured loops by header block (loops.go); fast
	// the plans of their fast copies, fastLoop the one being emitted
	// (fastloop.go).
	loops    map[int]loop
	fast     map[int]*fastLoop
	fastLoop *fastLoop
	// labels are the Wasm constructs open where code is being emitted,
	// innermost last, so that a branch finds its depth.
	labels []label
	err    error // a translator bug found while emitting
	// inLoop marks the slots between a backward jump's target and the
	// jump, whose accesses get segment caches; sites counts those.
	inLoop []bool
	sites  int
	locals []byte // types of the locals newLocal added
}

// translate turns insns, which vm.Load accepted, into a Wasm module. With
// checked set every memory access is checked against the segment table;
// without, accesses go straight to the segment's base (for programs the
// verifier accepted). entries are the slots runs may start at.
func translate(insns asm.Instructions, entries []int, checked bool) (*translation, error) {
	offsets, total := bytecode.Slots(insns)
	t := &translator{insns: make([]*asm.Instruction, total), total: total, checked: checked}
	for i := range insns {
		t.insns[offsets[i]] = &insns[i]
	}
	leaders := map[int]bool{0: true, total: true}
	for _, e := range entries {
		if e < 0 || e >= total || t.insns[e] == nil {
			return nil, fmt.Errorf("jit: entry point %d is not an instruction of a %d-slot program", e, total)
		}
		leaders[e] = true
	}
	for slot, ins := range t.insns {
		if ins == nil {
			continue
		}
		if target, ok := jumpTarget(ins, slot); ok {
			leaders[target] = true
			leaders[slot+1] = true
		}
		switch bytecode.RawOpcode(ins) {
		case bytecode.OpExit:
			leaders[slot+1] = true
		}
	}
	for s := range leaders {
		if s <= total {
			t.blocks = append(t.blocks, s)
		}
	}
	sort.Ints(t.blocks)
	t.index = make(map[int]int, len(t.blocks))
	for i, s := range t.blocks {
		t.index[s] = i
	}
	// Only blocks reached through the dispatch loop get a br_table entry:
	// an entry is an edge into the block, and thousands of them make
	// Cranelift's SSA construction and compile time grow fast. Loops
	// that can be Wasm loops are (loops.go); the back edges of the others
	// go through dispatch.
	base := append([]int{0}, entries...)
	for slot, ins := range t.insns {
		if ins != nil && bytecode.RawOpcode(ins) == bytecode.OpCall && ins.Src == bytecode.PseudoCall {
			target, _ := jumpTarget(ins, slot)
			base = append(base, target, slot+1)
		}
	}
	var targets []int
	t.loops, targets = t.findLoops(base)
	t.dispatch = map[int]int{}
	for _, slot := range targets {
		if _, ok := t.dispatch[slot]; !ok {
			t.dispatch[slot] = len(t.dispatchBlocks)
			t.dispatchBlocks = append(t.dispatchBlocks, t.index[slot])
		}
	}
	t.fast = map[int]*fastLoop{}
	for h, l := range t.loops {
		if f := t.findFast(l); f != nil {
			t.fast[h] = f
		}
	}
	t.inLoop = make([]bool, total+1)
	for slot, ins := range t.insns {
		if ins == nil || bytecode.RawOpcode(ins) == bytecode.OpCall {
			continue
		}
		if target, ok := jumpTarget(ins, slot); ok && target <= slot {
			for s := target; s <= slot; s++ {
				t.inLoop[s] = true
			}
		}
	}
	if err := t.emitRun(); err != nil {
		return nil, err
	}
	mod := moduleSpec{
		types: []funcType{
			{params: []byte{wI32, wI32, wI64, wI64, wI64, wI64, wI64, wI64}, results: []byte{wI64}}, // helper
			{params: []byte{wI32, wI32, wI64, wI32, wI64}},                                          // fault
			{results: []byte{wI64}}, // run
		},
		importMod: "naam", importName: "helper", importType: 0,
		funcs: []function{
			{typ: 1, body: faultBody()},
			{typ: 2, locals: t.runLocals(), body: t.c},
		},
		minPages:   1,
		exportName: "run", exportFunc: fnRun,
	}
	wasm, bodyAt := mod.encode()
	return &translation{wasm: wasm, bodyAt: bodyAt, slotAt: t.slotAt, blocks: t.blocks, index: t.index, dispatch: t.dispatch, slots: total,
		writes: writesMemory(t.insns), helpers: callsHelpers(t.insns), stackLow: stackLow(t.insns), loops: len(t.loops), fastLoops: len(t.fast), guarded: t.guarded()}, nil
}

// guarded counts the accesses the fast copies make unchecked.
func (t *translator) guarded() int {
	n := 0
	for _, f := range t.fast {
		n += len(f.site)
	}
	return n
}

// runLocals lists the run function's locals: the fixed ones, then those
// newLocal added.
func (t *translator) runLocals() []byte {
	l := make([]byte, 0, lFirst+len(t.locals))
	for i := 0; i <= lT; i++ {
		l = append(l, wI64)
	}
	for i := lBlk; i <= lHost; i++ {
		l = append(l, wI32)
	}
	return append(l, t.locals...)
}

// newLocal adds a local of type ty and returns its index.
func (t *translator) newLocal(ty byte) uint32 {
	t.locals = append(t.locals, ty)
	return uint32(lFirst + len(t.locals) - 1)
}

// faultBody records a fault: kind, pc, addr, info, budget left.
func faultBody() code {
	var c code
	c.i32(0)
	c.get(0)
	c.mem(opI32Store, 2, ctlKind)
	c.i32(0)
	c.get(1)
	c.mem(opI32Store, 2, ctlPC)
	c.i32(0)
	c.get(2)
	c.mem(opI64Store, 3, ctlAddr)
	c.i32(0)
	c.get(3)
	c.mem(opI32Store, 2, ctlInfo)
	c.i32(0)
	c.get(4)
	c.mem(opI64Store, 3, ctlSteps)
	return c
}

// jumpTarget returns the slot a jump or local call may go to.
func jumpTarget(ins *asm.Instruction, slot int) (int, bool) {
	raw := bytecode.RawOpcode(ins)
	class := asm.Class(raw & 7)
	if class != asm.JumpClass && class != asm.Jump32Class {
		return 0, false
	}
	switch raw {
	case bytecode.OpExit, bytecode.OpCallX:
		return 0, false
	case bytecode.OpJa32:
		return slot + 1 + int(ins.Constant), true
	case bytecode.OpCall:
		if ins.Src == bytecode.PseudoCall {
			return slot + 1 + int(ins.Constant), true
		}
		return 0, false
	}
	return slot + 1 + int(ins.Offset), true
}

func (t *translator) emitRun() error {
	c := &t.c
	for r := 1; r <= 2; r++ {
		c.i32(0)
		c.mem(opI64Load, 3, uint32(ctlArgs+8*(r-1)))
		c.set(uint32(r))
	}
	c.i64(int64(vm.Addr(vm.SegStack, vm.StackBytes)))
	c.set(10)
	c.i32(0)
	c.mem(opI64Load, 3, ctlBudget)
	c.set(lLeft)
	one := len(t.dispatchBlocks) == 1 // then every dispatch goes to slot 0
	if !one {
		c.i32(0)
		c.mem(opI32Load, 2, ctlEntry)
		c.set(lBlk)
	}

	c.op(opLoop, blockTypeEmpty)
	t.push(label{block: -1, dispatch: true})
	items := t.region(0, len(t.blocks)-1, -1)
	t.openLabels(items, 0)
	if one {
		// No table: a plain branch, no load of the entry, no indirect jump.
		d := t.depth(t.dispatchBlocks[0], false)
		if d < 0 {
			return fmt.Errorf("jit: internal error: dispatch target %d is not at the top level", t.blocks[t.dispatchBlocks[0]])
		}
		c.br(opBr, d)
	} else {
		c.get(lBlk)
		c.op(opBrTable)
		c.u32(uint32(len(t.dispatchBlocks)))
		for _, b := range append(t.dispatchBlocks, t.dispatchBlocks[0]) { // the default is never taken: lBlk is always a table index
			d := t.depth(b, false)
			if d < 0 {
				return fmt.Errorf("jit: internal error: dispatch target %d is not at the top level", t.blocks[b])
			}
			c.u32(uint32(d))
		}
	}
	if err := t.emitItems(items); err != nil {
		return err
	}
	t.pop() // the dispatch loop
	c.op(opUnreachable)
	return t.err
}

// openLabels opens a block for each of items[from:], the last outermost,
// so that the end of each starts the code of its item.
func (t *translator) openLabels(items []item, from int) {
	for n := len(items) - 1; n >= from; n-- {
		t.c.op(opBlock, blockTypeEmpty)
		t.push(label{block: items[n].block})
	}
}

// emitItems emits the items of a region whose labels are open: items[0]'s
// innermost when it has one (at the top level, for br_table), else
// items[1]'s.
func (t *translator) emitItems(items []item) error {
	for n, it := range items {
		if top := t.labels[len(t.labels)-1]; !top.loop && top.block == it.block {
			t.pop()
		} else if n > 0 {
			return fmt.Errorf("jit: internal error: no label for block %d", t.blocks[it.block])
		}
		if it.inner == nil {
			if err := t.emitBlock(it.block); err != nil {
				return err
			}
			continue
		}
		fl := t.fast[it.block]
		if fl != nil {
			t.emitGuards(fl)
		}
		t.c.op(opLoop, blockTypeEmpty)
		t.push(label{block: it.block, loop: true})
		if fl != nil {
			// The fast copy (fastloop.go), unless the budget left is below
			// the threshold.
			t.c.op(opBlock, blockTypeEmpty)
			t.push(label{block: -1})
			t.c.get(lLeft)
			t.c.get(fl.thresh)
			t.c.op(opI64LtS)
			t.c.br(opBrIf, 0)
			t.fastLoop = fl
			t.openLabels(it.inner, 1)
			err := t.emitItems(it.inner)
			t.fastLoop = nil
			if err != nil {
				return err
			}
			// Falling off the loop's last block leaves the loop.
			t.pending = 0
			t.goTo(t.blocks[t.loops[it.block].end+1])
			t.pop()
		}
		t.openLabels(it.inner, 1)
		if err := t.emitItems(it.inner); err != nil {
			return err
		}
		t.pop()
	}
	return nil
}

// emitBlock emits block i.
func (t *translator) emitBlock(i int) error {
	start := t.blocks[i]
	t.pending = t.carried(i)
	end := t.total + 1
	if i+1 < len(t.blocks) {
		end = t.blocks[i+1]
	}
	if start == t.total {
		// Past the last slot: the interpreter's fell-off sentinel, which
		// counts as an instruction.
		t.pending = 1
		t.fault(vm.FaultFellOff, start)
		return nil
	}
	terminated := false
	for slot := start; slot < end; slot++ {
		ins := t.insns[slot]
		if ins == nil {
			continue
		}
		t.slotAt = append(t.slotAt, codeSpan{offset: len(t.c), slot: slot})
		if f := t.fastLoop; f != nil {
			if sv, ok := f.saves[slot]; ok {
				t.c.get(reg(sv.reg))
				t.c.op(opI32WrapI64)
				t.c.set(sv.local)
			}
		}
		t.pending++
		var err error
		terminated, err = t.emit(ins, slot)
		if err != nil {
			return err
		}
	}
	if !terminated {
		t.flushTo(t.carried(i + 1))
	}
	return nil
}

// carried is how many instructions are counted but not yet taken off
// lLeft when block b starts: in a fast copy, the carry fastLoop.carry
// gives the blocks after its header; everywhere else none.
func (t *translator) carried(b int) int {
	if f := t.fastLoop; f != nil {
		return f.carry[b]
	}
	return 0
}

// flushTo takes the counted instructions off lLeft down to n still
// pending (the count a branch's target carries).
func (t *translator) flushTo(n int) {
	if t.pending < n {
		if t.err == nil {
			t.err = fmt.Errorf("jit: internal error: %d instructions pending where %d are carried", t.pending, n)
		}
		return
	}
	pending := t.pending - n
	t.pending = pending
	t.flush()
	t.pending = n
}

// depth returns the branch depth of the innermost open label that starts
// block b (a loop headed by b, when loop is set, or either), or -1.
func (t *translator) depth(b int, loop bool) int {
	for k := len(t.labels) - 1; k >= 0; k-- {
		if l := t.labels[k]; l.block == b && (l.loop || !loop) && !l.dispatch {
			return len(t.labels) - 1 - k
		}
	}
	return -1
}

// flush takes the instructions counted so far off lLeft.
func (t *translator) flush() {
	if t.pending == 0 {
		return
	}
	t.c.get(lLeft)
	t.c.i64(int64(t.pending))
	t.c.op(opI64Sub)
	t.c.set(lLeft)
	t.pending = 0
}

// steps pushes the budget left after the pending instructions too.
func (t *translator) steps() {
	t.c.get(lLeft)
	if t.pending != 0 {
		t.c.i64(int64(t.pending))
		t.c.op(opI64Sub)
	}
}

// fault records a fault of kind at slot and returns from run.
func (t *translator) fault(kind vm.FaultKind, slot int) {
	t.faultWith(int32(kind), slot, false, 0)
}

// faultWith records a fault, with the address in lA and info for memory
// faults, and returns.
func (t *translator) faultWith(kind int32, slot int, withAddr bool, info int32) {
	c := &t.c
	c.i32(kind)
	c.i32(int32(slot))
	if withAddr {
		c.get(lA)
	} else {
		c.i64(0)
	}
	c.i32(info)
	t.steps()
	c.op(opCall)
	c.u32(fnFault)
	c.i64(0)
	c.op(opReturn)
}

// checkBudget faults at slot when the run went over the budget with the
// pending instructions counted: lLeft < pending, so that the test needs
// no subtraction of its own.
func (t *translator) checkBudget(slot int) {
	c := &t.c
	c.get(lLeft)
	c.i64(int64(t.pending))
	c.op(opI64LtS)
	c.op(opIf, blockTypeEmpty)
	t.fault(vm.FaultBudget, slot)
	c.op(opEnd)
}

// takeJump checks the budget for a taken jump at slot (not in a fast
// loop's copy, which needs no check) and branches to target with the
// instructions so far counted but for those target carries, leaving the
// count as it was for the path that does not jump (a conditional jump's).
func (t *translator) takeJump(slot, target int) {
	if t.fastLoop == nil {
		t.checkBudget(slot)
	}
	pending := t.pending
	t.flushTo(t.carried(t.index[target]))
	t.goTo(target)
	t.pending = pending
}

// goTo branches to the block starting at target: with br where a label
// starts it (forward jumps, back edges of structured loops), else through
// the dispatch loop.
func (t *translator) goTo(target int) {
	if d := t.depth(t.index[target], false); d >= 0 {
		t.c.br(opBr, d)
		return
	}
	d, ok := t.dispatch[target]
	if !ok && t.err == nil {
		t.err = fmt.Errorf("jit: internal error: slot %d is reached through dispatch but has no entry", target)
	}
	t.c.i32(int32(d))
	t.c.set(lBlk)
	t.toDispatch()
}

// toDispatch branches to the dispatch loop with lBlk set.
func (t *translator) toDispatch() {
	t.c.br(opBr, len(t.labels)-1)
}

func reg(r asm.Register) uint32 { return uint32(r) }

// emit translates one instruction and reports whether it ends its block
// unconditionally.
func (t *translator) emit(ins *asm.Instruction, slot int) (bool, error) {
	raw := bytecode.RawOpcode(ins)
	class := asm.Class(raw & 7)
	switch class {
	case asm.ALU64Class, asm.ALUClass:
		return false, t.emitALU(ins, slot, raw, class == asm.ALU64Class)
	case asm.JumpClass, asm.Jump32Class:
		return t.emitJump(ins, slot, raw, class == asm.Jump32Class)
	case asm.LdClass:
		if raw != bytecode.OpLdDW {
			return false, &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported opcode %#02x", raw)}
		}
		v := uint64(ins.Constant)
		if ins.Src == bytecode.PseudoMapValue {
			v = vm.Addr(vm.RegionSegment(int(uint32(ins.Constant))), uint32(uint64(ins.Constant)>>32))
		}
		t.c.i64(int64(v))
		t.c.set(reg(ins.Dst))
		return false, nil
	case asm.LdXClass:
		size := sizeOf(raw)
		sx := raw&0xe0 == 0x80
		op := map[bool]map[uint32]byte{
			false: {1: opI64Load8U, 2: opI64Load16U, 4: opI64Load32U, 8: opI64Load},
			true:  {1: opI64Load8S, 2: opI64Load16S, 4: opI64Load32S},
		}[sx][size]
		if op == 0 {
			return false, &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported opcode %#02x", raw)}
		}
		t.hostAddr(ins.Src, ins.Offset, size, false, infoLoad, slot)
		t.c.mem(op, 0, 0)
		t.c.set(reg(ins.Dst))
		return false, nil
	case asm.StClass, asm.StXClass:
		size := sizeOf(raw)
		if class == asm.StXClass && raw&0xe0 != 0x60 {
			return false, t.emitAtomic(ins, slot, raw, size)
		}
		t.hostAddr(ins.Dst, ins.Offset, size, true, infoStore, slot)
		if class == asm.StClass {
			t.c.i64(ins.Constant)
		} else {
			t.c.get(reg(ins.Src))
		}
		t.c.mem(map[uint32]byte{1: opI64Store8, 2: opI64Store16, 4: opI64Store32, 8: opI64Store}[size], 0, 0)
		return false, nil
	}
	return false, &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported opcode %#02x", raw)}
}

func (t *translator) emitJump(ins *asm.Instruction, slot int, raw byte, jmp32 bool) (bool, error) {
	c := &t.c
	switch raw {
	case bytecode.OpJa, bytecode.OpJa32:
		target, _ := jumpTarget(ins, slot)
		t.takeJump(slot, target)
		return true, nil
	case bytecode.OpExit:
		t.flush()
		if t.fastLoop == nil {
			t.checkBudget(slot)
		}
		c.get(lDepth)
		c.op(opI32Eqz)
		c.op(opIf, blockTypeEmpty)
		c.i32(0)
		c.i32(int32(slot))
		c.mem(opI32Store, 2, ctlPC)
		c.i32(0)
		c.get(lLeft)
		c.mem(opI64Store, 3, ctlSteps)
		c.get(0)
		c.op(opReturn)
		c.op(opEnd)
		// Return from a local call: pop the frame.
		c.get(lDepth)
		c.i32(1)
		c.op(opI32Sub)
		c.tee(lDepth)
		c.i32(frameBytes)
		c.op(opI32Mul)
		c.set(lF)
		c.get(lF)
		c.mem(opI32Load, 2, frameArea)
		c.set(lBlk)
		for r := uint32(6); r <= 10; r++ {
			c.get(lF)
			c.mem(opI64Load, 3, frameArea+8*(r-5))
			c.set(r)
		}
		t.toDispatch()
		return true, nil
	case bytecode.OpCallX, bytecode.OpCall:
		if raw == bytecode.OpCall && ins.Src == bytecode.PseudoCall {
			return true, t.emitLocalCall(ins, slot)
		}
		if raw == bytecode.OpCallX {
			c.get(reg(ins.Dst))
			c.op(opI32WrapI64)
		} else {
			c.i32(int32(uint32(ins.Constant)))
		}
		c.i32(int32(slot))
		t.steps()
		for r := uint32(1); r <= 5; r++ {
			c.get(r)
		}
		c.op(opCall)
		c.u32(fnHelper)
		c.set(0)
		return false, nil
	}
	cond, ok := condOps[raw>>4]
	if !ok {
		return false, &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported jump opcode %#02x", raw)}
	}
	target, _ := jumpTarget(ins, slot)
	reg64 := raw&0x08 != 0
	// The jump ends its block, so both paths count the block's
	// instructions: taken off lLeft before the test, once, but for what
	// both the target and the next block carry.
	t.flushTo(max(t.carried(t.index[target]), t.carried(t.blockOf(slot)+1)))
	if t.fastLoop != nil && t.pending == t.carried(t.index[target]) {
		// A fast copy checks nothing at a taken jump: where a label starts
		// the target (a forward jump inside the loop, its back edge) and
		// the count is the one it carries, the jump is one br_if, which
		// Cranelift makes one conditional branch.
		if d := t.depth(t.index[target], false); d >= 0 {
			t.compare(ins, raw, jmp32, reg64, cond)
			c.br(opBrIf, d)
			return false, nil
		}
	}
	// block; br_if 0 when not taken; the jump; end: Cranelift lays the
	// jump's code right after the test, the path that does not jump past
	// it (with an if, it put a loop's back edge out of line, a taken
	// branch more on every iteration).
	c.op(opBlock, blockTypeEmpty)
	t.push(label{block: -1})
	t.compare(ins, raw, jmp32, reg64, cond)
	c.op(opI32Eqz)
	c.br(opBrIf, 0)
	t.takeJump(slot, target)
	t.pop()
	return false, nil
}

// compare pushes a conditional jump's test: 1 when it jumps.
func (t *translator) compare(ins *asm.Instruction, raw byte, jmp32, reg64 bool, cond condOp) {
	c := &t.c
	c.get(reg(ins.Dst))
	if jmp32 {
		c.op(opI32WrapI64)
	}
	switch {
	case reg64:
		c.get(reg(ins.Src))
		if jmp32 {
			c.op(opI32WrapI64)
		}
	case jmp32:
		c.i32(int32(ins.Constant))
	default:
		c.i64(ins.Constant)
	}
	if cond.set {
		if jmp32 {
			c.op(opI32And, opI32Eqz, opI32Eqz)
		} else {
			c.op(opI64And, opI64Eqz, opI32Eqz)
		}
	} else if jmp32 {
		c.op(cond.op32)
	} else {
		c.op(cond.op64)
	}
}

// condOp is a conditional jump's Wasm comparison, for 64 and 32 bits, or
// set for jset (a test of the and).
type condOp struct {
	op64, op32 byte
	set        bool
}

// condOps maps a conditional jump's operation (opcode >> 4) to its Wasm
// comparison.
var condOps = map[byte]condOp{
	0x1: {op64: opI64Eq, op32: opI32Eq},
	0x2: {op64: opI64GtU, op32: opI32GtU},
	0x3: {op64: opI64GeU, op32: opI32GeU},
	0x4: {set: true},
	0x5: {op64: opI64Ne, op32: opI32Ne},
	0x6: {op64: opI64GtS, op32: opI32GtS},
	0x7: {op64: opI64GeS, op32: opI32GeS},
	0xa: {op64: opI64LtU, op32: opI32LtU},
	0xb: {op64: opI64LeU, op32: opI32LeU},
	0xc: {op64: opI64LtS, op32: opI32LtS},
	0xd: {op64: opI64LeS, op32: opI32LeS},
}

func (t *translator) emitLocalCall(ins *asm.Instruction, slot int) error {
	c := &t.c
	target, _ := jumpTarget(ins, slot)
	t.flush()
	c.get(lDepth)
	c.i32(vm.MaxCallDepth - 1)
	c.op(opI32Eq)
	c.op(opIf, blockTypeEmpty)
	t.fault(vm.FaultCallDepth, slot)
	c.op(opEnd)
	c.get(lDepth)
	c.i32(frameBytes)
	c.op(opI32Mul)
	c.set(lF)
	c.get(lF)
	c.i32(int32(t.dispatch[slot+1]))
	c.mem(opI32Store, 2, frameArea)
	for r := uint32(6); r <= 10; r++ {
		c.get(lF)
		c.get(r)
		c.mem(opI64Store, 3, frameArea+8*(r-5))
	}
	c.get(lDepth)
	c.i32(1)
	c.op(opI32Add)
	c.set(lDepth)
	c.get(10)
	c.i64(vm.StackSize)
	c.op(opI64Sub)
	c.set(10)
	t.checkBudget(slot)
	c.i32(int32(t.dispatch[target]))
	c.set(lBlk)
	t.toDispatch()
	return nil
}

// codeSpan says that the code of slot begins at offset of run's body.
type codeSpan struct{ offset, slot int }

// slotOf returns the slot whose code holds module offset off, if any.
func (tr *translation) slotOf(off int) (int, bool) {
	rel := off - tr.bodyAt
	i := sort.Search(len(tr.slotAt), func(i int) bool { return tr.slotAt[i].offset > rel }) - 1
	if rel < 0 || i < 0 {
		return 0, false
	}
	return tr.slotAt[i].slot, true
}
