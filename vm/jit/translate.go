package jit

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// Linear memory layout (spec/jit.md, Memory). The control block and the
// tables sit below the stack; the segments an invocation maps are copied
// in from dynBase on, each on an 8-byte boundary.
const (
	ctlEntry  = 0  // u32: dispatch index of the entry block
	ctlBudget = 8  // u64: the machine's budget
	ctlArgs   = 16 // 5 × u64: r1–r5
	ctlKind   = 64 // u32: 0, or how the run ended in a fault (status*)
	ctlPC     = 68 // u32: slot of the fault or of the final exit
	ctlAddr   = 72 // u64: address of a memory fault
	ctlInfo   = 80 // u32: size | write<<8 | op<<9 of a memory fault
	ctlSteps  = 88 // u64: instructions executed

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
	lN      = 11 // instructions executed so far (flushed at block ends)
	lBudget = 12
	lA      = 13 // eBPF address of the access being made
	lT      = 14 // i64 scratch
	lBlk    = 15 // i32: block to dispatch to
	lDepth  = 16 // i32: call depth
	lH      = 17 // i32: segment index, then host address
	lF      = 18 // i32: frame address
	// lFirstCache is the first local of the segment caches (hostAddr):
	// i64 seg<<32, i64 window, i32 linear base for each.
	lFirstCache = 19
)

// Function indices: the imported helper, the fault recorder, run.
const (
	fnHelper = 0
	fnFault  = 1
	fnRun    = 2
)

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
	pending        int        // instructions of the current block not yet added to lN
	cur            int        // block being emitted
	extra          int        // structured constructs open inside the current block
	// selfLoop is set while emitting a block that jumps to its own start:
	// its code sits in a Wasm loop, the outermost construct of the block,
	// so that the jump is a br to the loop, not a trip through dispatch.
	selfLoop bool
	// inLoop marks the slots between a backward jump's target and the
	// jump, whose accesses get segment caches; sites counts those.
	inLoop []bool
	sites  int
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
	// Cranelift's SSA construction and compile time grow fast.
	t.dispatch = map[int]int{}
	addDispatch := func(slot int) {
		if _, ok := t.dispatch[slot]; !ok {
			t.dispatch[slot] = len(t.dispatchBlocks)
			t.dispatchBlocks = append(t.dispatchBlocks, t.index[slot])
		}
	}
	addDispatch(0)
	for _, e := range entries {
		addDispatch(e)
	}
	for slot, ins := range t.insns {
		if ins == nil {
			continue
		}
		target, ok := jumpTarget(ins, slot)
		switch {
		case !ok:
		case bytecode.RawOpcode(ins) == bytecode.OpCall: // local call
			addDispatch(target)
			addDispatch(slot + 1)
		case target < slot && t.blockStart(slot) != target:
			addDispatch(target) // backward, and not a block's jump to its own start
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
			{typ: 2, locals: runLocals(t.sites), body: t.c},
		},
		minPages:   1,
		exportName: "run", exportFunc: fnRun,
	}
	wasm, bodyAt := mod.encode()
	return &translation{wasm: wasm, bodyAt: bodyAt, slotAt: t.slotAt, blocks: t.blocks, index: t.index, dispatch: t.dispatch, slots: total,
		writes: writesMemory(t.insns), helpers: callsHelpers(t.insns), stackLow: stackLow(t.insns)}, nil
}

func runLocals(sites int) []byte {
	l := make([]byte, 0, lFirstCache+3*sites)
	for i := 0; i <= lT; i++ {
		l = append(l, wI64)
	}
	for i := lBlk; i <= lF; i++ {
		l = append(l, wI32)
	}
	for range sites {
		l = append(l, wI64, wI64, wI32)
	}
	return l
}

