package verifygen

import (
	"strings"

	"github.com/cilium/ebpf/asm"
)

// snippet emits one randomly chosen pattern into f.
func (g *gen) snippet(f *function) {
	type choice struct {
		weight int
		fn     func(*function)
	}
	deep := g.nesting >= 3
	choices := []choice{
		{10, g.memConst},
		{5, g.memAtomic},
		{8, g.maskIndex},
		{10, g.jmpIndex},
		{10, g.chain},
		{10, g.refine},
		{8, g.stackConst},
		{4, g.stackVar},
		{6, g.spill},
		{5, g.ptrArith},
		{2, g.leak},
		{2, g.ptrCompare},
		{4, g.noise},
		{1, g.uninitReg},
		{1, g.misc},
	}
	if !g.opts.Kernel {
		choices = append(choices, choice{1, g.unbounded}, choice{1, g.branchChain})
	}
	if !deep {
		choices = append(choices, choice{8, g.loop}, choice{5, g.ifElse})
		if g.allowCalls && f.depth < maxFrames-1 && (!g.opts.Kernel || f.depth < 3) {
			choices = append(choices, choice{5, g.call})
		}
		if g.allowCalls && !g.opts.Kernel && f.depth < maxFrames-1 {
			choices = append(choices, choice{1, g.callTree})
		}
	}
	if f.hasArg {
		choices = append(choices, choice{8, g.argAccess})
	}
	total := 0
	for _, c := range choices {
		total += c.weight
	}
	k := g.rng.IntN(total)
	for _, c := range choices {
		if k < c.weight {
			c.fn(f)
			return
		}
		k -= c.weight
	}
}

var sizes = []asm.Size{asm.Byte, asm.Half, asm.Word, asm.DWord}

func sizeOf(n int) asm.Size {
	switch n {
	case 1:
		return asm.Byte
	case 2:
		return asm.Half
	case 4:
		return asm.Word
	}
	return asm.DWord
}

// pickSize returns an access size of at most limit bytes (1 if limit < 1).
func (g *gen) pickSize(limit int64) int {
	for range 8 {
		s := 1 << g.rng.IntN(4)
		if int64(s) <= limit {
			return s
		}
	}
	return 1
}

// scratch returns a register the current snippet may overwrite.
func (g *gen) scratch(f *function, avoid ...asm.Register) asm.Register {
	for {
		r := []asm.Register{asm.R0, asm.R1, asm.R2, asm.R3, asm.R4, asm.R5, asm.R7, asm.R8, asm.R9}[g.rng.IntN(9)]
		if f.reserved[r] {
			continue
		}
		ok := true
		for _, a := range avoid {
			if a == r {
				ok = false
			}
		}
		if ok {
			return r
		}
	}
}

// scalarReg returns a register holding a number, writing a constant into
// a scratch register when none does.
func (g *gen) scalarReg(f *function, avoid ...asm.Register) asm.Register {
	r := g.scratch(f, avoid...)
	if f.st.kind[r] != kScalar || g.rng.IntN(2) == 0 {
		f.emit(g, asm.Mov.Imm(r, g.imm32()))
		f.st.kind[r] = kScalar
	}
	return r
}

func (g *gen) set(f *function, r asm.Register, k regKind, off int64) {
	f.st.kind[r], f.st.off[r], f.st.frame[r] = k, off, 0
}

// Constants biased toward the edges.
var edges32 = []int32{0, 1, -1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 255, 256, 0x7fff, -0x8000, 0xffff,
	0x7fffffff, -0x80000000, -2, -8, -128, -256, 0x10000}

func (g *gen) imm32() int32 {
	if g.rng.IntN(3) == 0 {
		return int32(g.rng.Uint32())
	}
	return edges32[g.rng.IntN(len(edges32))]
}

// fresh loads a number the verifier cannot know into r: size bytes of
// memory at a random in-bounds offset, sign-extended when signed. It
// returns the offset and the size actually used.
func (g *gen) fresh(f *function, r asm.Register, size int, signed bool) (int64, int) {
	for int64(size) > g.mem {
		size /= 2
	}
	off := int64(0)
	if g.mem > int64(size) {
		off = g.rng.Int64N(g.mem - int64(size) + 1)
	}
	if signed && size < 8 {
		f.emit(g, asm.LoadMemSX(r, asm.R6, int16(off), sizeOf(size)))
	} else {
		f.emit(g, asm.LoadMem(r, asm.R6, int16(off), sizeOf(size)))
	}
	g.set(f, r, kScalar, 0)
	return off, size
}

type accessOp int

const (
	opLoad accessOp = iota
	opLoadSX
	opStoreImm
	opStoreReg
	opAtomic
)

func (g *gen) pickOp(atomicOK bool) accessOp {
	n := 4
	if atomicOK {
		n = 5
	}
	return accessOp(g.rng.IntN(n))
}

var atomicOps = []asm.AtomicOp{asm.AddAtomic, asm.OrAtomic, asm.AndAtomic, asm.XorAtomic,
	asm.FetchAdd, asm.FetchOr, asm.FetchAnd, asm.FetchXor, asm.Xchg, asm.CmpXchg}

// access emits one access of size bytes at base+off. Loads write a fresh
// scratch register; stores store a constant or a number.
func (g *gen) access(f *function, base asm.Register, off int64, size int, op accessOp) {
	if op == opLoadSX && size == 8 {
		op = opLoad
	}
	if op == opAtomic && size < 4 {
		op = opStoreImm
	}
	o := int16(off)
	switch op {
	case opLoad, opLoadSX:
		r := g.scratch(f, base)
		if op == opLoadSX {
			f.emit(g, asm.LoadMemSX(r, base, o, sizeOf(size)))
		} else {
			f.emit(g, asm.LoadMem(r, base, o, sizeOf(size)))
		}
		g.set(f, r, kScalar, 0)
	case opStoreImm:
		f.emit(g, storeImm(base, o, int64(g.imm32()), sizeOf(size)))
	case opStoreReg:
		r := g.scalarReg(f, base)
		f.emit(g, asm.StoreMem(base, o, r, sizeOf(size)))
	case opAtomic:
		aop := atomicOps[g.rng.IntN(len(atomicOps))]
		src := g.scalarReg(f, base, asm.R0)
		if aop == asm.CmpXchg {
			if base == asm.R0 {
				aop = asm.AddAtomic
			} else {
				f.emit(g, asm.Mov.Imm(asm.R0, g.imm32()))
				g.set(f, asm.R0, kScalar, 0)
			}
		}
		f.emit(g, aop.Mem(base, src, sizeOf(size), o))
		if aop == asm.CmpXchg {
			g.set(f, asm.R0, kScalar, 0)
		}
	}
}

