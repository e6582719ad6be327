package testprog

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/internal/bench/benchprog"
)

// Memory layout of a Random program. The prologue loads registers and the
// stack area from memory; the epilogue stores r0–r9 and the stack area back,
// so one memory comparison covers every register and every stack byte the
// body could have changed.
const (
	RandomRegsOffset  = 0   // r0–r9 at the end, 8 bytes each, little-endian
	RandomStackOffset = 80  // the body's stack area, r10-136 up to r10-8
	RandomStackSize   = 128 // bytes of stack area
	RandomMemSize     = RandomStackOffset + RandomStackSize
)

// The main body's frame: r10-8 holds the memory pointer, the area below it
// is the body's, and r10-144 is the epilogue's scratch slot. A subprogram
// uses the 64 bytes at the top of its own frame. Both stay far inside the
// kernel's 512-byte limit for the whole call chain.
const (
	ptrSlot     = -8
	mainAreaLo  = ptrSlot - RandomStackSize // -136
	scratchSlot = mainAreaLo - 8            // -144
	subAreaLo   = -64
	subSymbol   = "sub"
)

// RandomOptions configure Random. The zero value generates programs that
// the Linux verifier accepts, with bpf-to-bpf calls, of up to 48 body
// instructions.
type RandomOptions struct {
	// MaxInsns bounds the main body (between prologue and epilogue), which
	// has 1 to MaxInsns generated instructions. 0 means 48.
	MaxInsns int
	// VMOnly also generates what RFC 9669 defines but the kernel verifier
	// refuses: division and modulo by an immediate zero, and shifts by an
	// immediate of at least the operand width.
	VMOnly bool
	// NoCalls leaves out the subprogram and bpf-to-bpf calls.
	NoCalls bool
}

// Random generates a loop-free program for differential testing: random
// straight-line code with forward conditional jumps, if/else diamonds
// joined by ja or gotol, and calls to a generated subprogram. It uses every
// ALU64 and ALU32 operation in immediate and register form (constants biased
// toward 0, ±1, INT_MIN, INT_MAX and other edges, and division set up for
// INT_MIN/-1 and zero divisors), byte swaps, lddw, loads and stores of
// every size including sign-extending loads, and every atomic in 32 and 64
// bits, all on the stack.
//
// Memory is RandomMemSize bytes laid out as RandomRegsOffset and
// RandomStackOffset say. The prologue saves r1, copies the stack area in
// from memory and initialises r0–r9, each from memory or from a constant
// (constants the verifier knows, memory values it does not); the epilogue
// writes r0–r9 and the stack area back and returns the final r0. Stack
// accesses are naturally aligned and only touch initialised bytes, and
// every instruction is reachable, as the kernel verifier demands.
//
// Unless opts.VMOnly is set, Random also steers around two bugs of Linux
// 6.18's verifier that would otherwise show up as disagreements (see
// atomic and fetchSlot): it clears r0's upper half before a 32-bit
// cmpxchg, and it points fetching atomics only at stack the body has not
// stored to.
//
// The same rng state gives the same program.
func Random(rng *rand.Rand, opts RandomOptions) benchprog.Program {
	if opts.MaxInsns <= 0 {
		opts.MaxInsns = 48
	}
	g := &generator{rng: rng, opts: opts}
	mem := g.initialMemory()

	g.hasSub = !opts.NoCalls && rng.IntN(3) == 0
	g.mainPrologue(mem)
	g.areaLo, g.areaSize = mainAreaLo, RandomStackSize
	g.block(1+rng.IntN(opts.MaxInsns), g.hasSub)
	if g.hasSub && g.calls == 0 {
		g.call() // an uncalled subprogram would be unreachable code
	}
	g.flush()
	g.mainEpilogue()
	if g.hasSub {
		g.subprogram()
	}
	return benchprog.Program{
		Name:    "random",
		Insns:   benchprog.Resolve(g.finish()),
		MemSize: RandomMemSize,
		Mem:     func() []byte { return append([]byte(nil), mem...) },
	}
}

