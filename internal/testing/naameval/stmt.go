package naameval

import (
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// ctl is how a statement ended.
type ctl int

const (
	next ctl = iota
	brk
	cont
	ret
)

func (m *machine) block(fr *frame, list []lang.Stmt) ctl {
	for _, s := range list {
		if c := m.stmt(fr, s); c != next {
			return c
		}
	}
	return next
}

func (m *machine) stmt(fr *frame, s lang.Stmt) ctl {
	switch s := s.(type) {
	case *lang.BlockStmt:
		return m.block(fr, s.List)
	case *lang.LetStmt:
		v := m.defVar(s.Name)
		if _, ok := v.Type().(*lang.Ref); ok {
			fr.vars[v] = m.ref(fr, s.Value)
			return next
		}
		p := newLocal(v.Type())
		if s.Value != nil {
			m.assign(fr, p, s.Value)
		}
		fr.vars[v] = p
	case *lang.AssignStmt:
		p := m.place(fr, s.Lhs)
		if s.Tok == lang.ASSIGN {
			m.assign(fr, p, s.Rhs)
			return next
		}
		x := load(p)
		y := m.scalar(fr, s.Rhs)
		store(p, arith(assignOp(s.Tok), p.typ, x, y))
	case *lang.ExprStmt:
		call, ok := s.X.(*lang.CallExpr)
		if !ok {
			internalf("%s: expression statement is not a call", s.Pos())
		}
		m.call(fr, call)
	case *lang.IfStmt:
		if m.scalar(fr, s.Cond) != 0 {
			return m.stmt(fr, s.Then)
		}
		if s.Else != nil {
			return m.stmt(fr, s.Else)
		}
	case *lang.ForStmt:
		return m.forStmt(fr, s)
	case *lang.BranchStmt:
		if s.Tok == lang.BREAK {
			return brk
		}
		return cont
	case *lang.ReturnStmt:
		return m.returnStmt(fr, s)
	case *lang.FailStmt:
		fail(uint32(m.scalar(fr, s.Code)))
	default:
		internalf("%s: unexpected statement %T", s.Pos(), s)
	}
	return next
}

func (m *machine) defVar(id *lang.Ident) *lang.Var {
	v, ok := m.info.Defs[id].(*lang.Var)
	if !ok {
		internalf("%s: %s does not declare a variable", id.Pos(), id.Name)
	}
	return v
}

// assign stores the value of e in p: a scalar, or an aggregate's bytes
// (padding included, as struct assignment copies it).
func (m *machine) assign(fr *frame, p place, e lang.Expr) {
	if _, ok := p.typ.(*lang.Basic); ok {
		store(p, m.scalar(fr, e))
		return
	}
	src := m.place(fr, e).bytes()
	copy(p.bytes(), src) // copy is memmove: p = p is harmless
}

func assignOp(t lang.Token) lang.Token {
	switch t {
	case lang.ADD_ASSIGN:
		return lang.ADD
	case lang.SUB_ASSIGN:
		return lang.SUB
	case lang.MUL_ASSIGN:
		return lang.MUL
	case lang.QUO_ASSIGN:
		return lang.QUO
	case lang.REM_ASSIGN:
		return lang.REM
	case lang.AND_ASSIGN:
		return lang.AND
	case lang.OR_ASSIGN:
		return lang.OR
	case lang.XOR_ASSIGN:
		return lang.XOR
	case lang.SHL_ASSIGN:
		return lang.SHL
	case lang.SHR_ASSIGN:
		return lang.SHR
	}
	internalf("unexpected assignment operator %s", t)
	return 0
}

func (m *machine) forStmt(fr *frame, s *lang.ForStmt) ctl {
	v := m.defVar(s.Var)
	t := v.Type()
	lo := m.scalar(fr, s.Low)
	hi := m.scalar(fr, s.High)
	capped, limit := s.Max != nil, uint64(0)
	if capped {
		limit = m.scalar(fr, s.Max) // a positive constant
	}
	for i, n := lo, uint64(0); less(t, i, hi); i, n = canon(t, i+1), n+1 {
		if capped && n == limit { // max N: iteration N+1 fails; a break before it ends the loop
			fail(bytecode.FailLoopCap)
		}
		p := newLocal(t)
		store(p, i)
		fr.vars[v] = p
		switch m.stmt(fr, s.Body) {
		case brk:
			return next
		case ret:
			return ret
		}
	}
	return next
}

// less compares canonical values of integer type t.
func less(t lang.Type, x, y uint64) bool {
	if lang.IsSigned(t) {
		return int64(x) < int64(y)
	}
	return x < y
}

func (m *machine) returnStmt(fr *frame, s *lang.ReturnStmt) ctl {
	if fr.handler == nil {
		if len(s.Results) == 1 {
			fr.result = m.scalar(fr, s.Results[0])
		}
		return ret
	}
	if len(s.Results) == 0 {
		return ret
	}
	h := fr.handler
	// Every value first, then the stores: return b, a swaps two results.
	vals := make([]func(), len(s.Results))
	for i, e := range s.Results {
		f := h.Reply.Fields[i]
		dst := place{mem: m.reply, off: f.Offset, typ: f.Type}
		if _, ok := f.Type.(*lang.Basic); ok {
			v := m.scalar(fr, e)
			vals[i] = func() { store(dst, v) }
		} else {
			b := append([]byte{}, m.place(fr, e).bytes()...)
			vals[i] = func() { copy(dst.bytes(), b) }
		}
	}
	for _, set := range vals {
		set()
	}
	return ret
}