// markStack records that a store of size bytes at r10+off initialised them.
func (f *function) markStack(off int64, size int) {
	for i := off; i < off+int64(size); i++ {
		if i >= -512 && i < 0 {
			f.st.init[i+512] = true
		}
	}
}

// unmarkStack records that bytes hold (part of) a pointer: numbers may
// not be read from them.
func (f *function) unmarkStack(off int64, size int) {
	for i := off; i < off+int64(size); i++ {
		if i >= -512 && i < 0 {
			f.st.init[i+512] = false
		}
	}
}

func (f *function) stackInit(off int64, size int) bool {
	for i := off; i < off+int64(size); i++ {
		if i < -512 || i >= 0 || !f.st.init[i+512] {
			return false
		}
	}
	return true
}

// memConst: a constant offset next to either end of memory.
func (g *gen) memConst(f *function) {
	g.origin = "mem-const"
	s := g.pickSize(g.mem)
	var off int64
	bad := g.bad()
	if bad {
		off = []int64{g.mem - int64(s) + 1, g.mem, -1, -int64(s), g.mem + 7, g.mem - 1}[g.rng.IntN(6)]
		if off >= 0 && off+int64(s) <= g.mem {
			off = g.mem - int64(s) + 1
		}
		g.defect("mem-const: %d bytes at %d of %d", s, off, g.mem)
	} else {
		off = []int64{g.mem - int64(s), g.mem - int64(s) - 1, 0, g.rng.Int64N(g.mem - int64(s) + 1)}[g.rng.IntN(4)]
		off = max(off, 0)
		if off+int64(s) > g.mem {
			off = 0
		}
	}
	op := g.pickOp(false)
	base := asm.R6
	if g.rng.IntN(3) == 0 {
		k := []int64{g.mem, g.mem - int64(s), g.mem / 2, -8, 1 << 20, off}[g.rng.IntN(6)]
		if off-k >= -32768 && off-k <= 32767 {
			base = g.scratch(f)
			f.emit(g, asm.Mov.Reg(base, asm.R6), asm.Add.Imm(base, int32(k)))
			g.set(f, base, kMemPtr, k)
			off -= k
		}
	}
	g.access(f, base, off, s, op)
}

// memAtomic: an atomic at a constant offset, aligned or not, next to the end.
func (g *gen) memAtomic(f *function) {
	g.origin = "mem-atomic"
	if g.mem < 4 {
		g.memConst(f)
		return
	}
	s := 4
	if g.mem >= 8 && g.rng.IntN(2) == 0 {
		s = 8
	}
	off := (g.mem - int64(s)) / int64(s) * int64(s)
	if g.rng.IntN(3) == 0 {
		off = g.rng.Int64N(off/int64(s)+1) * int64(s)
	}
	base := asm.R6
	k := int64(0)
	if g.rng.IntN(3) == 0 {
		k = int64([]int32{4, 8, 1, 16}[g.rng.IntN(4)])
		base = g.scratch(f)
		f.emit(g, asm.Mov.Reg(base, asm.R6), asm.Add.Imm(base, int32(k)))
		g.set(f, base, kMemPtr, k)
	}
	if g.bad() {
		if g.rng.IntN(2) == 0 {
			off += int64(s) // past the end
		} else {
			off += []int64{1, 2, 4}[g.rng.IntN(min(3, s/2))] // misaligned
		}
		g.defect("mem-atomic: %d bytes at %d of %d", s, off, g.mem)
	}
	g.access(f, base, off-k, s, opAtomic)
}

// boundedIndex emits base := r6 + idx and one access at base+c, where idx
// is known to lie in [0, max]; the access is safe when max+c+s <= mem.
func (g *gen) indexAccess(f *function, idx asm.Register, c int64, s int) {
	p := g.scratch(f, idx)
	switch g.rng.IntN(3) {
	case 0:
		f.emit(g, asm.Mov.Reg(p, asm.R6), asm.Add.Reg(p, idx))
	case 1:
		f.emit(g, asm.Mov.Reg(p, idx), asm.Add.Reg(p, asm.R6))
	default:
		// Move the pointer away and back.
		k := int64([]int32{1, 8, 64, 4096}[g.rng.IntN(4)])
		f.emit(g, asm.Mov.Reg(p, asm.R6), asm.Add.Imm(p, int32(k)), asm.Add.Reg(p, idx))
		c -= k
	}
	g.set(f, p, kOther, 0)
	g.access(f, p, c, s, g.pickOp(false))
}

// target picks an access size s and constant c, and the largest index m
// such that m+c+s == mem (one past it when bad).
func (g *gen) target(bad bool) (s int, c, m int64) {
	s = g.pickSize(g.mem)
	c = 0
	if g.rng.IntN(3) == 0 {
		c = g.rng.Int64N(g.mem - int64(s) + 1)
	}
	m = g.mem - int64(s) - c
	if bad {
		m++
	}
	return
}