type generator struct {
	rng   *rand.Rand
	opts  RandomOptions
	insns asm.Instructions

	labelAt []int          // label id → index of the instruction it names, or -1
	pending []pendingLabel // forward jumps not yet placed

	areaLo, areaSize int16 // the current function's stack area
	stored           [RandomStackSize / 8]bool
	hasSub           bool
	calls            int
	inSub            bool
}

// pendingLabel is the target of a forward jump that lands after left more
// instructions have been emitted.
type pendingLabel struct{ id, left int }

// emit appends ins as one group: forward jumps may land before it or after
// it, never inside it.
func (g *generator) emit(ins ...asm.Instruction) {
	g.bindPending(false)
	g.insns = append(g.insns, ins...)
	for i := range g.pending {
		g.pending[i].left -= len(ins)
	}
}

// bindPending binds the pending labels that are due (all of them if flush)
// to the next instruction.
func (g *generator) bindPending(flush bool) {
	kept := g.pending[:0]
	for _, p := range g.pending {
		if flush || p.left <= 0 {
			g.labelAt[p.id] = len(g.insns)
		} else {
			kept = append(kept, p)
		}
	}
	g.pending = kept
}

// flush lands every pending forward jump on the next instruction: jumps
// never cross a function's end.
func (g *generator) flush() { g.bindPending(true) }

func (g *generator) newLabel() int {
	g.labelAt = append(g.labelAt, -1)
	return len(g.labelAt) - 1
}

func (g *generator) bind(id int) { g.labelAt[id] = len(g.insns) }

func labelName(id int) string { return fmt.Sprintf("L%d", id) }

// finish names every jump target by the index of its instruction and
// points each jump at that name, since an instruction holds one symbol.
func (g *generator) finish() asm.Instructions {
	out := append(asm.Instructions(nil), g.insns...)
	for i, ins := range out {
		ref := ins.Reference()
		if ref == "" || ref == subSymbol {
			continue
		}
		var id int
		if _, err := fmt.Sscanf(ref, "L%d", &id); err != nil {
			panic("testprog: bad label " + ref)
		}
		at := g.labelAt[id]
		sym := out[at].Symbol()
		if sym == "" {
			sym = fmt.Sprintf("P%d", at)
			out[at] = out[at].WithSymbol(sym)
		}
		out[i] = ins.WithReference(sym)
	}
	return out
}

// Constants, biased toward the values where implementations disagree.
var (
	edges32 = []int32{
		0, 1, -1, 2, -2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64,
		0x7f, -0x80, 0xff, 0x7fff, -0x8000, 0xffff, 0x10000,
		0x7fffffff, -0x80000000, -0x7fffffff, 0x55555555, -0x55555556,
	}
	edges64 = []uint64{
		0, 1, ^uint64(0), 2, ^uint64(1), 0x7f, 0x80, 0xff, 0x7fff, 0x8000, 0xffff,
		0x7fffffff, 0x80000000, 0xffffffff, 0x100000000, 0xffffffff80000000,
		0x7fffffffffffffff, 0x8000000000000000, 0x8000000000000001,
		0x00000000ffff8000, 0xffffffff00000000, 0x5555555555555555, 0xaaaaaaaaaaaaaaaa,
	}
)

func (g *generator) imm32() int32 {
	if g.rng.IntN(4) == 0 {
		return int32(g.rng.Uint32())
	}
	return edges32[g.rng.IntN(len(edges32))]
}

func (g *generator) value64() uint64 {
	switch g.rng.IntN(8) {
	case 0, 1:
		return g.rng.Uint64()
	case 2:
		return uint64(int64(g.imm32()))
	case 3:
		return uint64(uint32(g.imm32()))
	}
	return edges64[g.rng.IntN(len(edges64))]
}

