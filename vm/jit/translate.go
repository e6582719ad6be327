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

	baseTable  = 256  // 257 × u32: host (linear) base of each segment
	sizeTable  = 2048 // 257 × u64: readable bytes of each segment (0: unmapped)
	wsizeTable = 4608 // 257 × u64: writable bytes (0: unmapped or read-only)
	frameArea  = 7168 // 8 × frameBytes: local-call frames
	frameBytes = 48   // return block (u32, padded), r6–r10
	stackBase  = 8192 // vm.StackBytes of stack
	ctxBase    = stackBase + vm.StackBytes
	dynBase    = 16384

	// tableEntries covers segments 0–255 and entry 256, always unmapped,
	// where an address whose high half is 256 or more is looked up.
	tableEntries = 257
)

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
	// writes is false when no instruction can change memory outside the
	// stack: no store or atomic through a register other than r10, no
	// helper call. Then nothing needs copying back after a run.
	writes bool
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
	pending        int // instructions of the current block not yet added to lN
	cur            int // block being emitted
	extra          int // structured constructs open inside the current block
	// selfLoop is set while emitting a block that jumps to its own start:
	// its code sits in a Wasm loop, the outermost construct of the block,
	// so that the jump is a br to the loop, not a trip through dispatch.
	selfLoop bool
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
			{typ: 2, locals: runLocals(), body: t.c},
		},
		minPages:   1,
		exportName: "run", exportFunc: fnRun,
	}
	return &translation{wasm: mod.encode(), blocks: t.blocks, index: t.index, dispatch: t.dispatch, slots: total, writes: writesMemory(t.insns)}, nil
}