// maskIndex: a variable offset bounded by and, mod, a shift or the load width.
func (g *gen) maskIndex(f *function) {
	g.origin = "mask-index"
	bad := g.bad()
	s, c, m := g.target(bad)
	x := g.scratch(f)
	lsize := 1 << g.rng.IntN(4)
	off, lsize := g.fresh(f, x, lsize, false)
	method := g.rng.IntN(6)
	switch method {
	case 0: // and64 with the limit itself
		f.emit(g, asm.And.Imm(x, int32(m)))
		g.origin = "mask-index/and"
	case 1: // and32
		f.emit(g, asm.And.Imm32(x, int32(m)))
		g.origin = "mask-index/and32"
	case 2: // mod
		if m+1 > 0 {
			f.emit(g, asm.Mod.Imm(x, int32(m+1)))
		} else {
			f.emit(g, asm.And.Imm(x, 0))
		}
		g.origin = "mask-index/mod"
	case 3: // and with a register
		r := g.scratch(f, x)
		f.emit(g, asm.Mov.Imm(r, int32(m)), asm.And.Reg(x, r))
		g.set(f, r, kScalar, 0)
		g.origin = "mask-index/and-reg"
	case 4: // shift a narrow load down until it fits
		w := 8 * lsize
		k := 0
		for k < w-1 && (maxOf(w)>>k) > uint64(m) {
			k++
		}
		if bad && k > 0 {
			k-- // one bit too few
		}
		if got := maxOf(w) >> k; got > uint64(m) && !bad {
			f.emit(g, asm.And.Imm(x, int32(m)))
		} else {
			f.emit(g, asm.RSh.Imm(x, int32(k)))
			m = int64(got)
		}
		g.origin = "mask-index/rsh"
	default: // shift left then right: zero-extend in two steps
		f.emit(g, asm.LSh.Imm(x, 56), asm.RSh.Imm(x, 56))
		m = 255
		g.origin = "mask-index/shift-pair"
	}
	if method <= 3 && uint64(m) > maxOf(8*lsize) {
		m = int64(maxOf(8 * lsize)) // the load is narrower than the mask
	}
	if m+c+int64(s) > g.mem {
		g.defect("%s: index up to %d + %d + %d bytes past %d", g.origin, m, c, s, g.mem)
	}
	g.hint(off, lsize, uint64(m), uint64(m)+1, ^uint64(0))
	g.proving = m+c+int64(s) <= g.mem
	g.indexAccess(f, x, c, s)
	g.proving = false
}

func maxOf(bits int) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return 1<<bits - 1
}

var jumpForms = []string{"gt", "ge", "le-taken", "lt-taken", "reg-gt", "reg-rev", "jmp32-gt", "jmp32-le-taken",
	"sgt", "sgt-two-sided", "memlen", "eq-taken", "ne", "jset", "sle-taken"}

// jmpIndex: a variable offset bounded by a conditional jump on one edge.
func (g *gen) jmpIndex(f *function) {
	g.origin = "jmp-index"
	bad := g.bad()
	s, c, L := g.target(false)
	x := g.scratch(f)
	lsize := 1 << g.rng.IntN(4)
	signed := g.rng.IntN(4) == 0
	off, lsize := g.fresh(f, x, lsize, signed)
	form := jumpForms[g.rng.IntN(len(jumpForms))]
	if form == "memlen" && !f.memLen {
		form = "gt"
	}
	g.origin = "jmp-index/" + form
	// The ways a form can go wrong: off by one, the wrong edge, or a check
	// that leaves the index negative or its upper half unknown.
	wrongEdge := false
	if bad {
		switch g.rng.IntN(3) {
		case 0:
			wrongEdge = true
		default:
			L++
		}
	}
	skip, at := g.label(), g.label()
	negOK := !signed && lsize < 8 // the load leaves it non-negative
	// A load of at most 4 bytes, sign-extended or not, whose low 32 bits
	// a JMP32 check keeps small has its upper half zero.
	upperOK := lsize <= 4
	lim := int32(L)
	entry := f.st
	access := func() { g.indexAccess(f, x, c, s) }
	// fallAccess: the jump skips the access when out of range.
	fallAccess := func(j asm.Instruction) {
		if wrongEdge {
			f.jump(g, j, at)
			f.jump(g, asm.Ja.Label(""), skip)
			f.bind(at)
		} else {
			f.jump(g, j, skip)
		}
		access()
		f.bind(skip)
		f.st.join(&entry)
		f.emit(g, asm.Mov.Imm(x, 0))
	}
	// takenAccess: the jump goes to the access when in range.
	takenAccess := func(j asm.Instruction) {
		if wrongEdge {
			f.jump(g, j, skip)
		} else {
			f.jump(g, j, at)
			f.jump(g, asm.Ja.Label(""), skip)
			f.bind(at)
		}
		access()
		f.bind(skip)
		f.st.join(&entry)
		f.emit(g, asm.Mov.Imm(x, 0))
	}
	unsafe := bad
	switch form {
	case "gt":
		fallAccess(asm.JGT.Imm(x, lim, ""))
	case "ge":
		fallAccess(asm.JGE.Imm(x, lim+1, ""))
	case "le-taken":
		takenAccess(asm.JLE.Imm(x, lim, ""))
	case "lt-taken":
		takenAccess(asm.JLT.Imm(x, lim+1, ""))
	case "reg-gt", "reg-rev":
		r := g.scratch(f, x)
		f.emit(g, asm.Mov.Imm(r, lim))
		g.set(f, r, kScalar, 0)
		if form == "reg-gt" {
			fallAccess(asm.JGT.Reg(x, r, ""))
		} else {
			fallAccess(asm.JLT.Reg(r, x, ""))
		}
	case "jmp32-gt":
		fallAccess(asm.JGT.Imm32(x, lim, ""))
		unsafe = unsafe || !upperOK
	case "jmp32-le-taken":
		takenAccess(asm.JLE.Imm32(x, lim, ""))
		unsafe = unsafe || !upperOK
	case "sgt":
		fallAccess(asm.JSGT.Imm(x, lim, ""))
		unsafe = unsafe || !negOK
	case "sle-taken":
		takenAccess(asm.JSLE.Imm(x, lim, ""))
		unsafe = unsafe || !negOK
	case "sgt-two-sided":
		f.jump(g, asm.JSLT.Imm(x, 0, ""), skip)
		fallAccess(asm.JSGT.Imm(x, lim, ""))
	case "memlen":
		// x < len: safe for one byte at x.
		s, c = 1, 0
		L = g.mem - 1
		if bad && !wrongEdge {
			s = 2
		}
		fallAccess(asm.JGE.Reg(x, asm.R7, ""))
	case "eq-taken":
		takenAccess(asm.JEq.Imm(x, lim, ""))
	case "ne":
		fallAccess(asm.JNE.Imm(x, lim, ""))
	case "jset":
		// x & ^mask == 0 leaves x <= mask; mask = 2^k-1 below L+1.
		k := 0
		for int64(1)<<(k+1)-1 <= L {
			k++
		}
		mask := int64(1)<<k - 1
		if bad && !wrongEdge {
			mask = mask*2 + 1
		}
		L = mask
		fallAccess(asm.JSet.Imm(x, int32(^mask), ""))
	}
	if unsafe {
		g.defect("%s: limit %d, %d bytes at +%d, mem %d (wrong edge %v, load %d signed %v)", g.origin, L, s, c, g.mem, wrongEdge, lsize, signed)
	}
	g.hint(off, lsize, uint64(L), uint64(L)+1, 1<<32|uint64(L), ^uint64(0), 1<<63, uint64(int64(-1)<<(8*lsize-1)))
}

