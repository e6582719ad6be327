package verifier

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/verifier/internal/scalar"
)

// maxPacketOff bounds the variable part of a request or reply pointer, as
// the kernel's MAX_PACKET_OFF.
const maxPacketOff = 0xffff

// fail builds a rejection at slot showing the given registers.
func (c *checker) fail(slot int, code Code, st *state, regs []asm.Register, format string, args ...any) *Error {
	e := &Error{Insn: slot, Pos: c.pos(slot), Code: code, Msg: fmt.Sprintf(format, args...)}
	for _, r := range regs {
		if st != nil && int(r) < len(st.regs) {
			e.State = append(e.State, fmt.Sprintf("r%d: %s", r, st.regs[r]))
		}
	}
	return e
}

func (c *checker) pos(slot int) string {
	if c.cfg.Position == nil {
		return ""
	}
	return c.cfg.Position(slot)
}

// use reads register r, which must have been written and have one type.
func (c *checker) use(st *state, slot int, r asm.Register) (value, *Error) {
	v := st.regs[r]
	switch v.kind {
	case kUninit:
		return v, c.fail(slot, CodeUninitReg, st, nil, "r%d is read but was never written on some path here", r)
	case kConflict:
		return v, c.fail(slot, CodeUninitReg, st, nil, "r%d holds values of different types on paths that merge before here (a pointer on one, something else on another)", r)
	}
	return v, nil
}

// step applies one instruction that is not a block terminator.
func (c *checker) step(st *state, slot int) *Error {
	ins := c.p.at(slot)
	op := bytecode.RawOpcode(ins)
	switch asm.Class(op & 7) {
	case asm.ALUClass, asm.ALU64Class:
		return c.alu(st, slot, ins, op)
	case asm.LdClass:
		return c.lddw(st, slot, ins)
	case asm.LdXClass:
		return c.load(st, slot, ins, op)
	case asm.StClass, asm.StXClass:
		if op&0xe0 == 0xc0 {
			return c.atomic(st, slot, ins, op)
		}
		return c.store(st, slot, ins, op)
	case asm.JumpClass: // helper calls; the rest are terminators
		return c.helperCall(st, slot, ins, op)
	}
	return c.fail(slot, CodeInvalidInsn, st, nil, "unexpected instruction %#02x", op)
}

// aluOp maps an ALU operation to the scalar domain's.
func aluOp(op asm.ALUOp) (scalar.Op, bool) {
	switch op {
	case asm.Add:
		return scalar.Add, true
	case asm.Sub:
		return scalar.Sub, true
	case asm.Mul:
		return scalar.Mul, true
	case asm.Div:
		return scalar.Div, true
	case asm.SDiv:
		return scalar.SDiv, true
	case asm.Or:
		return scalar.Or, true
	case asm.And:
		return scalar.And, true
	case asm.LSh:
		return scalar.Lsh, true
	case asm.RSh:
		return scalar.Rsh, true
	case asm.Mod:
		return scalar.Mod, true
	case asm.SMod:
		return scalar.SMod, true
	case asm.Xor:
		return scalar.Xor, true
	case asm.Mov:
		return scalar.Mov, true
	case asm.ArSh:
		return scalar.Arsh, true
	case asm.Neg:
		return scalar.Neg, true
	case asm.MovSX8:
		return scalar.MovSX8, true
	case asm.MovSX16:
		return scalar.MovSX16, true
	case asm.MovSX32:
		return scalar.MovSX32, true
	}
	return 0, false
}

func swapOp(op byte, width int64) scalar.Op {
	alu64 := op&7 == byte(asm.ALU64Class)
	be := op&0x08 != 0
	idx := 0
	switch width {
	case 32:
		idx = 1
	case 64:
		idx = 2
	}
	switch {
	case alu64 || be:
		return [3]scalar.Op{scalar.Bswap16, scalar.Bswap32, scalar.Bswap64}[idx]
	}
	return [3]scalar.Op{scalar.Le16, scalar.Le32, scalar.Le64}[idx]
}