func runLocals() []byte {
	l := make([]byte, 0, lF+1)
	for i := 0; i <= lT; i++ {
		l = append(l, wI64)
	}
	for i := lBlk; i <= lF; i++ {
		l = append(l, wI32)
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

func sizeOf(raw byte) uint32 {
	return [4]uint32{4, 2, 1, 8}[(raw>>3)&3]
}

// hostAddr computes the access's eBPF address into lA and leaves its host
// (linear) address on the stack. Checked: an access outside its segment, or
// a write to a read-only one, faults at slot first.
func (t *translator) hostAddr(base asm.Register, off int16, size uint32, write bool, op int32, slot int) {
	c := &t.c
	if !t.checked && base == asm.R10 {
		// r10 is never written (bytecode.Validate), so it always points into
		// the stack: no segment lookup.
		c.get(10)
		c.op(opI32WrapI64)
		c.i32(int32(stackBase) + int32(off))
		c.op(opI32Add)
		return
	}
	c.get(reg(base))
	if off != 0 {
		c.i64(int64(off))
		c.op(opI64Add)
	}
	c.set(lA)
	if !t.checked {
		c.get(lA)
		c.i64(32)
		c.op(opI64ShrU)
		c.op(opI32WrapI64)
		c.i32(255)
		c.op(opI32And)
		c.i32(2)
		c.op(opI32Shl)
		c.mem(opI32Load, 2, baseTable)
		c.get(lA)
		c.op(opI32WrapI64)
		c.op(opI32Add)
		return
	}
	// idx = min(a >> 32, 256)
	c.get(lA)
	c.i64(32)
	c.op(opI64ShrU)
	c.tee(lT)
	c.i64(256)
	c.get(lT)
	c.i64(256)
	c.op(opI64LtU)
	c.op(opSelect)
	c.op(opI32WrapI64)
	c.set(lH)
	// (a & 0xffffffff) + size > table[idx]: fault
	c.get(lA)
	c.i64(0xffffffff)
	c.op(opI64And)
	c.i64(int64(size))
	c.op(opI64Add)
	c.get(lH)
	c.i32(3)
	c.op(opI32Shl)
	table := uint32(sizeTable)
	if write {
		table = wsizeTable
	}
	c.mem(opI64Load, 3, table)
	c.op(opI64GtU)
	c.op(opIf, blockTypeEmpty)
	t.faultWith(statusMem, slot, true, int32(size)|int32(b2i(write))<<8|op<<9)
	c.op(opEnd)
	if op == infoAtomic {
		c.get(lA)
		c.i64(int64(size - 1))
		c.op(opI64And)
		c.op(opI64Eqz)
		c.op(opI32Eqz)
		c.op(opIf, blockTypeEmpty)
		t.faultWith(int32(vm.FaultMisaligned), slot, true, int32(size)|1<<8|op<<9)
		c.op(opEnd)
	}
	c.get(lH)
	c.i32(2)
	c.op(opI32Shl)
	c.mem(opI32Load, 2, baseTable)
	c.get(lA)
	c.op(opI32WrapI64)
	c.op(opI32Add)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (t *translator) emitAtomic(ins *asm.Instruction, slot int, raw byte, size uint32) error {
	c := &t.c
	dw := raw == bytecode.OpAtomDW
	if !dw && raw != bytecode.OpAtomW {
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported opcode %#02x", raw)}
	}
	pick := func(w, d byte) byte {
		if dw {
			return d
		}
		return w
	}
	var op byte
	fetch := true
	switch ins.OpCode.AtomicOp() {
	case asm.AddAtomic:
		op, fetch = pick(atomI32RmwAdd, atomI64RmwAdd), false
	case asm.OrAtomic:
		op, fetch = pick(atomI32RmwOr, atomI64RmwOr), false
	case asm.AndAtomic:
		op, fetch = pick(atomI32RmwAnd, atomI64RmwAnd), false
	case asm.XorAtomic:
		op, fetch = pick(atomI32RmwXor, atomI64RmwXor), false
	case asm.FetchAdd:
		op = pick(atomI32RmwAdd, atomI64RmwAdd)
	case asm.FetchOr:
		op = pick(atomI32RmwOr, atomI64RmwOr)
	case asm.FetchAnd:
		op = pick(atomI32RmwAnd, atomI64RmwAnd)
	case asm.FetchXor:
		op = pick(atomI32RmwXor, atomI64RmwXor)
	case asm.Xchg:
		op = pick(atomI32RmwXchg, atomI64RmwXchg)
	case asm.CmpXchg:
		op = pick(atomI32RmwCmpxchg, atomI64RmwCmpxchg)
	default:
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported atomic %#x", uint32(ins.OpCode.AtomicOp()))}
	}
	align := uint32(2)
	if dw {
		align = 3
	}
	t.hostAddr(ins.Dst, ins.Offset, size, true, infoAtomic, slot)
	src := reg(ins.Src)
	if op == atomI32RmwCmpxchg || op == atomI64RmwCmpxchg {
		// cmpxchg: compare with r0, store src, old value to r0.
		c.get(0)
		if !dw {
			c.op(opI32WrapI64)
		}
		c.get(src)
		if !dw {
			c.op(opI32WrapI64)
		}
		c.atomic(op, align)
		if !dw {
			c.op(opI64ExtendI32U)
		}
		c.set(0)
		return nil
	}
	c.get(src)
	if !dw {
		c.op(opI32WrapI64)
	}
	c.atomic(op, align)
	if !dw {
		c.op(opI64ExtendI32U)
	}
	if fetch {
		c.set(src)
	} else {
		c.op(0x1a) // drop
	}
	return nil
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

// emitALU translates an ALU or ALU64 instruction with the semantics of
// spec/vm.md: 32-bit results zero-extended, shift counts masked (Wasm masks
// them the same way), division by zero 0, modulo by zero dst unchanged,
// INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0.
func (t *translator) emitALU(ins *asm.Instruction, slot int, raw byte, alu64 bool) error {
	c := &t.c
	d := reg(ins.Dst)
	regSrc := raw&0x08 != 0
	imm := ins.Constant
	// src pushes the source operand at the operation's width.
	src := func() {
		switch {
		case regSrc && alu64:
			c.get(reg(ins.Src))
		case regSrc:
			c.get(reg(ins.Src))
			c.op(opI32WrapI64)
		case alu64:
			c.i64(imm)
		default:
			c.i32(int32(imm))
		}
	}
	// dst pushes dst at the operation's width.
	dst := func() {
		c.get(d)
		if !alu64 {
			c.op(opI32WrapI64)
		}
	}
	// store writes the result back, zero-extending a 32-bit one.
	store := func() {
		if !alu64 {
			c.op(opI64ExtendI32U)
		}
		c.set(d)
	}
	w := func(op64, op32 byte) byte {
		if alu64 {
			return op64
		}
		return op32
	}
	binary := func(op64, op32 byte) {
		dst()
		src()
		c.op(w(op64, op32))
		store()
	}
	// srcIsZero pushes src == 0 (register forms only).
	srcIs := func(v int64) {
		src()
		if alu64 {
			c.i64(v)
			c.op(opI64Eq)
		} else {
			c.i32(int32(v))
			c.op(opI32Eq)
		}
	}
	resultType := w(blockTypeI64, wI32)
	switch ins.OpCode.ALUOp() {
	case asm.Add:
		binary(opI64Add, opI32Add)
	case asm.Sub:
		binary(opI64Sub, opI32Sub)
	case asm.Mul:
		binary(opI64Mul, opI32Mul)
	case asm.Or:
		binary(opI64Or, opI32Or)
	case asm.And:
		binary(opI64And, opI32And)
	case asm.Xor:
		binary(opI64Xor, opI32Xor)
	case asm.LSh:
		binary(opI64Shl, opI32Shl)
	case asm.RSh:
		binary(opI64ShrU, opI32ShrU)
	case asm.ArSh:
		binary(opI64ShrS, opI32ShrS)
	case asm.Mov:
		src()
		store()
	case asm.Neg:
		if alu64 {
			c.i64(0)
		} else {
			c.i32(0)
		}
		dst()
		c.op(w(opI64Sub, opI32Sub))
		store()
	case asm.Div, asm.SDiv:
		signed := ins.OpCode.ALUOp() == asm.SDiv
		div := w(opI64DivU, opI32DivU)
		if signed {
			div = w(opI64DivS, opI32DivS)
		}
		negate := func() {
			if alu64 {
				c.i64(0)
			} else {
				c.i32(0)
			}
			dst()
			c.op(w(opI64Sub, opI32Sub))
		}
		if !regSrc {
			switch {
			case alu64 && imm == 0, !alu64 && int32(imm) == 0:
				c.i64(0)
				c.set(d)
			case signed && (alu64 && imm == -1 || !alu64 && int32(imm) == -1):
				negate()
				store()
			default:
				binary(div, div)
			}
			return nil
		}
		// src == 0 ? 0 : (signed && src == -1 ? -dst : dst / src)
		srcIs(0)
		c.op(opIf, resultType)
		if alu64 {
			c.i64(0)
		} else {
			c.i32(0)
		}
		c.op(opElse)
		if signed {
			srcIs(-1)
			c.op(opIf, resultType)
			negate()
			c.op(opElse)
			dst()
			src()
			c.op(div)
			c.op(opEnd)
		} else {
			dst()
			src()
			c.op(div)
		}
		c.op(opEnd)
		store()
	case asm.Mod, asm.SMod:
		rem := w(opI64RemU, opI32RemU)
		if ins.OpCode.ALUOp() == asm.SMod {
			rem = w(opI64RemS, opI32RemS) // Wasm's rem_s of INT_MIN by -1 is 0
		}
		if !regSrc {
			if alu64 && imm == 0 || !alu64 && int32(imm) == 0 {
				if !alu64 { // dst unchanged, upper half zeroed
					dst()
					store()
				}
				return nil
			}
			binary(rem, rem)
			return nil
		}
		srcIs(0)
		c.op(opIf, resultType)
		dst()
		c.op(opElse)
		dst()
		src()
		c.op(rem)
		c.op(opEnd)
		store()
	case asm.MovSX8, asm.MovSX16, asm.MovSX32:
		c.get(reg(ins.Src))
		switch op := ins.OpCode.ALUOp(); {
		case op == asm.MovSX32 && alu64:
			c.op(opI64Extend32S)
		case op == asm.MovSX32:
			return &bytecode.InsnError{Insn: slot, Msg: "jit: movsx32 needs ALU64"}
		case alu64 && op == asm.MovSX8:
			c.op(opI64Extend8S)
		case alu64:
			c.op(opI64Extend16S)
		case op == asm.MovSX8:
			c.op(opI32WrapI64, opI32Extend8S)
		default:
			c.op(opI32WrapI64, opI32Extend16S)
		}
		store()
	case asm.Swap:
		return t.emitSwap(ins, slot, raw, alu64)
	default:
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported ALU operation %#x", uint32(ins.OpCode.ALUOp()))}
	}
	return nil
}

// emitSwap translates le (truncate), be (byte swap on a little-endian
// model) and bswap (ALU64, unconditional).
func (t *translator) emitSwap(ins *asm.Instruction, slot int, raw byte, alu64 bool) error {
	c := &t.c
	d := reg(ins.Dst)
	swap := alu64 || raw&0x08 != 0
	width := ins.Constant
	if width != 16 && width != 32 && width != 64 {
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: byte swap width %d", width)}
	}
	if !swap {
		if width < 64 {
			c.get(d)
			c.i64(int64(uint64(1)<<width - 1))
			c.op(opI64And)
			c.set(d)
		}
		return nil
	}
	switch width {
	case 16: // (x & 0xff) << 8 | (x >> 8) & 0xff
		c.get(d)
		c.i64(0xff)
		c.op(opI64And)
		c.i64(8)
		c.op(opI64Shl)
		c.get(d)
		c.i64(8)
		c.op(opI64ShrU)
		c.i64(0xff)
		c.op(opI64And)
		c.op(opI64Or)
		c.set(d)
	case 32:
		c.get(d)
		c.op(opI32WrapI64)
		bswap32(c)
		c.op(opI64ExtendI32U)
		c.set(d)
	case 64: // two 32-bit swaps, halves exchanged
		c.get(d)
		c.op(opI32WrapI64)
		bswap32(c)
		c.op(opI64ExtendI32U)
		c.i64(32)
		c.op(opI64Shl)
		c.get(d)
		c.i64(32)
		c.op(opI64ShrU)
		c.op(opI32WrapI64)
		bswap32(c)
		c.op(opI64ExtendI32U)
		c.op(opI64Or)
		c.set(d)
	}
	return nil
}

// bswap32 swaps the bytes of the i32 on the stack, through lH:
// rotl(x, 8) & 0x00ff00ff | rotr(x, 8) & 0xff00ff00.
func bswap32(c *code) {
	c.tee(lH)
	c.i32(8)
	c.op(opI32Rotl)
	c.i32(0x00ff00ff)
	c.op(opI32And)
	c.get(lH)
	c.i32(8)
	c.op(opI32Rotr)
	c.i32(-0x00ff0100) // 0xff00ff00
	c.op(opI32And)
	c.op(opI32Or)
}

// writesMemory reports whether an instruction may write memory outside
// the stack.
func writesMemory(insns []*asm.Instruction) bool {
	for _, ins := range insns {
		if ins == nil {
			continue
		}
		raw := bytecode.RawOpcode(ins)
		switch class := asm.Class(raw & 7); {
		case (class == asm.StClass || class == asm.StXClass) && ins.Dst != asm.R10:
			return true
		case raw == bytecode.OpCall && ins.Src != bytecode.PseudoCall, raw == bytecode.OpCallX:
			return true
		}
	}
	return false
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
