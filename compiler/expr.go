package compiler

import (
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// Values in registers are kept canonical: an unsigned integer zero-extended
// to 64 bits, a signed one sign-extended, a bool 0 or 1. Comparisons then
// work on all 64 bits, and every operation on a narrow type ends by
// restoring the form (a mask, a 32-bit ALU op, or a sign extension).

// expr evaluates a scalar (or reference, as a pointer) expression.
func (b *builder) expr(e lang.Expr) operand {
	tv := b.cu.info.Types[e]
	if tv.Value != nil {
		return immOp(constInt(tv.Value))
	}
	switch e := e.(type) {
	case *lang.ParenExpr:
		return b.expr(e.X)
	case *lang.Ident, *lang.IndexExpr, *lang.SelectorExpr:
		if _, ok := tv.Type.(*lang.Ref); ok {
			return regOp(b.addrOf(b.refPlace(e)))
		}
		return b.load(b.place(e))
	case *lang.UnaryExpr:
		return b.unary(e, tv.Type)
	case *lang.BinaryExpr:
		return b.binary(e, tv.Type)
	case *lang.CastExpr:
		from := b.cu.info.Types[e.X].Type
		return b.convert(b.expr(e.X), from, tv.Type)
	case *lang.CallExpr:
		return b.call(e)
	}
	b.errorf(e.Pos(), "internal error: unexpected expression %T", e)
	return immOp(0)
}

func (b *builder) unary(e *lang.UnaryExpr, t lang.Type) operand {
	switch e.Op {
	case lang.AND:
		return regOp(b.addrOf(b.place(e.X)))
	case lang.MUL:
		return b.load(b.refPlace(e.X))
	case lang.SUB:
		x := b.owned(b.expr(e.X))
		b.emit(insn{op: irNeg, dst: x})
		b.canon(x, t)
		return regOp(x)
	case lang.TILDE:
		x := b.owned(b.expr(e.X))
		if basicKind(t) == lang.U32 {
			b.alu(asm.Xor, x, immOp(-1), true)
		} else {
			b.alu(asm.Xor, x, immOp(-1), false)
			b.canon(x, t)
		}
		return regOp(x)
	case lang.NOT:
		return b.boolValue(e)
	}
	b.errorf(e.Pos(), "internal error: unary %s", e.Op)
	return immOp(0)
}

func (b *builder) binary(e *lang.BinaryExpr, t lang.Type) operand {
	switch e.Op {
	case lang.EQL, lang.NEQ, lang.LSS, lang.LEQ, lang.GTR, lang.GEQ, lang.LAND, lang.LOR:
		return b.boolValue(e)
	}
	x := b.owned(b.expr(e.X))
	y := b.expr(e.Y)
	b.binop(e.Op, x, y, t, e.OpPos)
	return regOp(x)
}

// boolValue materialises a condition as 0 or 1.
func (b *builder) boolValue(e lang.Expr) operand {
	t := b.newReg()
	done := b.newLabel()
	b.mov(t, immOp(1))
	b.condJump(e, done, true)
	b.mov(t, immOp(0))
	b.label(done)
	return regOp(t)
}

// binop computes x = x op y in type t (x is a register the caller owns);
// pos is the operator's, where a division by zero fails.
func (b *builder) binop(op lang.Token, x vreg, y operand, t lang.Type, pos lang.Pos) {
	k := basicKind(t)
	w32 := k == lang.U32
	signed := lang.IsSigned(t)
	bits := lang.Sizeof(t) * 8
	imm := func(y operand) operand {
		if y.isImm() && w32 {
			y.imm = int64(int32(uint32(y.imm)))
		}
		return b.small(y)
	}
	// Unsigned division and multiplication by a power of two are shifts
	// and masks.
	if y.isImm() && y.imm > 0 && y.imm&(y.imm-1) == 0 && (!signed || op == lang.MUL) {
		switch op {
		case lang.MUL:
			op, y = lang.SHL, immOp(log2(y.imm))
		case lang.QUO:
			op, y = lang.SHR, immOp(log2(y.imm))
		case lang.REM:
			op, y = lang.AND, immOp(y.imm-1)
		}
	}
	switch op {
	case lang.ADD, lang.SUB, lang.MUL, lang.AND, lang.OR, lang.XOR:
		alu := map[lang.Token]asm.ALUOp{lang.ADD: asm.Add, lang.SUB: asm.Sub, lang.MUL: asm.Mul,
			lang.AND: asm.And, lang.OR: asm.Or, lang.XOR: asm.Xor}[op]
		b.alu(alu, x, imm(y), w32)
		if !w32 && (op == lang.ADD || op == lang.SUB || op == lang.MUL) {
			b.canon(x, t)
		}
	case lang.QUO, lang.REM:
		if y.isImm() {
			if y.imm == 0 { // the checker rejects constant zero divisors
				b.errorf(b.pos, "division by zero")
			}
		} else {
			b.jump(asm.JEq, y.reg, immOp(0), b.failLabel(bytecode.FailDivideByZero, pos))
		}
		alu := asm.Div
		if op == lang.REM {
			alu = asm.Mod
		}
		if signed {
			alu = map[asm.ALUOp]asm.ALUOp{asm.Div: asm.SDiv, asm.Mod: asm.SMod}[alu]
		}
		b.alu(alu, x, imm(y), w32)
		if signed && op == lang.QUO {
			b.canon(x, t) // MIN / -1 wraps to MIN
		}
	case lang.SHL, lang.SHR:
		if y.isImm() {
			y.imm &= bits - 1
		} else if bits < 64 && !w32 {
			c := b.copyReg(y)
			b.alu(asm.And, c, immOp(bits-1), false)
			y = regOp(c)
		}
		alu := asm.LSh
		if op == lang.SHR {
			alu = asm.RSh
			if signed {
				alu = asm.ArSh
			}
		}
		b.alu(alu, x, y, w32)
		if !w32 && op == lang.SHL {
			b.canon(x, t)
		}
	default:
		b.errorf(b.pos, "internal error: binary %s", op)
	}
}

// canon restores the canonical form of x after an operation in type t
// that may have carried bits past its width.
func (b *builder) canon(x vreg, t lang.Type) {
	switch basicKind(t) {
	case lang.U8:
		b.alu(asm.And, x, immOp(0xff), false)
	case lang.U16:
		b.alu(asm.And, x, immOp(0xffff), false)
	case lang.U32:
		b.emit(insn{op: irMov, dst: x, a: regOp(x), w32: true})
	case lang.I8:
		b.emit(insn{op: irMovSX, dst: x, a: regOp(x), size: asm.Byte})
	case lang.I16:
		b.emit(insn{op: irMovSX, dst: x, a: regOp(x), size: asm.Half})
	case lang.I32:
		b.emit(insn{op: irMovSX, dst: x, a: regOp(x), size: asm.Word})
	}
}

// convert casts canonical v from type from to type to.
func (b *builder) convert(v operand, from, to lang.Type) operand {
	if isBool(from) || isBool(to) {
		return v // bool → integer: 0 or 1 already
	}
	fs, ts := lang.Sizeof(from), lang.Sizeof(to)
	fsg, tsg := lang.IsSigned(from), lang.IsSigned(to)
	switch {
	case fs == ts && fsg == tsg,
		fs < ts && !fsg, // zero-extended fits any wider type
		fs < ts && fsg && tsg,
		ts == 8 && fs == 8:
		return v
	}
	x := b.owned(v)
	b.canon(x, to)
	return regOp(x)
}

// condJump jumps to l when e evaluates to when, and falls through
// otherwise.
func (b *builder) condJump(e lang.Expr, l int, when bool) {
	if v := b.cu.info.Types[e].Value; v != nil {
		if (constInt(v) != 0) == when {
			b.ja(l)
		}
		return
	}
	switch e := e.(type) {
	case *lang.ParenExpr:
		b.condJump(e.X, l, when)
		return
	case *lang.UnaryExpr:
		if e.Op == lang.NOT {
			b.condJump(e.X, l, !when)
			return
		}
	case *lang.BinaryExpr:
		switch e.Op {
		case lang.LAND, lang.LOR:
			// a && b jumps when true only if both are; a || b jumps
			// when false only if both are false.
			if (e.Op == lang.LAND) == when {
				skip := b.newLabel()
				b.condJump(e.X, skip, !when)
				b.condJump(e.Y, l, when)
				b.label(skip)
			} else {
				b.condJump(e.X, l, when)
				b.condJump(e.Y, l, when)
			}
			return
		case lang.EQL, lang.NEQ, lang.LSS, lang.LEQ, lang.GTR, lang.GEQ:
			t := b.cu.info.Types[e.X].Type
			if _, ok := t.(*lang.Array); ok {
				b.arrayEqJump(b.placeOrRef(e.X), b.placeOrRef(e.Y), lang.Sizeof(t), l, (e.Op == lang.EQL) == when)
				return
			}
			x, y := b.expr(e.X), b.expr(e.Y)
			b.compareJump(e.Op, lang.IsSigned(t), x, y, l, when)
			return
		}
	case *lang.Ident, *lang.IndexExpr, *lang.SelectorExpr:
		if _, ok := b.cu.info.Types[e].Type.(*lang.Ref); !ok {
			v := b.loadRaw(b.place(e)) // any non-zero byte is true
			b.condJumpValue(v, l, when)
			return
		}
	}
	b.condJumpValue(b.expr(e), l, when)
}

func (b *builder) condJumpValue(v operand, l int, when bool) {
	op := asm.JEq
	if when {
		op = asm.JNE
	}
	b.jump(op, b.reg(v), immOp(0), l)
}

var (
	unsignedJumps = map[lang.Token]asm.JumpOp{lang.EQL: asm.JEq, lang.NEQ: asm.JNE, lang.LSS: asm.JLT, lang.LEQ: asm.JLE, lang.GTR: asm.JGT, lang.GEQ: asm.JGE}
	signedJumps   = map[lang.Token]asm.JumpOp{lang.EQL: asm.JEq, lang.NEQ: asm.JNE, lang.LSS: asm.JSLT, lang.LEQ: asm.JSLE, lang.GTR: asm.JSGT, lang.GEQ: asm.JSGE}
	negated       = map[lang.Token]lang.Token{lang.EQL: lang.NEQ, lang.NEQ: lang.EQL, lang.LSS: lang.GEQ, lang.GEQ: lang.LSS, lang.GTR: lang.LEQ, lang.LEQ: lang.GTR}
	mirrored      = map[lang.Token]lang.Token{lang.EQL: lang.EQL, lang.NEQ: lang.NEQ, lang.LSS: lang.GTR, lang.GTR: lang.LSS, lang.LEQ: lang.GEQ, lang.GEQ: lang.LEQ}
)

func (b *builder) compareJump(op lang.Token, signed bool, x, y operand, l int, when bool) {
	if !when {
		op = negated[op]
	}
	if x.isImm() {
		x, y, op = y, x, mirrored[op]
	}
	jops := unsignedJumps
	if signed {
		jops = signedJumps
	}
	b.jump(jops[op], b.reg(x), b.small(y), l)
}

// arrayEqJump compares size bytes of two places, in 8-byte and smaller
// pieces, and jumps to l if they are equal (eq) or differ (!eq).
func (b *builder) arrayEqJump(x, y place, size int64, l int, eq bool) {
	if size > 256 {
		b.arrayEqLoop(x, y, size, l, eq)
		return
	}
	xb, xo := b.memRef(x, size)
	yb, yo := b.memRef(y, size)
	differ := l
	if eq {
		differ = b.newLabel()
	}
	for i := int64(0); i < size; {
		n := chunk(size - i)
		p, q := b.newReg(), b.newReg()
		b.emit(insn{op: irLoad, dst: p, base: xb, off: xo + i, size: sizeOf(n)})
		b.emit(insn{op: irLoad, dst: q, base: yb, off: yo + i, size: sizeOf(n)})
		b.jump(asm.JNE, p, regOp(q), differ)
		i += n
	}
	if eq {
		b.ja(l)
		b.label(differ)
	}
}

// arrayEqLoop compares large arrays word by word in a counted loop, then
// the tail.
func (b *builder) arrayEqLoop(x, y place, size int64, l int, eq bool) {
	words := size / 8
	xp, yp := b.addrOf(x), b.addrOf(y)
	differ := l
	if eq {
		differ = b.newLabel()
	}
	k := b.newReg()
	b.pinned[k] = true
	b.mov(k, immOp(0))
	head := b.newLabel()
	b.label(head)
	b.depth++
	off := b.copyReg(regOp(k))
	b.alu(asm.LSh, off, immOp(3), false)
	// Each pointer is checked right where it is made (pktCheck).
	p := b.copyReg(regOp(xp))
	b.alu(asm.Add, p, regOp(off), false)
	b.pktCheck(p, x.root, 8)
	q := b.copyReg(regOp(yp))
	b.alu(asm.Add, q, regOp(off), false)
	b.pktCheck(q, y.root, 8)
	b.emit(insn{op: irLoad, dst: p, base: p, size: asm.DWord})
	b.emit(insn{op: irLoad, dst: q, base: q, size: asm.DWord})
	b.jump(asm.JNE, p, regOp(q), differ)
	b.alu(asm.Add, k, immOp(1), false)
	b.jump(asm.JLT, k, b.small(immOp(words)), head)
	b.depth--
	for i := words * 8; i < size; {
		n := chunk(size - i)
		p, q := b.newReg(), b.newReg()
		b.emit(insn{op: irLoad, dst: p, base: xp, off: i, size: sizeOf(n)})
		b.emit(insn{op: irLoad, dst: q, base: yp, off: i, size: sizeOf(n)})
		b.jump(asm.JNE, p, regOp(q), differ)
		i += n
	}
	if eq {
		b.ja(l)
		b.label(differ)
	}
}

// ---- Calls ----

func (b *builder) call(e *lang.CallExpr) operand {
	switch obj := b.cu.info.Uses[e.Fun].(type) {
	case *lang.Func:
		return b.inline(obj, e)
	case *lang.Builtin:
		return b.builtin(obj.Name(), e)
	}
	b.errorf(e.Pos(), "internal error: call of %s", e.Fun.Name)
	return immOp(0)
}

// inline expands a call of fn in place: parameters bind to the argument
// values (references to the places they name), return jumps to the end.
func (b *builder) inline(fn *lang.Func, e *lang.CallExpr) operand {
	type binding struct {
		v   *lang.Var
		loc *local
	}
	var binds []binding
	top := b.stackTop
	for i, a := range e.Args {
		p := fn.Params[i]
		if _, ok := p.Type().(*lang.Ref); ok {
			pl := b.refPlace(a)
			binds = append(binds, binding{p, &local{ref: &pl}})
			continue
		}
		v := b.expr(a)
		if b.cu.addrTaken[p] {
			off := b.alloc(8)
			b.store(place{typ: p.Type(), base: fp, off: off, root: rootStack}, v)
			binds = append(binds, binding{p, &local{mem: true, fpOff: off}})
			continue
		}
		binds = append(binds, binding{p, &local{reg: b.keep(b.reg(v))}})
	}
	for _, bd := range binds {
		b.vars[bd.v] = bd.loc
	}
	ic := &inlineCtx{end: b.newLabel()}
	if fn.Result != nil {
		ic.result = b.newReg()
	}
	b.inl = append(b.inl, ic)
	loops := b.loops
	b.loops = nil
	pos := b.pos
	b.block(fn.Decl.Body)
	b.loops = loops
	b.inl = b.inl[:len(b.inl)-1]
	b.label(ic.end)
	b.pos = pos
	b.stackTop = top
	if fn.Result == nil {
		return immOp(0)
	}
	return regOp(ic.result)
}

func (b *builder) helper(id int32, args ...operand) vreg {
	t := b.newReg()
	b.emit(insn{op: irCall, dst: t, helper: id, args: args})
	return t
}

func (b *builder) builtin(name string, e *lang.CallExpr) operand {
	ctxField := func(off int64) operand {
		t := b.newReg()
		b.emit(insn{op: irLoad, dst: t, base: b.ctx, off: off, size: asm.DWord})
		return regOp(t)
	}
	switch name {
	case "min", "max":
		// x = a; if !(a <= b) (min) or !(a >= b) (max), x = b.
		t := b.cu.info.Types[e].Type
		x := b.owned(b.expr(e.Args[0]))
		y := b.expr(e.Args[1])
		keep, op := b.newLabel(), lang.LEQ
		if name == "max" {
			op = lang.GEQ
		}
		b.compareJump(op, lang.IsSigned(t), regOp(x), y, keep, true)
		b.mov(x, y)
		b.label(keep)
		return regOp(x)
	case "hash":
		p := b.placeOrRef(e.Args[0])
		return regOp(b.helper(bytecode.HelperHash, regOp(b.addrOf(p)), immOp(lang.Sizeof(p.typ))))
	case "copy":
		d := b.placeOrRef(e.Args[0])
		s := b.placeOrRef(e.Args[1])
		dp := b.addrOf(d)
		sp := b.addrOf(s)
		b.helper(bytecode.HelperCopy, regOp(dp), regOp(sp), immOp(lang.Sizeof(d.typ)))
		return immOp(0)
	case "now":
		return regOp(b.helper(bytecode.HelperNow))
	case "random":
		return regOp(b.helper(bytecode.HelperRandom))
	case "trace":
		p := b.placeOrRef(e.Args[0])
		b.helper(bytecode.HelperTrace, regOp(b.addrOf(p)), immOp(lang.Sizeof(p.typ)))
		return immOp(0)
	case "send":
		node := b.expr(e.Args[0])
		h := b.expr(e.Args[1])
		p := b.placeOrRef(e.Args[2])
		ptr := b.addrOf(p)
		r := b.helper(bytecode.HelperSend, b.small(node), b.small(h), regOp(ptr), immOp(lang.Sizeof(p.typ)))
		// 0 means sent, a negative value not: true iff the sign bit is clear.
		b.alu(asm.RSh, r, immOp(63), false)
		b.alu(asm.Xor, r, immOp(1), false)
		return regOp(r)
	case "forward":
		node := b.expr(e.Args[0])
		h := b.expr(e.Args[1])
		r := b.helper(bytecode.HelperForward, b.small(node), b.small(h))
		b.jump(asm.JNE, r, immOp(0), b.failLabel(bytecode.FailForward, e.Pos()))
		b.emit(insn{op: irExit, a: immOp(bytecode.ReturnForwarded)})
		return immOp(0)
	case "src_node":
		return ctxField(bytecode.CtxSrcNode)
	case "tenant":
		return ctxField(bytecode.CtxTenant)
	case "request_id":
		return ctxField(bytecode.CtxRequestID)
	case "atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg":
		p := b.refPlace(e.Args[0])
		size := lang.Sizeof(p.typ)
		base, off := b.memRef(p, size)
		x := b.owned(b.expr(e.Args[1]))
		op := map[string]asm.AtomicOp{"atomic_add": asm.FetchAdd, "atomic_and": asm.FetchAnd,
			"atomic_or": asm.FetchOr, "atomic_xor": asm.FetchXor, "atomic_xchg": asm.Xchg}[name]
		b.emit(insn{op: irAtomic, atomic: op, dst: x, base: base, off: off, size: sizeOf(size)})
		if size == 4 && lang.IsSigned(p.typ) {
			b.canon(x, p.typ)
		}
		return regOp(x)
	case "atomic_cas":
		p := b.refPlace(e.Args[0])
		size := lang.Sizeof(p.typ)
		base, off := b.memRef(p, size)
		old := b.small(b.expr(e.Args[1]))
		nw := b.reg(b.expr(e.Args[2]))
		t := b.newReg()
		b.emit(insn{op: irCmpXchg, dst: t, base: base, off: off, size: sizeOf(size), a: old, args: []operand{regOp(nw)}})
		if size == 4 && lang.IsSigned(p.typ) {
			b.canon(t, p.typ)
		}
		return regOp(t)
	}
	b.errorf(e.Pos(), "internal error: builtin %s", name)
	return immOp(0)
}