func (c *checker) alu(st *state, slot int, ins *asm.Instruction, op byte) *Error {
	alu64 := op&7 == byte(asm.ALU64Class)
	reg := op&0x08 != 0
	aop := ins.OpCode.ALUOp()
	var src value
	if aop == asm.Swap {
		reg = false
	}
	if reg {
		v, err := c.use(st, slot, ins.Src)
		if err != nil {
			return err
		}
		src = v
	} else {
		src = constValue(uint64(ins.Constant))
	}
	dst := st.regs[ins.Dst]
	switch aop {
	case asm.Mov, asm.MovSX8, asm.MovSX16, asm.MovSX32:
		if src.kind.isPointer() {
			if aop == asm.Mov && alu64 {
				st.regs[ins.Dst] = src
				return nil
			}
			how := "32-bit"
			if aop != asm.Mov {
				how = "sign-extending"
			}
			return c.fail(slot, CodePointerArith, st, []asm.Register{ins.Src}, "a %s move of a pointer would expose address bits as a number", how)
		}
		mop, _ := aluOp(aop)
		st.regs[ins.Dst] = scalarValue(scalar.ALU(mop, alu64, scalar.Unknown(), src.off))
		return nil
	}
	d, err := c.use(st, slot, ins.Dst)
	if err != nil {
		return err
	}
	if d.kind.isPointer() || src.kind.isPointer() {
		v, err := c.pointerArith(st, slot, ins, aop, alu64, d, src)
		if err != nil {
			return err
		}
		st.regs[ins.Dst] = v
		return nil
	}
	sop, ok := aluOp(aop)
	if aop == asm.Swap {
		sop, ok = swapOp(op, ins.Constant), true
	}
	if !ok {
		return c.fail(slot, CodeInvalidInsn, st, nil, "unsupported ALU operation")
	}
	if err := c.m.step(aluCost(aop, alu64, dst.off, src.off), slot); err != nil {
		return err
	}
	st.regs[ins.Dst] = scalarValue(scalar.ALU(sop, alu64, dst.off, src.off))
	return nil
}

// aluCost is what an ALU operation on abstract values costs in steps
// beyond its one: nothing when both are constants, which fold; more for
// 32-bit operations, which the domain computes on two views; most for a
// shift by a variable count, which it computes once per count (up to 64).
func aluCost(aop asm.ALUOp, alu64 bool, d, s scalar.Value) int64 {
	_, dc := d.Const()
	_, sc := s.Const()
	switch {
	case dc && sc:
		return 0
	case (aop == asm.LSh || aop == asm.RSh || aop == asm.ArSh) && !sc:
		return 1024
	case !alu64:
		return 64
	}
	return 16
}

