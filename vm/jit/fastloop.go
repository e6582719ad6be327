package jit

import (
	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
)

// Fast loops. An innermost structured loop gets a second copy of its body
// that checks less, chosen at the top of every iteration:
//
//	(at the loop's entry: guards, below)
//	loop $L
//	  block
//	    br_if 0 (left < threshold)   ;; to the exact copy
//	    fast copy                    ;; back edges: br $L
//	  end
//	  exact copy                     ;; as any other loop
//	end
//
// The threshold is the number of instructions in the loop: no iteration
// executes more, so with at least that much budget left no check inside
// the iteration can fault, and the fast copy makes none at its taken
// jumps and exits (it still counts every instruction).
//
// Loads and stores at a register the loop never writes plus an offset the
// block bounds (the masked index of verified code: and with a constant,
// shifts, adds) are guarded once, at the loop's entry: the range every
// such access of the loop can reach from that register must lie in one
// segment with the rights they need. Then the fast copy makes them
// without a check, at the linear base of that segment. A guard that fails
// sets the threshold out of reach, and every iteration runs exact.

// fastLoop is what a loop's fast copy needs.
type fastLoop struct {
	insns  int // instructions in the loop
	groups []hoistGroup
	site   map[int]guardedSite // slot of a guarded access → how it is made
	// saves are the adds of a scalar to an invariant register whose
	// scalar a guarded access uses: slot → the register holding it and
	// the i32 local the fast copy copies it to first.
	saves map[int]savedScalar
	// thresh is the local holding the threshold; each group's linBase the
	// local holding its segment's linear base.
	thresh uint32
	// carry is, for each block after the header, how many of the
	// instructions executed before it the fast copy has counted but not
	// yet taken off lLeft (the least any edge into it brings), so that a
	// path through the iteration takes its count off once or twice, not
	// once per block.
	carry map[int]int
}

// hoistGroup is the accesses of a loop at one invariant register, for
// reading or for writing: offsets lo…end-1 from it. linBase and hostBase
// are locals holding, once the guard passed, the linear base of the
// segment and that plus the register's low 32 bits.
type hoistGroup struct {
	base              asm.Register
	write             bool
	lo, end           int64
	linBase, hostBase uint32
}

// guardedSite is a guarded access: its group, and when its address is
// the group's register plus a saved scalar (scalar, a local) plus off,
// those two.
type guardedSite struct {
	group  int
	scalar uint32 // 0: none
	off    int64
}

// savedScalar is a scalar register the fast copy copies to an i32 local
// before an add: see fastLoop.saves.
type savedScalar struct {
	reg   asm.Register
	local uint32
}

// absVal is what a register holds within a block: unknown, a scalar in
// lo…hi, or an invariant register's value plus lo…hi. A based value may
// also be known as the register plus the local scalar (a scalar saved
// before the add that made it; 0 for none) plus off.
type absVal struct {
	kind   uint8
	base   asm.Register
	lo, hi int64
	scalar uint32
	off    int64
}

const (
	absUnknown = iota
	absScalar
	absBased
)

// boundLimit keeps every bound and range far from overflowing: offsets
// beyond it are not guarded.
const boundLimit = 1 << 32

// findFast returns the fast copy's plan for loop l, or nil when l is not
// innermost or would gain nothing (one block and no guarded access).
func (t *translator) findFast(l loop) *fastLoop {
	for h := range t.loops {
		if h > l.header && h <= l.end {
			return nil // not innermost
		}
	}
	from, to := t.blocks[l.header], t.total
	if l.end+1 < len(t.blocks) {
		to = t.blocks[l.end+1]
	}
	var written [11]bool
	f := &fastLoop{site: map[int]guardedSite{}, saves: map[int]savedScalar{}}
	for slot := from; slot < to; slot++ {
		ins := t.insns[slot]
		if ins == nil {
			continue
		}
		f.insns++
		for _, r := range writes(ins) {
			written[r] = true
		}
	}
	for b := l.header; b <= l.end; b++ {
		end := to
		if b+1 < len(t.blocks) {
			end = min(to, t.blocks[b+1])
		}
		t.scanBlock(f, written, t.blocks[b], end)
	}
	if len(f.groups) == 0 && l.end == l.header {
		return nil
	}
	f.carry = t.carries(l, to)
	return f
}