// unbounded: an offset nothing bounds.
func (g *gen) unbounded(f *function) {
	g.origin = "unbounded"
	x := g.scratch(f)
	off, size := g.fresh(f, x, 8, false)
	g.defect("unbounded: offset loaded from memory")
	g.hint(off, size, 1<<40)
	g.indexAccess(f, x, 0, 1)
}

// chain computes a value through ALU operations from an input byte and
// uses it as an offset. The generator enumerates the inputs to know its
// exact range and aims the access at the boundary.
func (g *gen) chain(f *function) {
	g.origin = "chain"
	x := g.scratch(f)
	signed := g.rng.IntN(4) == 0
	off, _ := g.fresh(f, x, 1, signed)
	type step struct {
		ins asm.Instruction
		reg bool
	}
	var steps []step
	// An optional second input: a small unknown in a register.
	var y asm.Register = 255
	var yVals []uint64
	var names []string
	if g.rng.IntN(3) == 0 {
		y = g.scratch(f, x)
		yoff, _ := g.fresh(f, y, 1, false)
		_ = yoff
		switch g.rng.IntN(3) {
		case 0:
			f.emit(g, asm.And.Imm(y, 15))
			names = append(names, "y=And")
			for v := range uint64(16) {
				yVals = append(yVals, v)
			}
		case 1:
			f.emit(g, asm.RSh.Imm(y, 5))
			names = append(names, "y=RSh")
			for v := range uint64(8) {
				yVals = append(yVals, v)
			}
		default:
			f.emit(g, asm.Mod.Imm(y, 3), asm.Sub.Imm(y, 1))
			names = append(names, "y=Mod")
			yVals = []uint64{^uint64(0), 0, 1}
		}
	}
	n := 1 + g.rng.IntN(3)
	for range n {
		var ins asm.Instruction
		alu32 := g.rng.IntN(4) == 0
		var aop asm.ALUOp
		switch g.rng.IntN(18) {
		case 0, 1:
			aop = asm.Add
		case 2:
			aop = asm.Sub
		case 3:
			aop = asm.Mul
		case 4:
			aop = asm.Div
		case 5:
			aop = asm.SDiv
		case 6:
			aop = asm.Mod
		case 7:
			aop = asm.SMod
		case 8:
			aop = asm.Or
		case 9:
			aop = asm.And
		case 10:
			aop = asm.LSh
		case 11:
			aop = asm.RSh
		case 12:
			aop = asm.ArSh
		case 13:
			aop = asm.Xor
		case 14:
			aop = asm.Neg
		case 15:
			aop = []asm.ALUOp{asm.MovSX8, asm.MovSX16, asm.MovSX32}[g.rng.IntN(3)]
		default:
			aop = asm.Swap
		}
		k := g.chainImm(aop)
		reg := false
		switch {
		case aop == asm.Swap:
			w := []int64{16, 32, 64}[g.rng.IntN(3)]
			switch g.rng.IntN(3) {
			case 0:
				ins = asm.BSwap(x, sizeOf(int(w/8)))
			case 1:
				ins = asm.HostTo(asm.BE, x, sizeOf(int(w/8)))
			default:
				ins = asm.HostTo(asm.LE, x, sizeOf(int(w/8)))
			}
		case aop == asm.Neg:
			ins = asm.Neg.Imm(x, 0)
			if alu32 {
				ins = asm.Neg.Imm32(x, 0)
			}
		case aop == asm.MovSX8 || aop == asm.MovSX16 || aop == asm.MovSX32:
			if alu32 && aop != asm.MovSX32 {
				ins = aop.Reg32(x, x)
			} else {
				ins = aop.Reg(x, x)
			}
		case y != 255 && g.rng.IntN(2) == 0:
			reg = true
			ins = aop.Reg(x, y)
			if alu32 {
				ins = aop.Reg32(x, y)
			}
		default:
			ins = aop.Imm(x, k)
			if alu32 {
				ins = aop.Imm32(x, k)
			}
		}
		steps = append(steps, step{ins, reg})
		names = append(names, aluName(&ins))
		f.emit(g, ins)
	}
	if y == 255 {
		yVals = []uint64{0}
	}
	// The exact range over all inputs.
	lo, hi := int64(1<<62), int64(-1<<62)
	var loIn, hiIn uint64
	for in := range uint64(256) {
		for _, yv := range yVals {
			v := in
			if signed {
				v = uint64(int64(int8(in)))
			}
			for _, st := range steps {
				src := yv
				if st.ins.Src == x {
					src = v
				}
				v = EvalALU(&st.ins, v, src)
			}
			sv := int64(v)
			if sv < lo {
				lo, loIn = sv, in
			}
			if sv > hi {
				hi, hiIn = sv, in
			}
		}
	}
	g.origin = "chain/" + strings.Join(names, ",")
	g.hint(off, 1, loIn, hiIn)
	span := hi - lo // hi, lo in ±2^62
	s := 1
	if span < g.mem {
		s = g.pickSize(g.mem - span)
	}
	if lo < -(1<<30) || hi > 1<<30 || span+int64(s) > g.mem {
		// Too wide for memory: a check must bound it, or it is a defect.
		if g.rng.IntN(2) == 0 {
			g.defect("chain %v: range [%d, %d] wider than memory %d", names, lo, hi, g.mem)
			g.indexAccess(f, x, 0, 1)
			return
		}
		skip := g.label()
		L := g.mem - int64(s)
		f.jump(g, asm.JGT.Imm(x, int32(L), ""), skip)
		entry := f.st
		g.proving = true
		g.indexAccess(f, x, 0, s)
		g.proving = false
		f.bind(skip)
		f.st.join(&entry)
		f.emit(g, asm.Mov.Imm(x, 0))
		return
	}
	// Offsets: lo lands at 0 + d, hi at span + d.
	d := g.rng.Int64N(g.mem - span - int64(s) + 1)
	if g.rng.IntN(2) == 0 {
		d = g.mem - span - int64(s)
	}
	bad := g.bad()
	if bad {
		if g.rng.IntN(2) == 0 {
			d = g.mem - span - int64(s) + 1
		} else {
			d = -1
		}
		g.defect("chain %v: range [%d, %d] +%d, %d bytes, mem %d", names, lo, hi, d-lo, s, g.mem)
	}
	g.proving = !bad
	defer func() { g.proving = false }()
	p := g.scratch(f, x)
	// p = r6 + (d - lo) + x
	f.emit(g, asm.Mov.Reg(p, asm.R6))
	c := d - lo
	if c < -30000 || c > 30000 {
		f.emit(g, asm.Add.Imm(p, int32(c)))
		c = 0
	}
	f.emit(g, asm.Add.Reg(p, x))
	g.set(f, p, kOther, 0)
	g.access(f, p, c, s, g.pickOp(false))
}