// pointerArith allows pointer ± scalar and the difference of two pointers
// into one object, or of a request or reply pointer and its end (the
// length that is left); everything else would forge or expose addresses.
// The context pointer takes no arithmetic at all (spec/abi.md): its fields
// are read at constant offsets from it.
func (c *checker) pointerArith(st *state, slot int, ins *asm.Instruction, aop asm.ALUOp, alu64 bool, d, s value) (value, *Error) {
	regs := []asm.Register{ins.Dst}
	if ins.OpCode.Source() == asm.RegSource {
		regs = append(regs, ins.Src)
	}
	bad := func(why string) (value, *Error) {
		return value{}, c.fail(slot, CodePointerArith, st, regs, "%s", why)
	}
	if d.kind == kCtx || s.kind == kCtx {
		return bad("arithmetic on the context pointer: read its fields with ldxdw at their offsets (0, 8, …, 56) from it instead")
	}
	if !alu64 {
		return bad("32-bit arithmetic on a pointer")
	}
	if aop == asm.Sub && d.kind.isPointer() && s.kind.isPointer() {
		if n, ok := packetLength(d, s); ok {
			return n, nil
		}
	}
	switch {
	case aop == asm.Add && d.kind.isPointer() && s.kind.isPointer():
		return bad("adding two pointers")
	case aop == asm.Add && d.kind.isPointer():
		return c.offset(st, slot, regs, d, s, 1)
	case aop == asm.Add:
		return c.offset(st, slot, regs, s, d, 1)
	case aop == asm.Sub && d.kind.isPointer() && s.kind.isPointer():
		if !d.sameObject(s) {
			return bad(fmt.Sprintf("subtracting pointers into different objects (%s, %s)", d.kind, s.kind))
		}
		if d.kind.packetLike() {
			if d.id == 0 && s.id == 0 {
				return constValue(uint64(d.fixed - s.fixed)), nil
			}
			return unknownScalar(), nil
		}
		if d.kind == kReqEnd || d.kind == kReplyEnd {
			return constValue(0), nil
		}
		return scalarValue(scalar.ALU(scalar.Sub, true, d.off, s.off)), nil
	case aop == asm.Sub && d.kind.isPointer():
		return c.offset(st, slot, regs, d, s, -1)
	case aop == asm.Sub:
		return bad("subtracting a pointer from a number")
	}
	return bad(fmt.Sprintf("operation %v on a pointer (only adding or subtracting a number is allowed)", aop))
}

// maxPacketLen is the most bytes a request or reply can have: a VM
// segment (vm.MaxSegmentSize).
const maxPacketLen = 1<<32 - 1

// packetLength is end - p or p - end for a request or reply pointer p and
// its end: a number, the bytes left from p (negative when p is past the
// end). A comparison with the end that proved rng bytes from p's base
// gives the lower bound.
func packetLength(d, s value) (value, bool) {
	neg := false
	p, end := s, d
	if d.kind.packetLike() {
		p, end, neg = d, s, true
	}
	if !p.kind.packetLike() || endOf(p.kind) != end.kind {
		return value{}, false
	}
	// end - (base + var + fixed), with base <= end <= base + maxPacketLen.
	left := scalar.Range(0, maxPacketLen)
	if p.id == 0 {
		left = scalar.Range(uint64(max(p.rng, 0)), maxPacketLen)
	}
	n := scalar.ALU(scalar.Sub, true, left, p.off)
	n = scalar.ALU(scalar.Sub, true, n, scalar.Const(uint64(p.fixed)))
	if neg {
		n = scalar.ALU(scalar.Neg, true, n, n)
	}
	return scalarValue(n), true
}

// endName names the context field that ends packet kind k.
func endName(k kind) string {
	if k == kReply {
		return "reply"
	}
	return "data"
}

// offset moves pointer p by sign×s.
func (c *checker) offset(st *state, slot int, regs []asm.Register, p, s value, sign int64) (value, *Error) {
	k, isConst := s.off.Const()
	switch p.kind {
	case kReqEnd, kReplyEnd:
		return value{}, c.fail(slot, CodePointerArith, st, regs, "arithmetic on %s (compare against it instead)", p.kind)
	case kReq, kReply:
		if isConst {
			f := int64(p.fixed) + sign*int64(k)
			if f < -maxPacketOff || f > maxPacketOff {
				return value{}, c.fail(slot, CodePointerArith, st, regs, "offset %d into %s is out of any packet's range", f, p.kind)
			}
			p.fixed = int32(f)
			return p, nil
		}
		if sign < 0 {
			return value{}, c.fail(slot, CodePointerArith, st, regs, "subtracting a variable from a %s pointer", p.kind)
		}
		p.off = scalar.ALU(scalar.Add, true, p.off, s.off)
		p.id = int32(slot + 1)
		p.rng, p.solo = 0, false
		// Values that still carry this identity come from an earlier run
		// of this instruction (a loop, another call): their variable part
		// differs, so they must not share what a comparison proves.
		demote(st, p.kind, p.id)
		return p, nil
	}
	op := scalar.Add
	if sign < 0 {
		op = scalar.Sub
	}
	p.off = scalar.ALU(op, true, p.off, s.off)
	return p, nil
}