func (g *generator) reg() asm.Register { return asm.Register(g.rng.IntN(10)) }

func (g *generator) initialMemory() []byte {
	mem := make([]byte, RandomMemSize)
	for off := 0; off < RandomMemSize; off += 8 {
		binary.LittleEndian.PutUint64(mem[off:], g.value64())
	}
	return mem
}

// mainPrologue saves the memory pointer, copies the stack area in and
// initialises r0–r9, r1 last because it is the pointer.
func (g *generator) mainPrologue(mem []byte) {
	g.emit(asm.StoreMem(asm.R10, ptrSlot, asm.R1, asm.DWord))
	for off := int16(0); off < RandomStackSize; off += 8 {
		g.emit(
			asm.LoadMem(asm.R0, asm.R1, RandomStackOffset+off, asm.DWord),
			asm.StoreMem(asm.R10, mainAreaLo+off, asm.R0, asm.DWord),
		)
	}
	for _, r := range []asm.Register{asm.R0, asm.R2, asm.R3, asm.R4, asm.R5, asm.R6, asm.R7, asm.R8, asm.R9, asm.R1} {
		if g.rng.IntN(2) == 0 {
			g.emit(asm.LoadMem(r, asm.R1, int16(RandomRegsOffset+8*r), asm.DWord))
		} else {
			g.constant(r)
		}
	}
}

// constant sets r to a constant the verifier knows.
func (g *generator) constant(r asm.Register) {
	switch g.rng.IntN(3) {
	case 0:
		g.emit(asm.Mov.Imm(r, g.imm32()))
	case 1:
		g.emit(asm.Mov.Imm32(r, g.imm32()))
	default:
		g.emit(asm.LoadImm(r, int64(g.value64()), asm.DWord))
	}
}

// mainEpilogue stores r0–r9 and the stack area to memory and returns r0.
func (g *generator) mainEpilogue() {
	g.emit(
		asm.StoreMem(asm.R10, scratchSlot, asm.R9, asm.DWord),
		asm.LoadMem(asm.R9, asm.R10, ptrSlot, asm.DWord),
	)
	for r := asm.R0; r <= asm.R8; r++ {
		g.emit(asm.StoreMem(asm.R9, int16(RandomRegsOffset+8*r), r, asm.DWord))
	}
	g.emit(
		asm.LoadMem(asm.R0, asm.R10, scratchSlot, asm.DWord),
		asm.StoreMem(asm.R9, RandomRegsOffset+8*9, asm.R0, asm.DWord),
	)
	for off := int16(0); off < RandomStackSize; off += 8 {
		g.emit(
			asm.LoadMem(asm.R0, asm.R10, mainAreaLo+off, asm.DWord),
			asm.StoreMem(asm.R9, RandomStackOffset+off, asm.R0, asm.DWord),
		)
	}
	g.emit(asm.LoadMem(asm.R0, asm.R9, RandomRegsOffset, asm.DWord), asm.Return())
}

// subprogram emits the callee: in the kernel it starts with only r1–r5 and
// an uninitialised frame, so it sets r0, r6–r9 and its stack area first.
func (g *generator) subprogram() {
	g.inSub = true
	g.areaLo, g.areaSize = subAreaLo, -subAreaLo
	for i := range g.stored {
		g.stored[i] = true // initialised below with stores
	}
	first := len(g.insns)
	for _, r := range []asm.Register{asm.R0, asm.R6, asm.R7, asm.R8, asm.R9} {
		if g.rng.IntN(2) == 0 {
			g.emit(asm.Mov.Reg(r, asm.R1+asm.Register(g.rng.IntN(5))))
		} else {
			g.constant(r)
		}
	}
	g.insns[first] = g.insns[first].WithSymbol(subSymbol)
	for off := g.areaLo; off < 0; off += 8 {
		if g.rng.IntN(2) == 0 {
			g.emit(asm.StoreMem(asm.R10, off, g.reg(), asm.DWord))
		} else {
			g.emit(storeImm(asm.R10, off, g.imm32(), asm.DWord))
		}
	}
	g.block(1+g.rng.IntN(max(g.opts.MaxInsns/2, 1)), false)
	g.flush()
	g.emit(asm.Return())
}