func (g *gen) chainImm(aop asm.ALUOp) int32 {
	switch aop {
	case asm.LSh, asm.RSh, asm.ArSh:
		return int32(g.rng.IntN(70))
	case asm.Div, asm.Mod, asm.SDiv, asm.SMod:
		return []int32{0, 1, -1, 2, 3, 5, 7, 16, 255, 256, -3, 0x7fffffff, -0x80000000}[g.rng.IntN(13)]
	case asm.Mul:
		return []int32{0, 1, -1, 2, 3, 8, 255, 0x10000, -0x80000000}[g.rng.IntN(9)]
	}
	return g.imm32()
}

func aluName(ins *asm.Instruction) string {
	op := ins.OpCode.ALUOp()
	name := op.String()
	if ins.OpCode.Class() == asm.ALUClass {
		name += "32"
	}
	return name
}

// stackConst: a constant stack offset next to -512 or 0, written then read.
func (g *gen) stackConst(f *function) {
	g.origin = "stack-const"
	s := 1 << g.rng.IntN(4)
	lim := g.stackLimit
	var off int64
	nearBottom := g.rng.IntN(2) == 0
	if nearBottom {
		off = -lim + int64(g.rng.IntN(3))*int64(s)/2
		g.origin = "stack-const/bottom"
	} else {
		off = -int64(s) - int64(g.rng.IntN(3))
		g.origin = "stack-const/top"
	}
	bad := g.bad()
	if bad {
		if nearBottom {
			off = -lim - int64(1+g.rng.IntN(s))
		} else {
			off = -int64(s) + 1 + int64(g.rng.IntN(s))
		}
		if lim < 512 && nearBottom { // kernel frames: stay inside 512
			off = -513
		}
		g.defect("%s: %d bytes at r10%+d", g.origin, s, off)
	}
	base := asm.R10
	k := int64(0)
	if g.rng.IntN(4) == 0 {
		k = []int64{-8, -256, -512, 0}[g.rng.IntN(4)]
		base = g.scratch(f)
		f.emit(g, asm.Mov.Reg(base, asm.R10), asm.Add.Imm(base, int32(k)))
		g.set(f, base, kStackPtr, k)
	}
	op := []accessOp{opStoreImm, opStoreReg, opStoreImm}[g.rng.IntN(3)]
	g.access(f, base, off-k, s, op)
	if !bad {
		f.markStack(off, s)
	}
	// A read: of the bytes just written, of bytes around them, or of an
	// atomic on them.
	rs := 1 << g.rng.IntN(4)
	roff := off
	switch g.rng.IntN(3) {
	case 0:
		roff = off + int64(s) - int64(rs)
	case 1:
		roff = off - int64(g.rng.IntN(4))
	}
	ok := f.stackInit(roff, rs)
	if !ok && !g.bad() && !bad {
		rs, roff = s, off
		ok = true
	}
	if !ok && !bad {
		g.defect("%s: read of %d bytes at r10%+d, not all written", g.origin, rs, roff)
	}
	rop := opLoad
	switch g.rng.IntN(4) {
	case 0:
		rop = opLoadSX
	case 1:
		if rs >= 4 && roff%int64(rs) == 0 {
			rop = opAtomic
		}
	}
	g.access(f, base, roff-k, rs, rop)
}

// stackVar: a variable offset into the stack, written, then maybe read.
func (g *gen) stackVar(f *function) {
	g.origin = "stack-var"
	x := g.scratch(f)
	off, _ := g.fresh(f, x, 1, false)
	mask := []int64{1, 3, 7, 15, 31, 63}[g.rng.IntN(6)]
	f.emit(g, asm.And.Imm(x, int32(mask)))
	s := 1 << g.rng.IntN(4)
	// The window [-K, -K+mask+s) must lie in [-lim, 0).
	lim := g.stackLimit
	K := mask + int64(s)
	if g.rng.IntN(2) == 0 {
		K = lim
	}
	bad := g.bad()
	if bad {
		if K == lim {
			K = lim + 1
		} else {
			K--
		}
		g.defect("stack-var: window r10-%d + [0, %d] + %d bytes", K, mask, s)
	}
	g.hint(off, 1, 0, 0xff)
	p := g.scratch(f, x)
	f.emit(g, asm.Mov.Reg(p, asm.R10), asm.Add.Imm(p, int32(-K)), asm.Add.Reg(p, x))
	g.set(f, p, kOther, 0)
	read := g.rng.IntN(2) == 0
	if read {
		// Initialise the window (8-byte aligned stores over it), then read.
		lo := (-K) &^ 7
		if !bad && g.rng.IntN(4) == 0 && g.bad() {
			lo += 8 // leave the first bytes unwritten
			g.defect("stack-var: read of a window whose first bytes are unwritten")
		}
		for o := lo; o < -K+mask+int64(s) && o < 0; o += 8 {
			if o >= -512 {
				f.emit(g, storeImm(asm.R10, int16(o), int64(g.imm32()), asm.DWord))
				f.markStack(o, 8)
			}
		}
		g.access(f, p, 0, s, []accessOp{opLoad, opLoadSX}[g.rng.IntN(2)])
		return
	}
	g.access(f, p, 0, s, []accessOp{opStoreImm, opStoreReg}[g.rng.IntN(2)])
}

