package naameval

import (
	"bytes"
	"go/constant"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

func (m *machine) typeOf(e lang.Expr) lang.Type {
	tv, ok := m.info.Types[e]
	if !ok || tv.Type == nil {
		internalf("%s: expression has no type", e.Pos())
	}
	return tv.Type
}

// constBits returns constant v as a canonical value of type t.
func constBits(v constant.Value, t lang.Type) uint64 {
	switch v.Kind() {
	case constant.Bool:
		if constant.BoolVal(v) {
			return 1
		}
		return 0
	case constant.Int:
		var bits uint64
		if i, ok := constant.Int64Val(v); ok {
			bits = uint64(i)
		} else if u, ok := constant.Uint64Val(v); ok {
			bits = u
		} else {
			internalf("constant %s does not fit 64 bits", v)
		}
		if b, ok := t.(*lang.Basic); ok && b.Kind != lang.UntypedInt && b.Kind != lang.UntypedBool {
			return canon(t, bits)
		}
		return bits
	}
	internalf("constant %s of kind %s", v, v.Kind())
	return 0
}

// scalar evaluates an expression of integer or bool type.
func (m *machine) scalar(fr *frame, e lang.Expr) uint64 {
	tv, ok := m.info.Types[e]
	if !ok {
		internalf("%s: expression has no type", e.Pos())
	}
	if tv.Value != nil {
		return constBits(tv.Value, tv.Type)
	}
	switch e := e.(type) {
	case *lang.ParenExpr:
		return m.scalar(fr, e.X)
	case *lang.Ident, *lang.IndexExpr, *lang.SelectorExpr:
		return load(m.place(fr, e))
	case *lang.UnaryExpr:
		switch e.Op {
		case lang.MUL:
			return load(m.ref(fr, e.X))
		case lang.SUB:
			return canon(tv.Type, -m.scalar(fr, e.X))
		case lang.TILDE:
			return canon(tv.Type, ^m.scalar(fr, e.X))
		case lang.NOT:
			if m.scalar(fr, e.X) != 0 {
				return 0
			}
			return 1
		}
	case *lang.BinaryExpr:
		return m.binary(fr, e, tv.Type)
	case *lang.CastExpr:
		v := m.scalar(fr, e.X)
		if basic(tv.Type).Kind == lang.Bool {
			return v
		}
		if basic(m.typeOf(e.X)).Kind == lang.Bool && v != 0 {
			v = 1
		}
		return canon(tv.Type, v)
	case *lang.CallExpr:
		return m.call(fr, e)
	}
	internalf("%s: unexpected scalar expression %T", e.Pos(), e)
	return 0
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func (m *machine) binary(fr *frame, e *lang.BinaryExpr, t lang.Type) uint64 {
	switch e.Op {
	case lang.LAND:
		return b2u(m.scalar(fr, e.X) != 0 && m.scalar(fr, e.Y) != 0)
	case lang.LOR:
		return b2u(m.scalar(fr, e.X) != 0 || m.scalar(fr, e.Y) != 0)
	case lang.EQL, lang.NEQ, lang.LSS, lang.LEQ, lang.GTR, lang.GEQ:
		ot := m.typeOf(e.X)
		if _, ok := ot.(*lang.Basic); !ok {
			// Arrays of scalars: element by element is byte by byte (no
			// padding between scalars).
			eq := bytes.Equal(m.place(fr, e.X).bytes(), m.place(fr, e.Y).bytes())
			return b2u(eq == (e.Op == lang.EQL))
		}
		x, y := m.scalar(fr, e.X), m.scalar(fr, e.Y)
		if basic(ot).Kind == lang.Bool {
			x, y = b2u(x != 0), b2u(y != 0)
		}
		switch e.Op {
		case lang.EQL:
			return b2u(x == y)
		case lang.NEQ:
			return b2u(x != y)
		case lang.LSS:
			return b2u(less(ot, x, y))
		case lang.LEQ:
			return b2u(!less(ot, y, x))
		case lang.GTR:
			return b2u(less(ot, y, x))
		case lang.GEQ:
			return b2u(!less(ot, x, y))
		}
	}
	x := m.scalar(fr, e.X)
	y := m.scalar(fr, e.Y)
	return arith(e.Op, t, x, y)
}

// arith computes x op y in integer type t, wrapping; for shifts y is the
// count (any unsigned type).
func arith(op lang.Token, t lang.Type, x, y uint64) uint64 {
	switch op {
	case lang.ADD:
		return canon(t, x+y)
	case lang.SUB:
		return canon(t, x-y)
	case lang.MUL:
		return canon(t, x*y)
	case lang.QUO, lang.REM:
		if y == 0 {
			fail(bytecode.FailDivideByZero)
		}
		if lang.IsSigned(t) {
			// Go's int64 division truncates toward zero and wraps
			// MinInt64 / -1 to MinInt64, as the language does.
			if op == lang.QUO {
				return canon(t, uint64(int64(x)/int64(y)))
			}
			return canon(t, uint64(int64(x)%int64(y)))
		}
		if op == lang.QUO {
			return canon(t, x/y)
		}
		return canon(t, x%y)
	case lang.AND:
		return canon(t, x&y)
	case lang.OR:
		return canon(t, x|y)
	case lang.XOR:
		return canon(t, x^y)
	case lang.SHL:
		return canon(t, x<<(y%width(t)))
	case lang.SHR:
		n := y % width(t)
		if lang.IsSigned(t) {
			return canon(t, uint64(int64(x)>>n))
		}
		return canon(t, x>>n)
	}
	internalf("unexpected operator %s", op)
	return 0
}

// place evaluates an expression that names memory: a variable, a region,
// an element, a field, or *r.
func (m *machine) place(fr *frame, e lang.Expr) place {
	switch e := e.(type) {
	case *lang.ParenExpr:
		return m.place(fr, e.X)
	case *lang.Ident:
		switch obj := m.info.Uses[e].(type) {
		case *lang.Var:
			p, ok := fr.vars[obj]
			if !ok {
				internalf("%s: variable %s has no storage", e.Pos(), e.Name)
			}
			if _, isRef := obj.Type().(*lang.Ref); isRef {
				internalf("%s: reference %s used as a place", e.Pos(), e.Name)
			}
			return p
		case *lang.Region:
			return place{mem: m.req.Regions[obj.Index], typ: obj.Type()}
		}
		internalf("%s: %s is not a variable or region", e.Pos(), e.Name)
	case *lang.UnaryExpr:
		if e.Op == lang.MUL {
			return m.ref(fr, e.X)
		}
	case *lang.IndexExpr:
		base := m.base(fr, e.X)
		arr, ok := base.typ.(*lang.Array)
		if !ok {
			internalf("%s: indexing %s", e.Pos(), base.typ)
		}
		it := m.typeOf(e.Index)
		i := m.scalar(fr, e.Index)
		if lang.IsSigned(it) && int64(i) < 0 || i >= uint64(arr.Len) {
			fail(bytecode.FailIndexOutOfRange)
		}
		return place{mem: base.mem, off: base.off + int64(i)*lang.Sizeof(arr.Elem), typ: arr.Elem}
	case *lang.SelectorExpr:
		base := m.base(fr, e.X)
		st, ok := base.typ.(*lang.Struct)
		if !ok {
			internalf("%s: selecting from %s", e.Pos(), base.typ)
		}
		f := st.Field(e.Sel.Name)
		if f == nil {
			internalf("%s: %s has no field %s", e.Pos(), st, e.Sel.Name)
		}
		return place{mem: base.mem, off: base.off + f.Offset, typ: f.Type}
	}
	internalf("%s: %T is not a place", e.Pos(), e)
	return place{}
}

// base evaluates the operand of indexing or field selection, which goes
// through a reference automatically.
func (m *machine) base(fr *frame, e lang.Expr) place {
	if _, ok := m.typeOf(e).(*lang.Ref); ok {
		return m.ref(fr, e)
	}
	return m.place(fr, e)
}

// ref evaluates an expression of reference type to the place it refers to.
func (m *machine) ref(fr *frame, e lang.Expr) place {
	switch e := e.(type) {
	case *lang.ParenExpr:
		return m.ref(fr, e.X)
	case *lang.Ident:
		if v, ok := m.info.Uses[e].(*lang.Var); ok {
			if p, ok := fr.vars[v]; ok {
				return p
			}
		}
		internalf("%s: reference %s has no target", e.Pos(), e.Name)
	case *lang.UnaryExpr:
		if e.Op == lang.AND {
			return m.place(fr, e.X)
		}
	}
	internalf("%s: %T is not a reference", e.Pos(), e)
	return place{}
}

// bytesArg evaluates a helper's memory argument: a place or a reference.
func (m *machine) bytesArg(fr *frame, e lang.Expr) place {
	return m.base(fr, e)
}

// call evaluates a call of a fn or a builtin; a call without a result
// gives 0.
func (m *machine) call(fr *frame, e *lang.CallExpr) uint64 {
	switch obj := m.info.Uses[e.Fun].(type) {
	case *lang.Func:
		return m.callFunc(fr, e, obj)
	case *lang.Builtin:
		return m.builtin(fr, e, obj.Name())
	}
	internalf("%s: %s is not a fn or builtin", e.Pos(), e.Fun.Name)
	return 0
}

func (m *machine) callFunc(fr *frame, e *lang.CallExpr, fn *lang.Func) uint64 {
	callee := &frame{vars: map[*lang.Var]place{}}
	for i, a := range e.Args {
		p := fn.Params[i]
		if _, ok := p.Type().(*lang.Ref); ok {
			callee.vars[p] = m.ref(fr, a)
			continue
		}
		buf := newLocal(p.Type())
		store(buf, m.scalar(fr, a))
		callee.vars[p] = buf
	}
	m.block(callee, fn.Decl.Body.List)
	return callee.result
}

func (m *machine) builtin(fr *frame, e *lang.CallExpr, name string) uint64 {
	args := e.Args
	switch name {
	case "min", "max":
		t := m.info.Types[e].Type
		x, y := m.scalar(fr, args[0]), m.scalar(fr, args[1])
		if less(t, y, x) == (name == "min") {
			return y
		}
		return x
	case "hash":
		return fnv1a(m.bytesArg(fr, args[0]).bytes())
	case "copy":
		dst := m.bytesArg(fr, args[0])
		src := m.bytesArg(fr, args[1])
		copy(dst.bytes(), src.bytes()) // memmove
		return 0
	case "now":
		return m.env.Now()
	case "random":
		return m.env.Random()
	case "trace":
		m.env.Trace(append([]byte{}, m.bytesArg(fr, args[0]).bytes()...))
		return 0
	case "send":
		node := m.scalar(fr, args[0])
		h := uint32(m.scalar(fr, args[1]))
		p := m.bytesArg(fr, args[2])
		return b2u(m.env.Send(node, h, append([]byte{}, p.bytes()...)) == nil)
	case "forward":
		node := m.scalar(fr, args[0])
		h := uint32(m.scalar(fr, args[1]))
		if m.env.Forward(node, h) != nil {
			fail(bytecode.FailForward)
		}
		panic(forwarded{node: node, handler: h})
	case "src_node":
		return m.req.Context.SrcNode
	case "tenant":
		return m.req.Context.Tenant
	case "request_id":
		return m.req.Context.RequestID
	case "atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas":
		w := m.ref(fr, args[0])
		v := m.scalar(fr, args[1])
		var repl uint64
		if name == "atomic_cas" {
			repl = m.scalar(fr, args[2])
		}
		old := load(w)
		switch name {
		case "atomic_add":
			store(w, old+v)
		case "atomic_and":
			store(w, old&v)
		case "atomic_or":
			store(w, old|v)
		case "atomic_xor":
			store(w, old^v)
		case "atomic_xchg":
			store(w, v)
		case "atomic_cas":
			if old == v {
				store(w, repl)
			}
		}
		return old
	}
	internalf("%s: unknown builtin %s", e.Pos(), name)
	return 0
}