// demote makes every holder of packet identity id solo.
func demote(st *state, k kind, id int32) {
	match := func(v *value) bool { return v.kind == k && v.id == id && !v.solo }
	upd := func(v *value) {
		if match(v) {
			v.solo = true
		}
	}
	for i := range st.regs {
		upd(&st.regs[i])
	}
	eachFrameValue(st, match, upd)
}

func (c *checker) lddw(st *state, slot int, ins *asm.Instruction) *Error {
	if ins.Src != bytecode.PseudoMapValue {
		st.regs[ins.Dst] = constValue(uint64(ins.Constant))
		return nil
	}
	idx, off := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
	if int(idx) >= len(c.cfg.Regions) {
		return c.fail(slot, CodeOutOfBounds, st, nil, "region %d does not exist (the program has %d regions)", idx, len(c.cfg.Regions))
	}
	st.regs[ins.Dst] = value{kind: kRegion, region: int16(idx), off: scalar.Const(uint64(off))}
	return nil
}

// object is an access's target and the byte range every possible address
// of it covers.
type access struct {
	ptr    value
	lo, hi int64 // [lo, hi): offsets in the object (stack: from the frame pointer)
	exact  bool  // the offset is a known constant
}

// check proves that a size-byte access through register r at insn offset
// off stays inside its object, with the right permissions and alignment.
func (c *checker) check(st *state, slot int, r asm.Register, off int64, size int, write, atomic bool) (access, *Error) {
	if st.regs[r].kind == kConflict {
		return access{}, c.fail(slot, CodeNotAPointer, st, nil, "memory access through r%d, which holds a number on some path that merges before here", r)
	}
	p, err := c.use(st, slot, r)
	if err != nil {
		return access{}, err
	}
	regs := []asm.Register{r}
	verb := "read"
	if write {
		verb = "write"
	}
	if !p.kind.isPointer() {
		return access{}, c.fail(slot, CodeNotAPointer, st, regs, "%s through r%d, which holds a number, not a pointer", verb, r)
	}
	a := access{ptr: p}
	var objLo, objHi int64
	var what string
	switch p.kind {
	case kReqEnd, kReplyEnd:
		return a, c.fail(slot, CodeOutOfBounds, st, regs, "%s through %s, which points past the end", verb, p.kind)
	case kCtx:
		co, ok := p.off.Const()
		field, okf := bytecode.CtxFieldAt(int(int64(co) + off))
		if !ok || !okf || size != 8 {
			return a, c.fail(slot, CodeContextAccess, st, regs, "context access of %d bytes at offset %d: handlers load whole 8-byte fields at offsets 0, 8, …, %d", size, int64(co)+off, bytecode.CtxSize-8)
		}
		if write {
			return a, c.fail(slot, CodeReadOnly, st, regs, "write to the context field %s: the context is read-only", field.Name)
		}
		a.lo, a.hi, a.exact = int64(co)+off, int64(co)+off+8, true
		return a, nil
	case kReq, kReply:
		if p.off.Smin < 0 || p.off.Umax > maxPacketOff {
			return a, c.fail(slot, CodeOutOfBounds, st, regs, "the variable offset of r%d into %s is not bounded (%s)", r, p.kind, p.off)
		}
		lo, hi := int64(p.fixed)+off, int64(p.fixed)+off+int64(size)
		if lo < 0 || hi > int64(p.rng) {
			if p.rng == 0 {
				return a, c.fail(slot, CodeOutOfBounds, st, regs, "%s of %d bytes at %s%+d before any check against %s_end proved them inside", verb, size, p.kind, lo, endName(p.kind))
			}
			return a, c.fail(slot, CodeOutOfBounds, st, regs, "%s of %d bytes at %s%+d, but only %d bytes are proved inside by the check against its end", verb, size, p.kind, lo, p.rng)
		}
		if write && p.kind == kReq {
			return a, c.fail(slot, CodeReadOnly, st, regs, "write to the request: it is read-only (answer in the reply)")
		}
		a.lo, a.hi = lo, hi
		_, a.exact = p.off.Const()
		return a, c.alignment(st, slot, regs, p.off, lo, size, atomic)
	case kStack:
		objLo, objHi, what = -stackSize, 0, fmt.Sprintf("the stack frame of r%d ([r10-%d, r10))", r, stackSize)
	case kMem:
		objLo, objHi, what = 0, int64(c.cfg.MemSize), fmt.Sprintf("the memory (%d bytes)", c.cfg.MemSize)
	case kRegion:
		reg := c.cfg.Regions[p.region]
		objLo, objHi, what = 0, int64(reg.Size), fmt.Sprintf("region %d %q (%d bytes)", p.region, reg.Name, reg.Size)
		if write && !reg.Writable {
			return a, c.fail(slot, CodeReadOnly, st, regs, "write to region %q, which is read-only", reg.Name)
		}
	}
	const limit = 1 << 40
	if p.off.Smin < -limit || p.off.Smax > limit {
		return a, c.fail(slot, CodeOutOfBounds, st, regs, "%s of %d bytes through r%d with an unbounded offset %s into %s", verb, size, r, p.off, what)
	}
	a.lo, a.hi = p.off.Smin+off, p.off.Smax+off+int64(size)
	if a.lo < objLo || a.hi > objHi {
		if _, ok := p.off.Const(); ok {
			return a, c.fail(slot, CodeOutOfBounds, st, regs, "%s of %d bytes at offset %d is outside %s", verb, size, a.lo, what)
		}
		return a, c.fail(slot, CodeOutOfBounds, st, regs, "%s of %d bytes at offsets %d..%d may fall outside %s", verb, size, a.lo, a.hi-1, what)
	}
	_, a.exact = p.off.Const()
	return a, c.alignment(st, slot, regs, p.off, off, size, atomic)
}