// spill: registers stored to the stack and loaded back, whole or in part.
func (g *gen) spill(f *function) {
	g.origin = "spill"
	lim := g.stackLimit
	slot := []int64{-8, -16, -lim, -lim + 8, -8 * (1 + g.rng.Int64N(lim/8))}[g.rng.IntN(5)]
	q := g.scratch(f)
	switch g.rng.IntN(4) {
	case 3: // a variable-offset write into a spill slot, then a read of it
		g.origin = "spill/var-overwrite"
		ptr := g.rng.IntN(2) == 0
		if ptr {
			f.emit(g, asm.StoreMem(asm.R10, int16(slot), asm.R6, asm.DWord))
			f.unmarkStack(slot, 8)
		} else {
			x := g.scalarReg(f, q)
			f.emit(g, asm.StoreMem(asm.R10, int16(slot), x, asm.DWord))
			f.markStack(slot, 8)
		}
		y := g.scratch(f, q)
		off, _ := g.fresh(f, y, 1, false)
		mask := []int32{1, 3, 7}[g.rng.IntN(3)]
		g.hint(off, 1, 0, 1, 7)
		f.emit(g, asm.And.Imm(y, mask), asm.Add.Reg(y, asm.R10))
		g.set(f, y, kOther, 0)
		// The write lands somewhere in [slot+from, slot+from+mask]; the
		// first byte it may leave unwritten is slot+from.
		from := []int64{0, 0, 1, 4}[g.rng.IntN(4)]
		if slot+from+int64(mask) >= 0 {
			from = 0
		}
		f.emit(g, storeImm(y, int16(slot+from), int64(g.imm32()), asm.Byte))
		rs, at := 1, slot+from
		if g.rng.IntN(2) == 0 {
			rs = 1 << g.rng.IntN(4)
			at = slot + int64(g.rng.IntN(8/rs)*rs)
		}
		if ptr {
			g.defect("spill/var-overwrite: %d bytes at r10%+d read after a one-byte write at r10%+d+[0,%d] into a pointer spill", rs, at, slot+from, mask)
		}
		f.emit(g, asm.LoadMem(q, asm.R10, int16(at), sizeOf(rs)))
		g.set(f, q, kScalar, 0)
	case 0: // a pointer spill, refilled and used as a pointer
		g.origin = "spill/pointer"
		src, srcOff := asm.R6, int64(0)
		if g.rng.IntN(3) == 0 {
			src, srcOff = g.scratch(f, q), 1
			f.emit(g, asm.Mov.Reg(src, asm.R6), asm.Add.Imm(src, 1))
			g.set(f, src, kMemPtr, 1)
		}
		at := slot
		bad := g.bad()
		how := g.rng.IntN(4)
		if bad && how == 0 {
			at += int64([]int{4, 1, 2}[g.rng.IntN(3)])
			g.defect("spill/pointer: unaligned pointer spill at r10%+d", at)
		}
		f.emit(g, asm.StoreMem(asm.R10, int16(at), src, asm.DWord))
		f.unmarkStack(at, 8)
		switch {
		case bad && how == 1:
			f.emit(g, storeImm(asm.R10, int16(at+int64(g.rng.IntN(8))), 0, asm.Byte))
			g.defect("spill/pointer: one byte of the pointer spill overwritten, then refilled")
		case bad && how == 2:
			f.emit(g, asm.LoadMem(q, asm.R10, int16(at+int64(4*g.rng.IntN(2))), asm.Word))
			g.set(f, q, kScalar, 0)
			g.defect("spill/pointer: half a pointer read as a number")
			return
		case bad && how == 3:
			f.emit(g, storeImm(asm.R10, int16(at), 0, asm.DWord))
			g.defect("spill/pointer: spill overwritten with a number, then used as a pointer")
		}
		if g.rng.IntN(2) == 0 {
			g.noise(f)
		}
		f.emit(g, asm.LoadMem(q, asm.R10, int16(at), asm.DWord))
		g.set(f, q, kOther, 0)
		g.access(f, q, -srcOff, 1, g.pickOp(false))
	case 1: // a bounded number spilled, refilled and used as an index
		g.origin = "spill/scalar"
		x := g.scratch(f, q)
		off, _ := g.fresh(f, x, 1, false)
		s := g.pickSize(g.mem)
		m := g.mem - int64(s)
		f.emit(g, asm.And.Imm(x, int32(m)))
		g.hint(off, 1, 0xff)
		bad := g.bad()
		switch {
		case bad && g.rng.IntN(2) == 0:
			f.emit(g, asm.StoreMem(asm.R10, int16(slot), x, asm.DWord))
			f.emit(g, storeImm(asm.R10, int16(slot+int64(1+g.rng.IntN(7))), -1, asm.Byte))
			g.defect("spill/scalar: a high byte of a bounded spill overwritten with 0xff")
		case bad:
			f.emit(g, asm.StoreMem(asm.R10, int16(slot), x, asm.Word))
			g.defect("spill/scalar: 4-byte spill refilled as 8 bytes")
		default:
			f.emit(g, asm.StoreMem(asm.R10, int16(slot), x, asm.DWord))
		}
		f.markStack(slot, 8)
		f.emit(g, asm.LoadMem(q, asm.R10, int16(slot), asm.DWord))
		g.set(f, q, kScalar, 0)
		g.indexAccess(f, q, 0, s)
	default: // the frame pointer spilled through a derived pointer
		g.origin = "spill/frame-pointer"
		p := g.scratch(f, q)
		f.emit(g, asm.Mov.Reg(p, asm.R10), asm.Add.Imm(p, -16))
		f.emit(g, asm.StoreMem(p, 8, asm.R10, asm.DWord)) // r10-8 = r10
		f.unmarkStack(-8, 8)
		f.emit(g, asm.LoadMem(q, asm.R10, -8, asm.DWord))
		g.set(f, p, kStackPtr, -16)
		g.set(f, q, kStackPtr, 0)
		o := -int64(8 * (1 + g.rng.IntN(int(lim/8))))
		if g.bad() {
			o = []int64{0, -lim - 8, 4}[g.rng.IntN(3)]
			g.defect("spill/frame-pointer: store at refilled r10%+d", o)
		}
		f.emit(g, storeImm(q, int16(o), 7, asm.DWord))
		f.markStack(o, 8)
	}
}

