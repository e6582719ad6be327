package compiler

import (
	"fmt"
	"go/constant"
	"go/token"
	"math"
	"strings"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// stackSize is the bytes of stack a frame has (bytecode.StackSize).
const stackSize = bytecode.StackSize

// rootKind says which memory a place is in.
type rootKind uint8

const (
	rootStack rootKind = iota
	rootRequest
	rootReply
	rootRegion
)

// place is a location the program can read or write: a scalar local kept
// in a register, or bytes at base+off. A region place whose address has
// not been loaded yet has base noReg and names the region.
type place struct {
	typ    lang.Type
	inReg  bool
	reg    vreg
	base   vreg
	region int
	off    int64
	root   rootKind
}

// local is where a variable lives: a register, a stack slot, or, for a
// reference, the place it refers to.
type local struct {
	reg   vreg
	mem   bool
	fpOff int64 // mem: offset from fp (negative)
	ref   *place
}

type loopCtx struct{ brk, cont int }

type inlineCtx struct {
	result vreg
	end    int
}

// builder lowers one handler, with every fn it calls inlined, to IR.
type builder struct {
	cu   *compilation
	h    *lang.Handler
	code []insn

	nreg   vreg
	nlabel int
	live   bool
	refd   map[int]bool
	pos    lang.Pos
	depth  int

	vars     map[*lang.Var]*local
	stackTop int64 // bytes of stack the live locals use
	stackMax int64
	ctx      vreg
	data     vreg
	dataEnd  vreg
	reply    vreg
	replyEnd vreg
	pinned   map[vreg]bool        // loop counters: the verifier needs them in registers
	varRegs  map[vreg]bool        // registers of variables: never overwritten as temporaries
	bounds   map[*lang.Var]uint64 // largest value of loop variables with constant bounds
	fails    []failStub           // the exits that fail the request, placed after the code
	failAt   map[failSite]int     // index in fails
	loops    []loopCtx
	inl      []*inlineCtx
}

func (b *builder) newReg() vreg {
	b.nreg++
	return b.nreg
}

func (b *builder) newLabel() int {
	b.nlabel++
	return b.nlabel
}

// emit appends in unless the current point cannot be reached (code after
// return, fail, break or continue is dropped, which is all the dead code
// removal the verifier needs: it rejects unreachable instructions).
func (b *builder) emit(in insn) {
	if !b.live {
		return
	}
	in.pos, in.depth = b.pos, b.depth
	switch in.op {
	case irJump, irJa:
		b.refd[in.label] = true
	}
	b.code = append(b.code, in)
	if in.op == irJa || in.op == irExit {
		b.live = false
	}
}

// label places label l; code after it is reachable if anything jumps to
// it or the code before falls through.
func (b *builder) label(l int) {
	if !b.live && !b.refd[l] {
		return
	}
	b.code = append(b.code, insn{op: irLabel, label: l, pos: b.pos, depth: b.depth})
	b.live = true
}

func (b *builder) errorf(pos lang.Pos, format string, args ...any) {
	b.cu.errs.Add(pos, fmt.Sprintf(format, args...))
}

func (b *builder) mov(dst vreg, a operand) { b.emit(insn{op: irMov, dst: dst, a: a}) }

func (b *builder) alu(op asm.ALUOp, dst vreg, a operand, w32 bool) {
	b.emit(insn{op: irALU, alu: op, dst: dst, a: a, w32: w32})
}

func (b *builder) jump(op asm.JumpOp, x vreg, y operand, l int) {
	b.emit(insn{op: irJump, jop: op, dst: x, a: y, label: l})
}

func (b *builder) ja(l int) { b.emit(insn{op: irJa, label: l}) }

// copyReg returns a fresh register holding a.
func (b *builder) copyReg(a operand) vreg {
	t := b.newReg()
	b.mov(t, a)
	return t
}

// owned returns a register holding a that the caller may overwrite: a
// itself if it is a temporary, a copy if it belongs to a variable.
func (b *builder) owned(a operand) vreg {
	if !a.isImm() && !b.varRegs[a.reg] {
		return a.reg
	}
	return b.copyReg(a)
}

// keep marks r as holding a variable (or a value used more than once), so
// that owned copies it instead of overwriting it.
func (b *builder) keep(r vreg) vreg {
	b.varRegs[r] = true
	return r
}

// reg returns a register holding a: a itself if it is one.
func (b *builder) reg(a operand) vreg {
	if !a.isImm() {
		return a.reg
	}
	return b.copyReg(a)
}

// small returns a as an operand usable as a 32-bit immediate, or in a
// register.
func (b *builder) small(a operand) operand {
	if a.isImm() && !fitsImm32(a.imm) {
		return regOp(b.copyReg(a))
	}
	return a
}

// failStub is an exit that fails the request with code, placed after the
// handler's code. Its instructions carry pos, the site whose check jumps
// to it, so that the line table names where a failure came from
// (vm.Result.Exit).
type failStub struct {
	code  int64
	pos   lang.Pos
	label int
}

type failSite struct {
	code int64
	pos  lang.Pos
}

// failLabel returns the label of the stub that fails the request with
// code for the check at pos: one stub per site and code.
func (b *builder) failLabel(code int64, pos lang.Pos) int {
	k := failSite{code, pos}
	if i, ok := b.failAt[k]; ok {
		return b.fails[i].label
	}
	l := b.newLabel()
	b.failAt[k] = len(b.fails)
	b.fails = append(b.fails, failStub{code: code, pos: pos, label: l})
	return l
}

// sharedFailLabel is the label of the first stub of code, for a check
// that cannot fail but that the verifier needs (pktCheck), so that it
// adds no stub of its own.
func (b *builder) sharedFailLabel(code int64) int {
	for _, f := range b.fails {
		if f.code == code {
			return f.label
		}
	}
	return b.failLabel(code, b.pos)
}

func (b *builder) fail(code int64) { b.emit(insn{op: irExit, a: immOp(-code)}) }

// ---- Stack ----

// alloc reserves size bytes of stack, 8-aligned, and returns their offset
// from fp.
func (b *builder) alloc(size int64) int64 {
	b.stackTop += (size + 7) &^ 7
	b.stackMax = max(b.stackMax, b.stackTop)
	return -b.stackTop
}

// ---- Handlers ----

func (b *builder) handler() {
	h := b.h
	b.live = true
	b.pos = h.Decl.Pos()
	b.ctx = b.keep(b.newReg())
	b.emit(insn{op: irEntry, dst: b.ctx})
	// The request, then the reply: load the pointer and its end, and
	// check the layout's size against the end (the verifier's proof for
	// every constant offset into it).
	b.data, b.dataEnd = b.packet(bytecode.CtxData, bytecode.CtxDataEnd, h.Args.Size, lang.FailShortRequest)
	b.reply, b.replyEnd = b.packet(bytecode.CtxReply, bytecode.CtxReplyEnd, h.Reply.Size, lang.FailShortReply)
	b.block(h.Decl.Body)
	if b.live {
		b.pos = h.Decl.Body.Rbrace
		b.emit(insn{op: irExit, a: immOp(h.Reply.Size)})
	}
	for _, f := range b.fails {
		b.pos = f.pos
		b.label(f.label)
		b.fail(f.code)
	}
}

// packet loads a request or reply pointer and its end from the context and
// fails with code unless size bytes are there.
func (b *builder) packet(ptrOff, endOff, size int64, code int64) (ptr, end vreg) {
	ptr, end = b.keep(b.newReg()), b.keep(b.newReg())
	b.emit(insn{op: irLoad, dst: ptr, base: b.ctx, off: ptrOff, size: asm.DWord})
	b.emit(insn{op: irLoad, dst: end, base: b.ctx, off: endOff, size: asm.DWord})
	if size > 0 {
		t := b.copyReg(regOp(ptr))
		b.alu(asm.Add, t, immOp(size), false)
		b.jump(asm.JGT, t, regOp(end), b.failLabel(code, b.pos))
	}
	return ptr, end
}

// ---- Statements ----

func (b *builder) block(s *lang.BlockStmt) {
	top := b.stackTop
	for _, st := range s.List {
		if !b.live {
			break
		}
		b.stmt(st)
	}
	b.stackTop = top
}

func (b *builder) stmt(s lang.Stmt) {
	b.pos = s.Pos()
	switch s := s.(type) {
	case *lang.BlockStmt:
		b.block(s)
	case *lang.LetStmt:
		b.let(s)
	case *lang.AssignStmt:
		b.assign(s)
	case *lang.ExprStmt:
		call, ok := s.X.(*lang.CallExpr)
		if !ok {
			b.errorf(s.Pos(), "internal error: expression statement is not a call")
			return
		}
		b.call(call)
	case *lang.IfStmt:
		b.ifStmt(s)
	case *lang.ForStmt:
		b.forStmt(s)
	case *lang.BranchStmt:
		l := b.loops[len(b.loops)-1]
		if s.Tok == lang.BREAK {
			b.ja(l.brk)
		} else {
			b.ja(l.cont)
		}
	case *lang.ReturnStmt:
		b.ret(s)
	case *lang.FailStmt:
		code, _ := constant.Int64Val(b.cu.info.Types[s.Code].Value)
		b.fail(code)
	default:
		b.errorf(s.Pos(), "internal error: unexpected statement %T", s)
	}
}

func (b *builder) let(s *lang.LetStmt) {
	v := b.cu.info.Defs[s.Name].(*lang.Var)
	t := v.Type()
	if _, ok := t.(*lang.Ref); ok {
		p := b.refPlace(s.Value)
		b.vars[v] = &local{ref: &p}
		return
	}
	if isScalar(t) && !b.cu.addrTaken[v] {
		r := b.keep(b.newReg())
		if s.Value != nil {
			b.mov(r, b.expr(s.Value))
		} else {
			b.mov(r, immOp(0))
		}
		b.vars[v] = &local{reg: r}
		return
	}
	size := lang.Sizeof(t)
	off := b.alloc(size)
	loc := &local{mem: true, fpOff: off}
	dst := place{typ: t, base: fp, off: off, root: rootStack}
	switch {
	case s.Value == nil:
		b.zero(dst, (size+7)&^7)
	case isScalar(t):
		b.store(dst, b.expr(s.Value))
	default:
		b.copyPlace(dst, b.placeOrRef(s.Value), size)
	}
	b.vars[v] = loc
}

// zero writes n zero bytes (a multiple of 8) at the stack place p.
func (b *builder) zero(p place, n int64) {
	for i := int64(0); i < n; i += 8 {
		b.emit(insn{op: irStore, base: fp, off: p.off + i, size: asm.DWord, a: immOp(0)})
	}
}

func (b *builder) assign(s *lang.AssignStmt) {
	p := b.place(s.Lhs)
	t := p.typ
	if s.Tok == lang.ASSIGN {
		if isScalar(t) {
			b.store(p, b.expr(s.Rhs))
		} else {
			b.copyPlace(p, b.placeOrRef(s.Rhs), lang.Sizeof(t))
		}
		return
	}
	op := lang.ADD + (s.Tok - lang.ADD_ASSIGN)
	x := b.owned(b.load(p))
	y := b.expr(s.Rhs)
	b.binop(op, x, y, t, s.TokPos)
	b.store(p, regOp(x))
}

func (b *builder) ifStmt(s *lang.IfStmt) {
	if v := b.cu.info.Types[s.Cond].Value; v != nil {
		if constant.BoolVal(v) {
			b.block(s.Then)
		} else if s.Else != nil {
			b.stmt(s.Else)
		}
		return
	}
	elseL := b.newLabel()
	b.condJump(s.Cond, elseL, false)
	b.block(s.Then)
	if s.Else == nil {
		b.label(elseL)
		return
	}
	endL := b.newLabel()
	b.ja(endL)
	b.label(elseL)
	b.stmt(s.Else)
	b.label(endL)
}

func (b *builder) forStmt(s *lang.ForStmt) {
	v := b.cu.info.Defs[s.Var].(*lang.Var)
	t := v.Type()
	signed := lang.IsSigned(t)
	lt := asm.JLT
	if signed {
		lt = asm.JSLT
	}
	exitL, headL, latchL := b.newLabel(), b.newLabel(), b.newLabel()
	top := b.stackTop
	defer func() { b.stackTop = top }()

	// The verifier bounds the loop by counter, which only the latch's
	// add changes; the loop variable is counter + lo.
	counter := b.keep(b.newReg())
	b.pinned[counter] = true
	var limit operand
	var capOp operand // capped loops: the cap, which bounds the counter for the verifier
	lo := immOp(0)
	loV, hiV := b.cu.info.Types[s.Low].Value, b.cu.info.Types[s.High].Value
	constBounds := s.Max == nil && loV != nil && hiV != nil
	if constBounds {
		if constant.Compare(loV, token.GEQ, hiV) {
			return // no iterations
		}
		l, h := constInt(loV), constInt(hiV)
		if constant.Sign(loV) < 0 {
			// Count from 0 so that the counter's range is one interval.
			b.mov(counter, immOp(0))
			lo, limit, lt = immOp(l), immOp(h-l), asm.JLT
		} else {
			b.mov(counter, immOp(l))
			limit = immOp(h)
			if !b.cu.addrTaken[v] {
				// (A loop variable on the stack is reloaded with a
				// narrow load, which the verifier does not bound.)
				b.bounds[v] = uint64(h - 1)
			}
		}
		limit = b.small(limit)
	} else {
		// for i in lo..hi max N: skip if hi <= lo, then count 0 ..
		// hi-lo-1, at most N times: a body that has not broken out by
		// then, with more of the range to go, fails (at the latch).
		lo = regOp(b.keep(b.owned(b.expr(s.Low))))
		hi := b.reg(b.expr(s.High))
		le := asm.JLE
		if signed {
			le = asm.JSLE
		}
		b.jump(le, hi, lo, exitL)
		n := b.keep(b.owned(regOp(hi)))
		b.alu(asm.Sub, n, lo, false)
		capV := constInt(b.cu.info.Types[s.Max].Value)
		b.mov(counter, immOp(0))
		limit, capOp = regOp(n), b.small(immOp(capV))
	}

	b.label(headL)
	b.depth++
	b.pos = s.Pos()
	iv := regOp(counter)
	if !(lo.isImm() && lo.imm == 0) {
		r := b.keep(b.copyReg(iv))
		b.alu(asm.Add, r, b.small(lo), false)
		iv = regOp(r)
	}
	if b.cu.addrTaken[v] {
		off := b.alloc(8)
		b.vars[v] = &local{mem: true, fpOff: off}
		b.store(place{typ: t, base: fp, off: off, root: rootStack}, iv)
	} else {
		b.vars[v] = &local{reg: iv.reg}
	}
	b.loops = append(b.loops, loopCtx{brk: exitL, cont: latchL})
	b.block(s.Body)
	b.loops = b.loops[:len(b.loops)-1]
	b.label(latchL)
	b.pos = s.Pos()
	b.alu(asm.Add, counter, immOp(1), false)
	if !constBounds {
		// The limit may have been spilled, and a range learnt by
		// comparing a reloaded copy does not reach the stack slot: the
		// comparison with the constant cap is what bounds the counter.
		b.jump(asm.JGE, counter, limit, exitL)
		b.jump(asm.JLT, counter, capOp, headL)
		b.ja(b.failLabel(lang.FailLoopCap, s.Max.Pos()))
	} else {
		b.jump(lt, counter, limit, headL)
	}
	b.depth--
	b.label(exitL)
}

func (b *builder) ret(s *lang.ReturnStmt) {
	if n := len(b.inl); n > 0 {
		ic := b.inl[n-1]
		if len(s.Results) > 0 {
			b.mov(ic.result, b.expr(s.Results[0]))
		}
		b.ja(ic.end)
		return
	}
	h := b.h
	// return a, b evaluates every value before it writes any result:
	// scalars into registers, aggregates as places (their indices
	// computed), and an aggregate in the reply itself copied aside.
	vals := make([]operand, len(s.Results))
	srcs := make([]place, len(s.Results))
	for i, e := range s.Results {
		t := h.Results[i].Type()
		if isScalar(t) {
			vals[i] = b.expr(e)
			continue
		}
		srcs[i] = b.placeOrRef(e)
		// Copy aside an aggregate that writing an earlier result, or a
		// call in a later value (an atomic, a fn writing through a
		// reference), could change before it is copied into the reply.
		if srcs[i].root == rootReply && len(s.Results) > 1 ||
			srcs[i].root != rootRequest && b.hasCall(s.Results[i+1:]) {
			size := lang.Sizeof(t)
			tmp := place{typ: t, base: fp, off: b.alloc(size), root: rootStack}
			b.copyPlace(tmp, srcs[i], size)
			srcs[i] = tmp
		}
	}
	for i := range s.Results {
		f := h.Reply.Fields[i]
		dst := place{typ: f.Type, base: b.reply, off: f.Offset, root: rootReply}
		if isScalar(f.Type) {
			b.store(dst, vals[i])
		} else {
			b.copyPlace(dst, srcs[i], lang.Sizeof(f.Type))
		}
	}
	b.emit(insn{op: irExit, a: immOp(h.Reply.Size)})
}

// ---- Places ----

// place evaluates an expression that names memory (or a register local).
func (b *builder) place(e lang.Expr) place {
	switch e := e.(type) {
	case *lang.ParenExpr:
		return b.place(e.X)
	case *lang.Ident:
		switch obj := b.cu.info.Uses[e].(type) {
		case *lang.Region:
			return place{typ: obj.Type(), base: noReg, region: obj.Index, root: rootRegion}
		case *lang.Var:
			return b.varPlace(obj)
		}
	case *lang.IndexExpr:
		p := b.placeOrRef(e.X)
		arr := p.typ.(*lang.Array)
		return b.index(p, arr, e.Index)
	case *lang.SelectorExpr:
		p := b.placeOrRef(e.X)
		f := p.typ.(*lang.Struct).Field(e.Sel.Name)
		p.typ, p.off = f.Type, p.off+f.Offset
		return p
	case *lang.UnaryExpr:
		if e.Op == lang.MUL {
			return b.refPlace(e.X)
		}
	}
	b.errorf(e.Pos(), "internal error: %T is not a place", e)
	return place{typ: lang.Typ[lang.U64], inReg: true, reg: b.copyReg(immOp(0))}
}

func (b *builder) varPlace(v *lang.Var) place {
	switch v.Kind {
	case lang.HandlerArg:
		f := fieldOf(b.h.Args, v.Name())
		return place{typ: v.Type(), base: b.data, off: f.Offset, root: rootRequest}
	case lang.HandlerResult:
		f := fieldOf(b.h.Reply, v.Name())
		return place{typ: v.Type(), base: b.reply, off: f.Offset, root: rootReply}
	}
	loc := b.vars[v]
	if loc == nil {
		b.errorf(v.Pos(), "internal error: %s has no storage", v.Name())
		loc = &local{reg: b.copyReg(immOp(0))}
		b.vars[v] = loc
	}
	if loc.ref != nil {
		// Only reached for a reference used as a whole value.
		return *loc.ref
	}
	if loc.mem {
		return place{typ: v.Type(), base: fp, off: loc.fpOff, root: rootStack}
	}
	return place{typ: v.Type(), inReg: true, reg: loc.reg}
}

func fieldOf(l lang.Layout, name string) *lang.StructField {
	for _, f := range l.Fields {
		if f.Name == name {
			return f
		}
	}
	return l.Fields[0]
}

// placeOrRef is the place e names, going through e if it is a reference.
func (b *builder) placeOrRef(e lang.Expr) place {
	if _, ok := b.cu.info.Types[e].Type.(*lang.Ref); ok {
		return b.refPlace(e)
	}
	return b.place(e)
}

// refPlace is the place a reference-valued expression refers to: a
// reference local or parameter, or &place.
func (b *builder) refPlace(e lang.Expr) place {
	switch e := e.(type) {
	case *lang.ParenExpr:
		return b.refPlace(e.X)
	case *lang.UnaryExpr:
		if e.Op == lang.AND {
			return b.place(e.X)
		}
	case *lang.Ident:
		if v, ok := b.cu.info.Uses[e].(*lang.Var); ok {
			if loc := b.vars[v]; loc != nil && loc.ref != nil {
				p := *loc.ref
				p.typ = v.Type().(*lang.Ref).Elem
				return p
			}
		}
	}
	b.errorf(e.Pos(), "internal error: %T is not a reference", e)
	return place{typ: lang.Typ[lang.U64], inReg: true, reg: b.copyReg(immOp(0))}
}

// index is p[i] for the array p.
func (b *builder) index(p place, arr *lang.Array, ie lang.Expr) place {
	es := lang.Sizeof(arr.Elem)
	i := b.expr(ie)
	p.typ = arr.Elem
	if i.isImm() {
		p.off += i.imm * es
		return p
	}
	// Check and scale one fresh register that is never spilled: a range
	// learnt by comparing a reloaded copy would not reach the slot.
	scaled := b.owned(i)
	b.pinned[scaled] = true
	if m, ok := b.maxValue(ie); !ok || m >= uint64(arr.Len) {
		n := b.small(immOp(arr.Len))
		b.jump(asm.JGE, scaled, n, b.failLabel(lang.FailIndexOutOfRange, ie.Pos()))
	}
	if es&(es-1) == 0 {
		if sh := log2(es); sh > 0 {
			b.alu(asm.LSh, scaled, immOp(sh), false)
		}
	} else {
		b.alu(asm.Mul, scaled, b.small(immOp(es)), false)
	}
	var ptr vreg
	defer func() { b.keep(ptr) }()
	switch {
	case p.base == noReg: // a region
		ptr = b.newReg()
		b.emit(insn{op: irRegion, dst: ptr, idx: p.region, off: p.off})
		p.off = 0
	case p.base == fp:
		ptr = b.copyReg(regOp(fp))
		b.alu(asm.Add, ptr, immOp(p.off), false)
		p.off = 0
	default:
		ptr = b.copyReg(regOp(p.base))
	}
	b.alu(asm.Add, ptr, regOp(scaled), false)
	p.base = ptr
	b.pktCheck(ptr, p.root, p.off+es)
	return p
}

// pktCheck proves n bytes at ptr, a request or reply pointer with a
// variable offset, to the verifier, which proves packet bytes per pointer
// as for XDP: the comparison with the end comes right where ptr is made,
// before any branch, so that the proof belongs to ptr. (It cannot fail:
// the whole request and reply were checked at entry.)
func (b *builder) pktCheck(ptr vreg, root rootKind, n int64) {
	if root != rootRequest && root != rootReply {
		return
	}
	end, code := b.dataEnd, int64(lang.FailShortRequest)
	if root == rootReply {
		end, code = b.replyEnd, lang.FailShortReply
	}
	t := b.copyReg(regOp(ptr))
	b.alu(asm.Add, t, b.small(immOp(n)), false)
	b.jump(asm.JGT, t, regOp(end), b.sharedFailLabel(code))
}

func log2(n int64) int64 {
	k := int64(0)
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// memRef returns a base register and a 16-bit offset through which size
// bytes of p can be accessed, loading a region's address if needed.
func (b *builder) memRef(p place, size int64) (vreg, int64) {
	base, off := p.base, p.off
	if base == noReg {
		base = b.newReg()
		b.emit(insn{op: irRegion, dst: base, idx: p.region, off: off})
		return base, 0
	}
	if off < math.MinInt16 || off+size > math.MaxInt16 {
		t := b.copyReg(regOp(base))
		b.alu(asm.Add, t, b.small(immOp(off)), false)
		base, off = t, 0
	}
	return base, off
}

// addrOf returns a register holding the address of p (for helpers).
func (b *builder) addrOf(p place) vreg {
	switch {
	case p.inReg:
		b.errorf(b.pos, "internal error: address of a register local")
		return b.copyReg(immOp(0))
	case p.base == noReg:
		t := b.newReg()
		b.emit(insn{op: irRegion, dst: t, idx: p.region, off: p.off})
		return t
	}
	size := lang.Sizeof(p.typ)
	base, off := b.memRef(p, size)
	if off == 0 && base != fp {
		return base
	}
	t := b.copyReg(regOp(base))
	if off != 0 {
		b.alu(asm.Add, t, immOp(off), false)
	}
	return t
}

// load reads the scalar at p. A bool read from memory is normalised: any
// non-zero byte is true (bytes from the request or a region, and copies
// of them, may hold anything).
func (b *builder) load(p place) operand {
	v := b.loadRaw(p)
	if isBool(p.typ) && !p.inReg {
		skip := b.newLabel()
		b.jump(asm.JEq, v.reg, immOp(0), skip)
		b.mov(v.reg, immOp(1))
		b.label(skip)
	}
	return v
}

func (b *builder) loadRaw(p place) operand {
	if p.inReg {
		return regOp(p.reg)
	}
	size := lang.Sizeof(p.typ)
	base, off := b.memRef(p, size)
	t := b.newReg()
	b.emit(insn{op: irLoad, dst: t, base: base, off: off, size: sizeOf(size), signed: lang.IsSigned(p.typ) && size < 8})
	return regOp(t)
}

func (b *builder) store(p place, v operand) {
	if p.inReg {
		b.mov(p.reg, v)
		return
	}
	size := lang.Sizeof(p.typ)
	v = b.small(v)
	base, off := b.memRef(p, size)
	if v.isImm() {
		v.imm = truncImm(v.imm, size)
	}
	b.emit(insn{op: irStore, base: base, off: off, size: sizeOf(size), a: v})
}

// truncImm keeps the low size bytes of an immediate for a store, sign
// extended from 32 bits as the instruction will.
func truncImm(v, size int64) int64 {
	switch size {
	case 1:
		return int64(int8(v))
	case 2:
		return int64(int16(v))
	case 4:
		return int64(int32(v))
	}
	return v
}

// copyPlace copies size bytes from src to dst, in 8-byte and smaller
// pieces, or with the copy helper when the value is large.
func (b *builder) copyPlace(dst, src place, size int64) {
	if size > 128 {
		d, s := b.addrOf(dst), b.addrOf(src)
		b.emit(insn{op: irCall, helper: bytecode.HelperCopy, args: []operand{regOp(d), regOp(s), immOp(size)}})
		return
	}
	dbase, doff := b.memRef(dst, size)
	sbase, soff := b.memRef(src, size)
	for i := int64(0); i < size; {
		n := chunk(size - i)
		t := b.newReg()
		b.emit(insn{op: irLoad, dst: t, base: sbase, off: soff + i, size: sizeOf(n)})
		b.emit(insn{op: irStore, base: dbase, off: doff + i, size: sizeOf(n), a: regOp(t)})
		i += n
	}
}

func chunk(left int64) int64 {
	switch {
	case left >= 8:
		return 8
	case left >= 4:
		return 4
	case left >= 2:
		return 2
	}
	return 1
}

func sizeOf(n int64) asm.Size {
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

// ---- Types ----

func basicKind(t lang.Type) lang.BasicKind {
	if b, ok := t.(*lang.Basic); ok {
		return b.Kind
	}
	return lang.Invalid
}

func isBool(t lang.Type) bool { return basicKind(t) == lang.Bool }

func isScalar(t lang.Type) bool {
	k := basicKind(t)
	return k >= lang.Bool && k <= lang.I64
}

// constInt is an integer or bool constant as the 64 bits a register holds.
func constInt(v constant.Value) int64 {
	if v.Kind() == constant.Bool {
		if constant.BoolVal(v) {
			return 1
		}
		return 0
	}
	if i, ok := constant.Int64Val(v); ok {
		return i
	}
	u, _ := constant.Uint64Val(v)
	return int64(u)
}

// maxValue bounds a non-negative integer expression from above when that
// is evident from its form (x % N, x & M, a narrow unsigned type, a loop
// variable with constant bounds), so that an index check can be left out.
// The verifier sees the same facts in the instructions.
func (b *builder) maxValue(e lang.Expr) (uint64, bool) {
	tv := b.cu.info.Types[e]
	if tv.Value != nil {
		if constant.Sign(tv.Value) < 0 {
			return 0, false
		}
		return uint64(constInt(tv.Value)), true
	}
	if lang.IsSigned(tv.Type) || !isScalar(tv.Type) {
		return 0, false
	}
	typeMax := uint64(1)<<(uint(lang.Sizeof(tv.Type))*8) - 1
	if lang.Sizeof(tv.Type) == 8 {
		typeMax = ^uint64(0)
	}
	switch e := e.(type) {
	case *lang.ParenExpr:
		return b.maxValue(e.X)
	case *lang.Ident:
		if v, ok := b.cu.info.Uses[e].(*lang.Var); ok {
			if m, ok := b.bounds[v]; ok {
				return m, true
			}
		}
	case *lang.BinaryExpr:
		switch e.Op {
		case lang.REM:
			if c := b.cu.info.Types[e.Y].Value; c != nil && constant.Sign(c) > 0 {
				return uint64(constInt(c)) - 1, true
			}
		case lang.AND:
			mx, okx := b.maxValue(e.X)
			my, oky := b.maxValue(e.Y)
			switch {
			case okx && oky:
				return min(mx, my), true
			case okx:
				return mx, true
			case oky:
				return my, true
			}
		case lang.SHR:
			if m, ok := b.maxValue(e.X); ok {
				if c := b.cu.info.Types[e.Y].Value; c != nil {
					return m >> (uint64(constInt(c)) & 63), true
				}
				return m, true
			}
		}
	case *lang.CastExpr:
		from := b.cu.info.Types[e.X].Type
		if !lang.IsSigned(from) && lang.Sizeof(from) <= lang.Sizeof(tv.Type) {
			if m, ok := b.maxValue(e.X); ok {
				return m, true
			}
		}
	}
	return typeMax, true
}

// hasCall reports whether any of es calls something that may write
// memory: a fn, copy or an atomic.
func (b *builder) hasCall(es []lang.Expr) bool {
	found := false
	for _, e := range es {
		lang.Inspect(e, func(_, n lang.Node) {
			call, ok := n.(*lang.CallExpr)
			if !ok {
				return
			}
			switch obj := b.cu.info.Uses[call.Fun].(type) {
			case *lang.Func:
				found = true
			case *lang.Builtin:
				if obj.Name() == "copy" || strings.HasPrefix(obj.Name(), "atomic_") {
					found = true
				}
			}
		})
	}
	return found
}