// alignment requires atomics to be naturally aligned for every offset. The
// bases (frame pointers, memory, regions, packets) are 8-byte aligned.
func (c *checker) alignment(st *state, slot int, regs []asm.Register, varOff scalar.Value, constOff int64, size int, atomic bool) *Error {
	if !atomic {
		return nil
	}
	mask := uint64(size - 1)
	if varOff.T.Mask&mask != 0 || (varOff.T.Value+uint64(constOff))&mask != 0 {
		return c.fail(slot, CodeMisaligned, st, regs, "atomic access of %d bytes is not provably %d-byte aligned (offset %s%+d)", size, size, varOff, constOff)
	}
	return nil
}

func (c *checker) load(st *state, slot int, ins *asm.Instruction, op byte) *Error {
	size := asm.Size(op & 0x18).Sizeof()
	signExt := op&0xe0 == 0x80
	a, err := c.check(st, slot, ins.Src, int64(ins.Offset), size, false, false)
	if err != nil {
		return err
	}
	var v value
	switch a.ptr.kind {
	case kCtx:
		field, _ := bytecode.CtxFieldAt(int(a.lo))
		switch field.Kind {
		case bytecode.CtxKindRequest:
			v = pointer(kReq, 0)
		case bytecode.CtxKindRequestEnd:
			v = pointer(kReqEnd, 0)
		case bytecode.CtxKindReply:
			v = pointer(kReply, 0)
		case bytecode.CtxKindReplyEnd:
			v = pointer(kReplyEnd, 0)
		default:
			v = unknownScalar()
		}
	case kStack:
		v, err = c.readStack(st, slot, ins.Src, a, size)
		if err != nil {
			return err
		}
	default:
		if a.ptr.kind == kRegion {
			if err := c.regionUse(st, slot, []asm.Register{ins.Src}, a.ptr.region, false, "load", false); err != nil {
				return err
			}
		}
		v = scalarValue(unknownOfSize(size))
	}
	if signExt && v.kind == kScalar {
		v.off = scalar.ALU([4]scalar.Op{scalar.MovSX32, scalar.MovSX16, scalar.MovSX8, scalar.Mov}[(op>>3)&3], true, scalar.Unknown(), v.off)
	}
	st.regs[ins.Dst] = v
	return nil
}