// ptrArith: pointer arithmetic the rules allow, or one they forbid.
func (g *gen) ptrArith(f *function) {
	g.origin = "ptr-arith"
	p := g.scratch(f)
	if !g.bad() {
		s := g.pickSize(g.mem)
		a := g.rng.Int64N(g.mem + 64)
		b := a - g.rng.Int64N(g.mem-int64(s)+1) // p = r6 + (a-b), in bounds
		switch g.rng.IntN(3) {
		case 0:
			f.emit(g, asm.Mov.Reg(p, asm.R6), asm.Add.Imm(p, int32(a)), asm.Sub.Imm(p, int32(b)))
			g.set(f, p, kMemPtr, a-b)
			g.access(f, p, 0, s, g.pickOp(false))
		case 1: // the difference of two pointers is a number
			d := g.scratch(f, p)
			f.emit(g, asm.Mov.Reg(p, asm.R6), asm.Add.Imm(p, int32(a-b)), asm.Mov.Reg(d, p), asm.Sub.Reg(d, asm.R6))
			g.set(f, d, kScalar, 0)
			g.set(f, p, kMemPtr, a-b)
			g.origin = "ptr-arith/diff"
			g.indexAccess(f, d, 0, s)
		default: // stack pointer differences
			d := g.scratch(f, p)
			f.emit(g, asm.Mov.Reg(p, asm.R10), asm.Add.Imm(p, -16), asm.Mov.Reg(d, asm.R10), asm.Sub.Reg(d, p))
			g.set(f, d, kScalar, 0)
			g.set(f, p, kStackPtr, -16)
			g.origin = "ptr-arith/stack-diff"
			g.indexAccess(f, d, -16, 1)
		}
		return
	}
	base := []asm.Register{asm.R6, asm.R10}[g.rng.IntN(2)]
	f.emit(g, asm.Mov.Reg(p, base))
	var bad asm.Instruction
	switch g.rng.IntN(14) {
	case 0:
		bad = asm.Mul.Imm(p, 1)
	case 1:
		bad = asm.Or.Imm(p, 0)
	case 2:
		bad = asm.And.Imm(p, -8)
	case 3:
		bad = asm.LSh.Imm(p, 0)
	case 4:
		bad = asm.Add.Imm32(p, 0)
	case 5:
		bad = asm.Add.Reg(p, asm.R6)
	case 6:
		bad = asm.Neg.Imm(p, 0)
	case 7:
		bad = asm.Mov.Reg32(p, base)
	case 8:
		bad = asm.MovSX32.Reg(p, base)
	case 9:
		bad = asm.BSwap(p, asm.DWord)
	case 10:
		bad = asm.Xor.Reg(p, p)
	case 11:
		bad = asm.Div.Imm(p, 1)
	case 12: // a number minus a pointer
		q := g.scratch(f, p)
		f.emit(g, asm.Mov.Imm(q, 0))
		bad = asm.Sub.Reg(q, p)
		p = q
	default: // pointers into different objects
		other := asm.R10
		if base == asm.R10 {
			other = asm.R6
		}
		bad = asm.Sub.Reg(p, other)
	}
	f.emit(g, bad)
	g.origin = "ptr-arith/" + aluName(&bad)
	g.defect("ptr-arith: %s on a pointer", aluName(&bad))
	g.set(f, p, kOther, 0)
	if g.rng.IntN(2) == 0 && base == asm.R6 {
		g.access(f, p, 0, 1, opLoad)
	}
}

// leak: a pointer stored where it would leave the sandbox.
func (g *gen) leak(f *function) {
	g.origin = "leak"
	ptr := []asm.Register{asm.R6, asm.R10}[g.rng.IntN(2)]
	if !g.bad() {
		// The allowed form: a whole, aligned spill to the stack.
		slot := -8 * (1 + g.rng.Int64N(g.stackLimit/8))
		f.emit(g, asm.StoreMem(asm.R10, int16(slot), ptr, asm.DWord))
		f.unmarkStack(slot, 8)
		return
	}
	off := int64(0)
	if g.mem >= 8 {
		off = g.rng.Int64N(g.mem-7) &^ 7
	}
	switch g.rng.IntN(5) {
	case 0:
		f.emit(g, asm.StoreMem(asm.R6, int16(off), ptr, asm.DWord))
		g.defect("leak: pointer stored to memory")
	case 1:
		f.emit(g, asm.StoreMem(asm.R6, int16(off), ptr, asm.Word))
		g.defect("leak: low half of a pointer stored to memory")
	case 2:
		q := g.scratch(f)
		f.emit(g, asm.Mov.Reg(q, ptr), asm.AddAtomic.Mem(asm.R6, q, asm.DWord, int16(off)))
		g.set(f, q, kOther, 0)
		g.defect("leak: atomic add of a pointer into memory")
	case 3:
		q := g.scratch(f)
		f.emit(g, asm.Mov.Reg(q, ptr), storeImm(asm.R10, -8, 0, asm.DWord), asm.Xchg.Mem(asm.R10, q, asm.DWord, -8))
		f.markStack(-8, 8)
		g.set(f, q, kScalar, 0)
		g.defect("leak: xchg of a pointer into the stack")
	default:
		f.emit(g, asm.StoreMem(asm.R10, -4, ptr, asm.Word))
		g.defect("leak: half a pointer spilled")
	}
}