// block emits about n instructions of random code.
func (g *generator) block(n int, calls bool) {
	for i := 0; i < n; {
		switch w := g.rng.IntN(100); {
		case w < 38:
			g.alu()
		case w < 46:
			g.unary()
		case w < 50:
			g.emit(asm.LoadImm(g.reg(), int64(g.value64()), asm.DWord))
		case w < 58:
			g.store()
		case w < 66:
			g.load()
		case w < 74:
			g.atomic()
		case w < 86:
			g.forwardJump()
		case w < 94 && n-i >= 3:
			i += g.diamond(n - i)
			continue
		case w < 97 && calls:
			g.call()
			i += 6
			continue
		default:
			g.alu()
		}
		i++
	}
}

var aluOps = []asm.ALUOp{
	asm.Add, asm.Sub, asm.Mul, asm.Div, asm.SDiv, asm.Or, asm.And,
	asm.LSh, asm.RSh, asm.Mod, asm.SMod, asm.Xor, asm.Mov, asm.ArSh,
}

func (g *generator) alu() {
	op := aluOps[g.rng.IntN(len(aluOps))]
	alu64 := g.rng.IntN(2) == 0
	dst := g.reg()
	width := int32(32)
	if alu64 {
		width = 64
	}
	isDiv := op == asm.Div || op == asm.SDiv || op == asm.Mod || op == asm.SMod
	if g.rng.IntN(2) == 0 {
		src := g.reg()
		if isDiv && g.rng.IntN(4) == 0 {
			g.divEdge(dst, src, alu64)
		}
		if alu64 {
			g.emit(op.Reg(dst, src))
		} else {
			g.emit(op.Reg32(dst, src))
		}
		return
	}
	imm := g.imm32()
	switch {
	case (op == asm.LSh || op == asm.RSh || op == asm.ArSh) && !g.opts.VMOnly:
		imm = g.rng.Int32N(width) // the kernel refuses larger immediate shifts
	case isDiv && imm == 0 && !g.opts.VMOnly:
		imm = -1 // and division by an immediate zero
	case isDiv && g.rng.IntN(4) == 0:
		g.divEdge(dst, asm.R10, alu64)
		imm = -1
	}
	if alu64 {
		g.emit(op.Imm(dst, imm))
	} else {
		g.emit(op.Imm32(dst, imm))
	}
}

// divEdge sets dst to INT_MIN of the width and src (unless it is dst or
// r10) to -1 or 0: the cases that trap on real hardware.
func (g *generator) divEdge(dst, src asm.Register, alu64 bool) {
	if alu64 {
		g.emit(asm.LoadImm(dst, -1<<63, asm.DWord))
	} else {
		g.emit(asm.Mov.Imm32(dst, -1<<31))
	}
	if src != dst && src != asm.R10 {
		g.emit(asm.Mov.Imm(src, -int32(g.rng.IntN(2))))
	}
}

func (g *generator) unary() {
	dst := g.reg()
	switch g.rng.IntN(4) {
	case 0:
		if g.rng.IntN(2) == 0 {
			g.emit(asm.Neg.Imm(dst, 0))
		} else {
			g.emit(asm.Neg.Imm32(dst, 0))
		}
	case 1:
		src := g.reg()
		switch g.rng.IntN(5) {
		case 0:
			g.emit(asm.MovSX8.Reg(dst, src))
		case 1:
			g.emit(asm.MovSX16.Reg(dst, src))
		case 2:
			g.emit(asm.MovSX32.Reg(dst, src))
		case 3:
			g.emit(asm.MovSX8.Reg32(dst, src))
		default:
			g.emit(asm.MovSX16.Reg32(dst, src))
		}
	default:
		size := []asm.Size{asm.Half, asm.Word, asm.DWord}[g.rng.IntN(3)]
		switch g.rng.IntN(3) {
		case 0:
			g.emit(asm.HostTo(asm.LE, dst, size))
		case 1:
			g.emit(asm.HostTo(asm.BE, dst, size))
		default:
			g.emit(asm.BSwap(dst, size))
		}
	}
}