// readStack reads [a.lo, a.hi) of the frame a.ptr points into.
func (c *checker) readStack(st *state, slot int, r asm.Register, a access, size int) (value, *Error) {
	f := st.frames[a.ptr.frame]
	i0 := a.lo + stackSize
	if a.exact && size == 8 && i0%8 == 0 && f.bytes[i0] == bSpill {
		return f.spill(int(i0 / 8)), nil
	}
	for i := a.lo; i < a.hi; i++ {
		switch b := f.bytes[i+stackSize]; {
		case b == bUninit:
			return value{}, c.fail(slot, CodeUninitStack, st, []asm.Register{r}, "read of %d bytes at fp%d reaches fp%d, which was never written", size, a.lo, i)
		case b == bTaint || (b == bSpill && f.spill(int((i+stackSize)/8)).kind.isPointer()):
			return value{}, c.fail(slot, CodePointerLeak, st, []asm.Register{r}, "read of %d bytes at fp%d would expose part of a spilled pointer at fp%d as a number", size, a.lo, i)
		}
	}
	// A narrow read of a constant spill is still a constant.
	if a.exact && f.bytes[i0] == bSpill && i0/8 == (a.hi-1+stackSize)/8 {
		if k, ok := f.spill(int(i0 / 8)).off.Const(); ok {
			v := k >> (8 * (i0 % 8))
			if size < 8 {
				v &= 1<<(8*size) - 1
			}
			return constValue(v), nil
		}
	}
	return scalarValue(unknownOfSize(size)), nil
}

func (c *checker) store(st *state, slot int, ins *asm.Instruction, op byte) *Error {
	size := asm.Size(op & 0x18).Sizeof()
	var v value
	regs := []asm.Register{ins.Dst}
	if asm.Class(op&7) == asm.StClass {
		v = constValue(uint64(ins.Constant))
	} else {
		var err *Error
		if v, err = c.use(st, slot, ins.Src); err != nil {
			return err
		}
		regs = append(regs, ins.Src)
	}
	a, err := c.check(st, slot, ins.Dst, int64(ins.Offset), size, true, false)
	if err != nil {
		return err
	}
	if a.ptr.kind != kStack {
		if v.kind.isPointer() {
			return c.fail(slot, CodePointerLeak, st, regs, "storing a pointer into %s would leak an address", a.ptr.kind)
		}
		if a.ptr.kind == kRegion {
			return c.regionUse(st, slot, regs, a.ptr.region, true, "store", false)
		}
		return nil
	}
	if v.kind.isPointer() && !(a.exact && size == 8 && (a.lo+stackSize)%8 == 0) {
		return c.fail(slot, CodePointerLeak, st, regs, "a pointer may only be spilled whole: 8 bytes at an 8-byte aligned constant stack offset")
	}
	f := st.writeFrame(int(a.ptr.frame))
	switch {
	case a.exact && size == 8 && (a.lo+stackSize)%8 == 0:
		f.mark(a.lo, a.hi, bSpill)
		f.setSpill(int((a.lo+stackSize)/8), v)
		f.pkts = f.pkts || v.kind.packetLike()
	case a.exact:
		f.mark(a.lo, a.hi, bMisc)
	default:
		f.clobber(a.lo, a.hi)
	}
	return nil
}

var atomicFetches = map[asm.AtomicOp]bool{
	asm.FetchAdd: true, asm.FetchOr: true, asm.FetchAnd: true, asm.FetchXor: true, asm.Xchg: true,
}