// ptrCompare: comparisons of pointers with numbers or with each other.
func (g *gen) ptrCompare(f *function) {
	g.origin = "ptr-compare"
	skip := g.label()
	p := g.scratch(f)
	k := g.rng.Int64N(g.mem + 1)
	f.emit(g, asm.Mov.Reg(p, asm.R6), asm.Add.Imm(p, int32(k)))
	g.set(f, p, kMemPtr, k)
	if g.bad() {
		switch g.rng.IntN(3) {
		case 0:
			f.jump(g, asm.JEq.Imm(p, 0, ""), skip)
		case 1:
			r := g.scalarReg(f, p)
			f.jump(g, asm.JGT.Reg(p, r, ""), skip)
		default:
			f.jump(g, asm.JGT.Reg32(p, asm.R6, ""), skip)
		}
		g.defect("ptr-compare: a pointer compared with a number or in 32 bits")
	} else {
		f.jump(g, []asm.JumpOp{asm.JGT, asm.JEq, asm.JNE, asm.JLE}[g.rng.IntN(4)].Reg(p, asm.R6, ""), skip)
	}
	entry := f.st
	g.access(f, asm.R6, 0, 1, opLoad)
	f.bind(skip)
	f.st.join(&entry)
	f.emit(g, asm.Mov.Imm(p, 0))
	g.set(f, p, kScalar, 0)
}

// noise: ALU operations on numbers, to vary the abstract state.
func (g *gen) noise(f *function) {
	saved := g.origin
	g.origin = "noise"
	for range 1 + g.rng.IntN(3) {
		r := g.scratch(f)
		if f.st.kind[r] != kScalar {
			f.emit(g, asm.Mov.Imm(r, g.imm32()))
			g.set(f, r, kScalar, 0)
		}
		aop := []asm.ALUOp{asm.Add, asm.Sub, asm.Mul, asm.Div, asm.SDiv, asm.Mod, asm.SMod, asm.Or, asm.And,
			asm.LSh, asm.RSh, asm.ArSh, asm.Xor, asm.Mov}[g.rng.IntN(14)]
		switch g.rng.IntN(5) {
		case 0: // register form with another number (divisors may be 0)
			s := g.scalarReg(f, r)
			if g.rng.IntN(2) == 0 {
				f.emit(g, aop.Reg(r, s))
			} else {
				f.emit(g, aop.Reg32(r, s))
			}
		case 1:
			f.emit(g, asm.LoadImm(r, int64(g.rng.Uint64()), asm.DWord))
		case 2:
			f.emit(g, []asm.Instruction{asm.BSwap(r, asm.Half), asm.HostTo(asm.BE, r, asm.Word), asm.HostTo(asm.LE, r, asm.Half),
				asm.MovSX8.Reg(r, r), asm.MovSX16.Reg32(r, r), asm.Neg.Imm(r, 0)}[g.rng.IntN(6)])
		default:
			f.emit(g, aop.Imm(r, g.chainImm(aop)))
		}
	}
	g.origin = saved
}

// uninitReg: a register read on a path where it was never written.
func (g *gen) uninitReg(f *function) {
	g.origin = "uninit-reg"
	for _, r := range []asm.Register{asm.R3, asm.R4, asm.R5, asm.R8, asm.R9, asm.R0} {
		if f.st.kind[r] == kNone && !f.reserved[r] {
			if !g.bad() {
				return
			}
			q := g.scratch(f, r)
			f.emit(g, asm.Mov.Reg(q, r))
			g.set(f, q, kScalar, 0)
			g.defect("uninit-reg: r%d read before any write", r)
			return
		}
	}
}

// misc: lddw of a region, helper calls, callx, gotol.
func (g *gen) misc(f *function) {
	g.origin = "misc"
	r := g.scratch(f)
	switch g.rng.IntN(5) {
	case 0:
		if g.bad() && !g.opts.Kernel {
			f.emit(g, asm.Instruction{OpCode: asm.LoadImmOp(asm.DWord), Dst: r, Src: 2, Constant: 0})
			g.set(f, r, kOther, 0)
			g.defect("misc: lddw of region 0, which raw mode does not have")
		}
	case 1:
		if g.bad() && !g.opts.Kernel {
			f.emit(g, asm.FnMapLookupElem.Call())
			for q := asm.R0; q <= asm.R5; q++ {
				g.set(f, q, kNone, 0)
			}
			g.set(f, asm.R0, kScalar, 0)
			g.defect("misc: helper call in raw mode")
		}
	case 2:
		l := g.label()
		f.jump(g, asm.LongJump(""), l)
		f.bind(l)
		f.emit(g, asm.Mov.Imm(r, 1))
		g.set(f, r, kScalar, 0)
	default:
		f.emit(g, asm.LoadImm(r, int64(g.rng.Uint64()), asm.DWord))
		g.set(f, r, kScalar, 0)
		if g.rng.IntN(2) == 0 {
			// a 64-bit mask from lddw bounding an index
			x := g.scratch(f, r)
			off, _ := g.fresh(f, x, 8, false)
			s := g.pickSize(g.mem)
			m := g.mem - int64(s)
			mask := uint64(m)
			if g.bad() {
				mask |= 1 << 32
				g.defect("misc/lddw-mask: mask %#x lets bit 32 through", mask)
			}
			g.origin = "misc/lddw-mask"
			f.emit(g, asm.LoadImm(r, int64(mask), asm.DWord), asm.And.Reg(x, r))
			g.hint(off, 8, ^uint64(0))
			g.indexAccess(f, x, 0, s)
		}
	}
}

// argAccess: a callee's access to the caller's stack through r7.
func (g *gen) argAccess(f *function) {
	g.origin = "arg-access"
	s := 1 << g.rng.IntN(4)
	write := g.rng.IntN(2) == 0
	var off int64
	if write {
		off = []int64{f.argHi - int64(s), f.argLo, 0}[g.rng.IntN(3)]
	} else {
		off = []int64{f.argInit - int64(s), 0}[g.rng.IntN(2)]
	}
	if g.bad() {
		if write {
			off = []int64{f.argHi - int64(s) + 1, f.argHi, f.argLo - 1}[g.rng.IntN(3)]
		} else {
			off = f.argInit - int64(s) + 1
		}
		g.defect("arg-access: %d bytes at caller r10-%d%+d (write %v; writable [%d,%d), initialised [0,%d))",
			s, f.argHi, off, write, f.argLo, f.argHi, f.argInit)
	}
	if write {
		g.access(f, asm.R7, off, s, []accessOp{opStoreImm, opStoreReg}[g.rng.IntN(2)])
		return
	}
	g.access(f, asm.R7, off, s, []accessOp{opLoad, opLoadSX}[g.rng.IntN(2)])
}