var sizes = []asm.Size{asm.Byte, asm.Half, asm.Word, asm.DWord}

// slot picks a naturally aligned offset of a size-byte access in the
// current stack area (the kernel insists on aligned stack accesses).
func (g *generator) slot(size asm.Size) int16 {
	n := int16(size.Sizeof())
	return g.areaLo + n*int16(g.rng.IntN(int(g.areaSize/n)))
}

func (g *generator) store() {
	size := sizes[g.rng.IntN(len(sizes))]
	off := g.slot(size)
	g.storedTo(off)
	if g.rng.IntN(2) == 0 {
		g.emit(asm.StoreMem(asm.R10, off, g.reg(), size))
	} else {
		g.emit(storeImm(asm.R10, off, g.imm32(), size))
	}
}

// storedTo records that the body stored to the 8-byte granule holding off;
// see fetchSlot.
func (g *generator) storedTo(off int16) {
	g.stored[(off-g.areaLo)/8] = true
}

func (g *generator) load() {
	size := sizes[g.rng.IntN(len(sizes))]
	off := g.slot(size)
	if size != asm.DWord && g.rng.IntN(2) == 0 {
		g.emit(asm.LoadMemSX(g.reg(), asm.R10, off, size))
	} else {
		g.emit(asm.LoadMem(g.reg(), asm.R10, off, size))
	}
}

var atomicOps = []asm.AtomicOp{
	asm.AddAtomic, asm.OrAtomic, asm.AndAtomic, asm.XorAtomic,
	asm.FetchAdd, asm.FetchOr, asm.FetchAnd, asm.FetchXor, asm.Xchg, asm.CmpXchg,
}

func (g *generator) atomic() {
	size := asm.Word
	if g.rng.IntN(2) == 0 {
		size = asm.DWord
	}
	op := atomicOps[g.rng.IntN(len(atomicOps))]
	src := g.reg()
	if g.opts.VMOnly || op&fetchBit == 0 {
		g.emit(op.Mem(asm.R10, src, size, g.slot(size)))
		return
	}
	off, ok := g.fetchSlot(size)
	if !ok {
		op &^= fetchBit // a plain add/or/and/xor instead
		if op == asm.Xchg&^fetchBit || op == asm.CmpXchg&^fetchBit {
			op = asm.AddAtomic
		}
		g.emit(op.Mem(asm.R10, src, size, g.slot(size)))
		return
	}
	if op == asm.CmpXchg && size == asm.Word {
		// RFC 9669: a 32-bit cmpxchg loads the old value into r0
		// zero-extended, hit or miss. x86's cmpxchg writes eax only on a
		// miss, so Linux has the verifier add a zero-extension after it;
		// Linux 6.18 omits it when r0's only 64-bit use lies on a path the
		// verifier pruned, and r0 keeps its upper half
		// (tests.TestKernelKnownBugs). Clearing the upper half first makes
		// both readings agree.
		g.emit(asm.Mov.Reg32(asm.R0, asm.R0), op.Mem(asm.R10, src, size, off))
		return
	}
	g.emit(op.Mem(asm.R10, src, size, off))
}

// fetchBit marks the atomics that load the old value into a register
// (fetch add/or/and/xor, xchg, cmpxchg).
const fetchBit = asm.FetchAdd &^ asm.AddAtomic