func (c *checker) atomic(st *state, slot int, ins *asm.Instruction, op byte) *Error {
	size := asm.Size(op & 0x18).Sizeof()
	aop := ins.OpCode.AtomicOp()
	src, err := c.use(st, slot, ins.Src)
	if err != nil {
		return err
	}
	regs := []asm.Register{ins.Dst, ins.Src}
	if src.kind.isPointer() {
		return c.fail(slot, CodePointerLeak, st, regs, "an atomic operation with a pointer operand would store or expose an address")
	}
	if aop == asm.CmpXchg {
		r0, err := c.use(st, slot, asm.R0)
		if err != nil {
			return err
		}
		if r0.kind.isPointer() {
			return c.fail(slot, CodePointerLeak, st, []asm.Register{asm.R0}, "cmpxchg compares memory with r0, which holds a pointer")
		}
	}
	a, err := c.check(st, slot, ins.Dst, int64(ins.Offset), size, true, true)
	if err != nil {
		return err
	}
	switch a.ptr.kind {
	case kStack:
		f := st.frames[a.ptr.frame]
		for i := a.lo; i < a.hi; i++ {
			switch b := f.bytes[i+stackSize]; {
			case b == bUninit:
				return c.fail(slot, CodeUninitStack, st, regs, "atomic operation on fp%d, which was never written", i)
			case b == bTaint || (b == bSpill && f.spill(int((i+stackSize)/8)).kind.isPointer()):
				return c.fail(slot, CodePointerLeak, st, regs, "atomic operation on a spilled pointer at fp%d", i)
			}
		}
		f = st.writeFrame(int(a.ptr.frame))
		if a.exact {
			f.mark(a.lo, a.hi, bMisc)
		} else {
			f.clobber(a.lo, a.hi)
		}
	case kRegion:
		c.regionsRead[a.ptr.region] = true
		_, verb := verbAtomics[aop]
		if err := c.regionUse(st, slot, regs, a.ptr.region, true, atomicName(aop, size), verb && size == 8); err != nil {
			return err
		}
	}
	switch {
	case aop == asm.CmpXchg:
		st.regs[asm.R0] = scalarValue(unknownOfSize(size))
	case atomicFetches[aop]:
		st.regs[ins.Src] = scalarValue(unknownOfSize(size))
	}
	return nil
}

// helperCall checks a helper's arguments against its signature and applies
// its effect: r0 a number, r1–r5 clobbered.
func (c *checker) helperCall(st *state, slot int, ins *asm.Instruction, op byte) *Error {
	if op == bytecode.OpCallX {
		return c.fail(slot, CodeUnknownHelper, st, []asm.Register{ins.Dst}, "callx (a helper number in a register) cannot be verified; call helpers by number")
	}
	id := uint32(ins.Constant)
	spec, ok := bytecode.Helper(id)
	if c.cfg.Raw || !ok {
		where := "raw mode has no helpers"
		if !c.cfg.Raw {
			where = fmt.Sprintf("helpers are 1..%d (spec/abi.md)", len(bytecode.Helpers)-1)
		}
		return c.fail(slot, CodeUnknownHelper, st, nil, "call of helper %d: %s", id, where)
	}
	c.helpersUsed[id] = true
	if err := c.helperRule(st, slot, spec); err != nil {
		return err
	}
	for i := 0; i < spec.NumArgs(); i++ {
		r := asm.Register(i + 1)
		v, err := c.use(st, slot, r)
		if err != nil {
			err.Msg = fmt.Sprintf("%s: argument %s (r%d): %s", spec.Signature(), spec.ArgNames[i], r, err.Msg)
			return err
		}
		kind := spec.Args[i]
		switch {
		case kind == bytecode.ArgScalar || kind == bytecode.ArgSize:
			if v.kind != kScalar {
				return c.fail(slot, CodeHelperArg, st, []asm.Register{r}, "%s: argument %s (r%d) must be a number, not a %s", spec.Signature(), spec.ArgNames[i], r, v.kind)
			}
		case kind.IsMem():
			j, _ := spec.SizeArg(i)
			if err := c.helperMem(st, slot, spec, i, j, false); err != nil {
				return err
			}
		}
	}
	for i := 0; i < spec.NumArgs(); i++ {
		if spec.Args[i] == bytecode.ArgMemWritable {
			j, _ := spec.SizeArg(i)
			if err := c.helperMem(st, slot, spec, i, j, true); err != nil {
				return err
			}
		}
	}
	st.regs[asm.R0] = unknownScalar()
	for r := asm.R1; r <= asm.R5; r++ {
		st.regs[r] = value{}
	}
	return nil
}