// carries computes fastLoop.carry for loop l, whose blocks end before
// slot to. Every edge from block a (its jump's and its fall-through) has
// counted carry[a] plus a's instructions; a block takes the least its
// edges bring, and each edge takes the rest off lLeft. The header carries
// nothing (the threshold test reads lLeft), nor does a dispatch target
// (entered with nothing pending); and when a jump inside the loop goes
// back to a block other than the header, no block carries anything.
func (t *translator) carries(l loop, to int) map[int]int {
	carry := map[int]int{}
	reached := map[int]bool{} // blocks an edge counted so far reaches
	for b := l.header; b <= l.end; b++ {
		if b == l.header || !reached[b] {
			carry[b] = 0
		}
		if _, ok := t.dispatch[t.blocks[b]]; ok {
			carry[b] = 0
		}
		end := to
		if b+1 < len(t.blocks) {
			end = min(to, t.blocks[b+1])
		}
		n, last := 0, -1
		for slot := t.blocks[b]; slot < end; slot++ {
			if t.insns[slot] != nil {
				n, last = n+1, slot
			}
		}
		out := carry[b] + n
		edge := func(dst int) bool {
			switch {
			case dst > l.end || dst == l.header:
			case dst <= b:
				return false
			case !reached[dst]:
				carry[dst], reached[dst] = out, true
			default:
				carry[dst] = min(carry[dst], out)
			}
			return true
		}
		falls := true
		if last >= 0 {
			ins := t.insns[last]
			raw := bytecode.RawOpcode(ins)
			if target, ok := jumpTarget(ins, last); ok && raw != bytecode.OpCall && !edge(t.index[target]) {
				return map[int]int{}
			}
			falls = raw != bytecode.OpJa && raw != bytecode.OpJa32 && raw != bytecode.OpExit && raw != bytecode.OpCall
		}
		if falls && !edge(b+1) {
			return map[int]int{}
		}
	}
	return carry
}

// scanBlock follows the registers through slots from…to-1, one block,
// and records the accesses it can guard.
func (t *translator) scanBlock(f *fastLoop, written [11]bool, from, to int) {
	var regs [11]absVal
	for r := range asm.R10 {
		if !written[r] {
			regs[r] = absVal{kind: absBased, base: r}
		}
	}
	for slot := from; slot < to; slot++ {
		ins := t.insns[slot]
		if ins == nil {
			continue
		}
		raw := bytecode.RawOpcode(ins)
		switch class := asm.Class(raw & 7); {
		case class == asm.LdXClass:
			f.guard(slot, regs[ins.Src], ins.Offset, sizeOf(raw), false)
		case class == asm.StClass || class == asm.StXClass && raw&0xe0 == 0x60:
			f.guard(slot, regs[ins.Dst], ins.Offset, sizeOf(raw), true)
		case class == asm.ALU64Class:
			v := aluStep(ins, regs)
			if v.kind == absBased && ins.OpCode.ALUOp() == asm.Add && ins.OpCode.Source() == asm.RegSource {
				t.saveScalar(f, slot, ins, regs, &v)
			}
			regs[ins.Dst] = v
			continue
		}
		for _, r := range writes(ins) {
			regs[r] = absVal{}
		}
	}
}

// saveScalar makes v, the sum of a scalar and an invariant register plus
// a constant that ins (an add of registers at slot) computes, known as
// that register plus a saved copy of the scalar plus the constant: the
// fast copy copies the scalar to a local of its own before the add, so
// that an access there needs one addition, of the scalar to the group's
// host base.
func (t *translator) saveScalar(f *fastLoop, slot int, ins *asm.Instruction, regs [11]absVal, v *absVal) {
	d, s := regs[ins.Dst], regs[ins.Src]
	scalar, based := ins.Dst, s
	if d.kind == absBased {
		scalar, based = ins.Src, d
	}
	if regs[scalar].kind != absScalar || based.kind != absBased || based.scalar != 0 || based.lo != based.hi {
		return
	}
	l := t.newLocal(wI32)
	f.saves[slot] = savedScalar{reg: scalar, local: l}
	v.scalar, v.off = l, based.lo
}

// aluStep is what a 64-bit ALU instruction leaves in its destination.
func aluStep(ins *asm.Instruction, regs [11]absVal) absVal {
	d := regs[ins.Dst]
	reg := ins.OpCode.Source() == asm.RegSource
	imm := ins.Constant
	var s absVal
	if reg {
		s = regs[ins.Src]
	} else if imm >= 0 && imm < boundLimit {
		s = absVal{kind: absScalar, lo: imm, hi: imm}
	}
	switch ins.OpCode.ALUOp() {
	case asm.Mov:
		return s
	case asm.And:
		if !reg && imm >= 0 {
			return absVal{kind: absScalar, lo: 0, hi: imm}
		}
	case asm.LSh:
		if !reg && d.kind == absScalar && imm < 32 && d.hi<<imm < boundLimit {
			return absVal{kind: absScalar, lo: d.lo << imm, hi: d.hi << imm}
		}
	case asm.Add:
		if !reg && imm < 0 && imm > -boundLimit && d.kind == absBased {
			s = absVal{kind: absScalar, lo: imm, hi: imm} // a based pointer may step back
		}
		switch {
		case s.kind == absUnknown || d.kind == absUnknown:
		case d.kind == absBased && s.kind == absScalar && !reg && d.scalar != 0:
			// The saved scalar stays; the constant moves.
			return bounded(absVal{kind: absBased, base: d.base, lo: d.lo + s.lo, hi: d.hi + s.hi, scalar: d.scalar, off: d.off + s.lo})
		case d.kind == absBased && s.kind == absScalar:
			return bounded(absVal{kind: absBased, base: d.base, lo: d.lo + s.lo, hi: d.hi + s.hi})
		case d.kind == absScalar && s.kind == absBased:
			return bounded(absVal{kind: absBased, base: s.base, lo: d.lo + s.lo, hi: d.hi + s.hi})
		case d.kind == absScalar && s.kind == absScalar:
			return bounded(absVal{kind: absScalar, lo: d.lo + s.lo, hi: d.hi + s.hi})
		}
	}
	return absVal{}
}