// fetchSlot picks a slot for an atomic that loads the old value, in a
// granule the body has not stored to. Linux 6.18's verifier fills the
// fetched register from a spilled scalar as a load would, but its precision
// backtracking does not follow the fetch back to the stack slot, so it can
// prune a path on which the slot held a different value and then remove a
// branch as dead that that path takes (tests.TestKernelKnownBugs). The
// prologue fills the area with values the verifier does not know, so the
// hazard needs a store in the body first. ok is false when every granule
// has been stored to (a subprogram's area always has: it initialises it).
func (g *generator) fetchSlot(size asm.Size) (off int16, ok bool) {
	var free []int16
	for i := range int(g.areaSize / 8) {
		if !g.stored[i] {
			free = append(free, g.areaLo+8*int16(i))
		}
	}
	if len(free) == 0 {
		return 0, false
	}
	off = free[g.rng.IntN(len(free))]
	if size == asm.Word {
		off += 4 * int16(g.rng.IntN(2))
	}
	return off, true
}

var jumpOps = []asm.JumpOp{
	asm.JEq, asm.JGT, asm.JGE, asm.JSet, asm.JNE, asm.JSGT, asm.JSGE,
	asm.JLT, asm.JLE, asm.JSLT, asm.JSLE,
}

// condJump emits a random conditional jump to label id.
func (g *generator) condJump(id int) {
	op := jumpOps[g.rng.IntN(len(jumpOps))]
	dst, label := g.reg(), labelName(id)
	switch g.rng.IntN(4) {
	case 0:
		g.emit(op.Imm(dst, g.imm32(), label))
	case 1:
		g.emit(op.Imm32(dst, g.imm32(), label))
	case 2:
		g.emit(op.Reg(dst, g.reg(), label))
	default:
		g.emit(op.Reg32(dst, g.reg(), label))
	}
}

// forwardJump emits a conditional jump over the next 0 to 7 instructions.
func (g *generator) forwardJump() {
	id := g.newLabel()
	g.condJump(id)
	g.pending = append(g.pending, pendingLabel{id: id, left: g.rng.IntN(8)})
}

// diamond emits if/else: cond → else; then; ja or gotol → end; else: …;
// end:. The jump over the else block is the only unconditional one, and
// the else block is the conditional jump's target, so nothing is
// unreachable. It returns how many instructions it budgeted.
func (g *generator) diamond(room int) int {
	elseL, endL := g.newLabel(), g.newLabel()
	g.condJump(elseL)
	thenN := 1 + g.rng.IntN(min(room/2, 6))
	elseN := g.rng.IntN(min(room/2, 6) + 1)
	g.block(thenN, g.hasSub && !g.inSub)
	if g.rng.IntN(2) == 0 {
		g.emit(asm.Ja.Label(labelName(endL)))
	} else {
		g.emit(asm.LongJump(labelName(endL)))
	}
	g.bind(elseL)
	g.block(elseN, g.hasSub && !g.inSub)
	g.bind(endL)
	return 2 + thenN + elseN
}

// call calls the subprogram and then gives r1–r5 new values: the kernel
// treats them as clobbered by any call.
func (g *generator) call() {
	g.calls++
	g.emit(asm.Call.Label(subSymbol))
	for r := asm.R1; r <= asm.R5; r++ {
		if g.rng.IntN(2) == 0 {
			g.emit(asm.Mov.Reg(r, []asm.Register{asm.R0, asm.R6, asm.R7, asm.R8, asm.R9}[g.rng.IntN(5)]))
		} else {
			g.constant(r)
		}
	}
}

// storeImm is asm.StoreImm for every size: cilium/ebpf refuses the 8-byte
// form (stdw, which stores the immediate sign-extended), RFC 9669 and the
// kernel do not.
func storeImm(dst asm.Register, off int16, imm int32, size asm.Size) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(size), Dst: dst, Offset: off, Constant: int64(imm)}
}