// helperMem checks memory argument i, whose length is argument j, against
// the state before the call; with apply it records the helper's writes.
// Every argument is checked before any write is applied, so one argument's
// write cannot launder what another reads (copy with dst == src).
func (c *checker) helperMem(st *state, slot int, spec bytecode.HelperSpec, i, j int, apply bool) *Error {
	r, rl := asm.Register(i+1), asm.Register(j+1)
	regs := []asm.Register{r, rl}
	n := st.regs[rl]
	if n.kind != kScalar {
		return c.fail(slot, CodeHelperArg, st, regs, "%s: %s (r%d) must be a number", spec.Signature(), spec.ArgNames[j], rl)
	}
	if n.off.Smin < 0 || n.off.Umax > math.MaxInt32 {
		return c.fail(slot, CodeHelperArg, st, regs, "%s: %s (r%d) must be provably between 0 and 2^31-1, is %s", spec.Signature(), spec.ArgNames[j], rl, n.off)
	}
	size := int(n.off.Umax)
	write := spec.Args[i] == bytecode.ArgMemWritable
	if apply && (!write || size == 0) {
		return nil
	}
	// The pointer is checked even when the length is provably 0: its
	// kind, its rights, and that it lies inside its object (one past the
	// end included), as the VM checks it.
	if st.regs[r].kind == kCtx {
		return c.fail(slot, CodeHelperArg, st, regs, "%s: argument %s (r%d) is the context pointer, which is never a helper's memory argument (spec/abi.md)", spec.Signature(), spec.ArgNames[i], r)
	}
	a, err := c.check(st, slot, r, 0, size, write, false)
	if err != nil {
		err.Code = CodeHelperArg
		err.Msg = fmt.Sprintf("%s: argument %s (r%d) with up to %d bytes: %s", spec.Signature(), spec.ArgNames[i], r, size, err.Msg)
		return err
	}
	switch a.ptr.kind {
	case kStack:
		f := st.frames[a.ptr.frame]
		if write {
			if !apply {
				return nil
			}
			f = st.writeFrame(int(a.ptr.frame))
			// The helper writes n bytes: at least Umin of them from lo when
			// the offset is known; anything else in range may change.
			done := a.lo
			if a.exact && n.off.Umin > 0 {
				done = a.lo + int64(n.off.Umin)
				f.mark(a.lo, done, bMisc)
			}
			if done < a.hi {
				f.clobber(done, a.hi)
			}
			return nil
		}
		for b := a.lo; b < a.hi; b++ {
			switch x := f.bytes[b+stackSize]; {
			case x == bUninit:
				return c.fail(slot, CodeUninitStack, st, regs, "%s: argument %s reads fp%d, which was never written", spec.Signature(), spec.ArgNames[i], b)
			case x == bTaint || (x == bSpill && f.spill(int((b+stackSize)/8)).kind.isPointer()):
				// Every helper that reads memory turns it into something the
				// program sees or sends (a hash, a copy, a message).
				return c.fail(slot, CodePointerLeak, st, regs, "%s: argument %s includes a spilled pointer at fp%d, whose bits the helper would expose", spec.Signature(), spec.ArgNames[i], b)
			}
		}
	case kRegion:
		if write && !apply {
			return nil
		}
		return c.regionUse(st, slot, regs, a.ptr.region, write, spec.Name, false)
	}
	return nil
}