// bounded drops a value whose bounds grew past boundLimit.
func bounded(v absVal) absVal {
	if v.lo <= -boundLimit || v.hi >= boundLimit || v.kind == absScalar && v.lo < 0 {
		return absVal{}
	}
	return v
}

// guard records the access at slot, of size bytes at v+off, as guarded
// when v is an invariant register plus a bounded offset.
func (f *fastLoop) guard(slot int, v absVal, off int16, size uint32, write bool) {
	if v.kind != absBased {
		return
	}
	lo, end := v.lo+int64(off), v.hi+int64(off)+int64(size)
	site := guardedSite{group: len(f.groups), scalar: v.scalar, off: v.off + int64(off)}
	for i := range f.groups {
		g := &f.groups[i]
		if g.base == v.base && g.write == write {
			g.lo, g.end = min(g.lo, lo), max(g.end, end)
			site.group = i
			f.site[slot] = site
			return
		}
	}
	f.groups = append(f.groups, hoistGroup{base: v.base, write: write, lo: lo, end: end})
	f.site[slot] = site
}

// writes returns the registers an instruction may write.
func writes(ins *asm.Instruction) []asm.Register {
	raw := bytecode.RawOpcode(ins)
	switch class := asm.Class(raw & 7); class {
	case asm.ALUClass, asm.ALU64Class, asm.LdXClass, asm.LdClass:
		return []asm.Register{ins.Dst}
	case asm.StXClass:
		if raw&0xe0 == 0x60 {
			return nil
		}
		switch op := ins.OpCode.AtomicOp(); op {
		case asm.AddAtomic, asm.OrAtomic, asm.AndAtomic, asm.XorAtomic:
			return nil
		case asm.CmpXchg:
			return []asm.Register{asm.R0}
		}
		return []asm.Register{ins.Src}
	case asm.JumpClass, asm.Jump32Class:
		if raw == bytecode.OpCall || raw == bytecode.OpCallX {
			return []asm.Register{asm.R0, asm.R1, asm.R2, asm.R3, asm.R4, asm.R5}
		}
	}
	return nil
}

// emitGuards computes, at a fast loop's entry, the threshold and each
// group's linear base: the threshold is the loop's instruction count, or
// out of reach (2^63-1) when a group's range is not all in one segment
// with its rights.
func (t *translator) emitGuards(f *fastLoop) {
	c := &t.c
	f.thresh = t.newLocal(wI64)
	c.i64(int64(f.insns))
	c.set(f.thresh)
	for i := range f.groups {
		g := &f.groups[i]
		g.linBase = t.newLocal(wI32)
		// lA = base + lo, lT = base + end - 1; lH = segment×8 of lA.
		c.get(reg(g.base))
		c.i64(g.lo)
		c.op(opI64Add)
		c.set(lA)
		c.get(reg(g.base))
		c.i64(g.end - 1)
		c.op(opI64Add)
		c.set(lT)
		t.segIndex()
		c.get(lH)
		c.mem(opI32Load, 2, baseTable)
		c.tee(g.linBase)
		g.hostBase = t.newLocal(wI32)
		c.get(reg(g.base))
		c.op(opI32WrapI64)
		c.op(opI32Add)
		c.set(g.hostBase)
		// Fits: lA < 2^40 (a segment number below 256), lA <= lT (no
		// wrap) and lT below the segment's limit for single bytes.
		c.get(lA)
		c.i64(40)
		c.op(opI64ShrU)
		c.op(opI64Eqz)
		c.get(lA)
		c.get(lT)
		c.op(opI64LeU)
		c.op(opI32And)
		c.get(lT)
		c.get(lH)
		c.mem(opI64Load, 3, limitTable(1, g.write))
		c.op(opI64LtU)
		c.op(opI32And)
		c.op(opI32Eqz)
		c.op(opIf, blockTypeEmpty)
		c.i64(1<<63 - 1)
		c.set(f.thresh)
		c.op(opEnd)
	}
}

// guardedAddr leaves the host address of a guarded access in the fast
// copy: its segment's linear base plus the address's low 32 bits; for an
// address known as the group's register plus a saved scalar and a
// constant, the group's host base plus those, in 32 bits. (Either way the
// sum is the address's offset in the segment the guard found, modulo
// 2^32, plus that segment's base.)
func (t *translator) guardedAddr(g *hoistGroup, s guardedSite, base asm.Register, off int16) {
	c := &t.c
	if s.scalar != 0 {
		c.get(s.scalar)
		c.get(g.hostBase)
		c.op(opI32Add)
		if s.off != 0 {
			c.i32(int32(s.off))
			c.op(opI32Add)
		}
		return
	}
	c.get(reg(base))
	if off != 0 {
		c.i64(int64(off))
		c.op(opI64Add)
	}
	c.op(opI32WrapI64)
	c.get(g.linBase)
	c.op(opI32Add)
}