// faultBody records a fault: kind, pc, addr, info, steps.
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
	for r := 1; r <= 5; r++ {
		c.i32(0)
		c.mem(opI64Load, 3, uint32(ctlArgs+8*(r-1)))
		c.set(uint32(r))
	}
	c.i64(int64(vm.Addr(vm.SegStack, vm.StackBytes)))
	c.set(10)
	c.i32(0)
	c.mem(opI64Load, 3, ctlBudget)
	c.set(lBudget)
	c.i32(0)
	c.mem(opI32Load, 2, ctlEntry)
	c.set(lBlk)

	k := len(t.blocks)
	c.op(opLoop, blockTypeEmpty)
	for range k {
		c.op(opBlock, blockTypeEmpty)
	}
	c.get(lBlk)
	c.op(opBrTable)
	c.u32(uint32(len(t.dispatchBlocks)))
	for _, b := range t.dispatchBlocks {
		c.u32(uint32(b))
	}
	c.u32(uint32(t.dispatchBlocks[0])) // never taken: lBlk is always a table index
	for i, start := range t.blocks {
		c.op(opEnd)
		t.cur, t.extra, t.pending = i, 0, 0
		end := t.total + 1
		if i+1 < k {
			end = t.blocks[i+1]
		}
		if start == t.total {
			// Past the last slot: the interpreter's fell-off sentinel,
			// which counts as an instruction.
			t.pending = 1
			t.fault(vm.FaultFellOff, start)
			continue
		}
		t.selfLoop = jumpsTo(t.insns, start, end, start)
		if t.selfLoop {
			c.op(opLoop, blockTypeEmpty)
			t.extra = 1
		}
		terminated := false
		for slot := start; slot < end; slot++ {
			ins := t.insns[slot]
			if ins == nil {
				continue
			}
			t.slotAt = append(t.slotAt, codeSpan{offset: len(t.c), slot: slot})
			t.pending++
			var err error
			terminated, err = t.emit(ins, slot)
			if err != nil {
				return err
			}
		}
		if !terminated {
			t.flush()
		}
		if t.selfLoop {
			c.op(opEnd)
		}
	}
	c.op(opEnd) // loop
	c.op(opUnreachable)
	return nil
}

// flush adds the instructions counted so far to lN.
func (t *translator) flush() {
	if t.pending == 0 {
		return
	}
	t.c.get(lN)
	t.c.i64(int64(t.pending))
	t.c.op(opI64Add)
	t.c.set(lN)
	t.pending = 0
}

// steps pushes the instruction count including the pending ones.
func (t *translator) steps() {
	t.c.get(lN)
	if t.pending != 0 {
		t.c.i64(int64(t.pending))
		t.c.op(opI64Add)
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

// checkBudget faults at slot when lN (flushed) exceeds the budget.
func (t *translator) checkBudget(slot int) {
	c := &t.c
	c.get(lN)
	c.get(lBudget)
	c.op(opI64GtU)
	c.op(opIf, blockTypeEmpty)
	t.fault(vm.FaultBudget, slot)
	c.op(opEnd)
}

// goTo branches to the block starting at target: forward with br, backward
// (or to itself) through the dispatch loop.
func (t *translator) goTo(target int) {
	j := t.index[target]
	if j == t.cur && t.selfLoop {
		t.c.br(opBr, t.extra-1)
		return
	}
	if j > t.cur {
		t.c.br(opBr, t.extra+j-t.cur-1)
		return
	}
	t.c.i32(int32(t.dispatch[target]))
	t.c.set(lBlk)
	t.toDispatch()
}

// toDispatch branches to the dispatch loop with lBlk set.
func (t *translator) toDispatch() {
	t.c.br(opBr, t.extra+len(t.blocks)-1-t.cur)
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
		t.flush()
		t.checkBudget(slot)
		t.goTo(target)
		return true, nil
	case bytecode.OpExit:
		t.flush()
		t.checkBudget(slot)
		c.get(lDepth)
		c.op(opI32Eqz)
		c.op(opIf, blockTypeEmpty)
		c.i32(0)
		c.i32(int32(slot))
		c.mem(opI32Store, 2, ctlPC)
		c.i32(0)
		c.get(lN)
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
	t.flush()
	c.op(opIf, blockTypeEmpty)
	t.extra++
	t.checkBudget(slot)
	t.goTo(target)
	t.extra--
	c.op(opEnd)
	return false, nil
}

// condOps maps a conditional jump's operation (opcode >> 4) to its Wasm
// comparison.
var condOps = map[byte]struct {
	op64, op32 byte
	set        bool
}{
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

// jumpsTo reports whether a jump in slots [from, to) goes to target.
func jumpsTo(insns []*asm.Instruction, from, to, target int) bool {
	for slot := from; slot < to && slot < len(insns); slot++ {
		ins := insns[slot]
		if ins == nil {
			continue
		}
		if raw := bytecode.RawOpcode(ins); raw == bytecode.OpCall {
			continue // a local call enters a frame through dispatch
		}
		if tgt, ok := jumpTarget(ins, slot); ok && tgt == target {
			return true
		}
	}
	return false
}

// blockStart returns the first slot of the block holding slot.
func (t *translator) blockStart(slot int) int {
	i := sort.SearchInts(t.blocks, slot+1) - 1
	return t.blocks[i]
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
