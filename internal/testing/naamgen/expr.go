package naamgen

import (
	"fmt"
	"math/big"
	"strings"
)

// operand is a generated expression. A constant one (literals, named
// constants, casts of constants, len) carries its value, because the
// checker folds constants: a typed constant operation that overflows, a
// constant divisor of 0 or a constant shift count past the width would be
// compile errors. So no operator is ever applied to constants only.
type operand struct {
	src   string
	konst bool
	val   *big.Int // konst: the value (bools are 0 or 1)
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }

// lit formats an integer literal in one of the language's notations.
func lit(g *gen, v *big.Int) string {
	if v.Sign() < 0 {
		return "(-" + lit(g, new(big.Int).Neg(v)) + ")"
	}
	switch g.intn(6) {
	case 0:
		return "0x" + v.Text(16)
	case 1:
		s := v.Text(16)
		if len(s) > 4 {
			s = s[:len(s)-4] + "_" + s[len(s)-4:]
		}
		return "0x" + s
	case 2:
		if v.Cmp(bigInt(1<<16)) < 0 {
			return "0b" + v.Text(2)
		}
	}
	return v.Text(10)
}

// value returns an interesting value of integer type t: small, at the
// edges, or anywhere.
func (g *gen) value(t *typ) *big.Int {
	lo, hi := intRange(t)
	switch g.intn(8) {
	case 0:
		return hi
	case 1:
		return lo
	case 2:
		return new(big.Int).Sub(hi, bigInt(int64(g.intn(3))))
	case 3:
		if t.signed() {
			return bigInt(-1 - int64(g.intn(8)))
		}
	case 4, 5:
		// anywhere
		v := new(big.Int).SetUint64(g.r.Uint64())
		return wrap(v, t)
	}
	return bigInt(int64(g.intn(20)))
}

func (g *gen) scalarType() *typ {
	if g.chance(0.15) {
		return scalar(kBool)
	}
	return scalar(intKinds[g.intn(len(intKinds))])
}

// expr returns an expression of scalar type t.
func (g *gen) expr(t *typ, depth int) operand {
	g.b.cost += g.b.mult
	if t.isBool() {
		return g.boolExpr(depth)
	}
	if depth <= 0 {
		if g.chance(0.35) {
			return g.constant(t)
		}
		return g.nonConstLeaf(t)
	}
	for {
		switch w := g.intn(100); {
		case w < 10:
			return g.constant(t)
		case w < 30:
			if x, ok := g.read(t, depth-1); ok {
				return x
			}
		case w < 42: // cast
			s := g.scalarType()
			x := g.expr(s, depth-1)
			src := fmt.Sprintf("(%s as %s)", x.src, t)
			if x.konst {
				return operand{src: src, konst: true, val: wrap(x.val, t)}
			}
			return operand{src: src}
		case w < 48: // unary
			x := g.nonConst(t, depth-1)
			op := "-"
			if g.chance(0.5) {
				op = "~"
			}
			return operand{src: fmt.Sprintf("(%s%s)", op, x.src)}
		case w < 72: // binary
			op := []string{"+", "-", "*", "/", "%", "&", "|", "^"}[g.intn(8)]
			x := g.expr(t, depth-1)
			var y operand
			switch {
			case op == "/" || op == "%":
				y = g.divisor(t, depth-1)
			case x.konst:
				y = g.nonConst(t, depth-1)
			default:
				y = g.expr(t, depth-1)
			}
			if x.konst && y.konst {
				x = g.nonConst(t, depth-1)
			}
			return operand{src: fmt.Sprintf("(%s %s %s)", x.src, op, y.src)}
		case w < 80: // shift
			x := g.nonConst(t, depth-1)
			op := "<<"
			if g.chance(0.5) {
				op = ">>"
			}
			return operand{src: fmt.Sprintf("(%s %s %s)", x.src, op, g.shiftCount(t, depth-1).src)}
		case w < 86: // fn call
			if fn := g.callee(t); fn != nil {
				return g.call(fn, depth-1)
			}
		case w < 90: // atomic
			if x, ok := g.atomic(t, depth-1); ok {
				return x
			}
		case w < 93: // hash
			if t.kind == kU64 {
				if p, ok := g.place(func(*typ) bool { return true }, false, false, depth-1); ok {
					return operand{src: "hash(" + g.bytesArg(p) + ")"}
				}
			}
		case w < 95: // len
			if p, ok := g.place(func(t *typ) bool { return t.kind == kArray }, false, false, depth-1); ok {
				return operand{src: "len(" + g.bytesArg(p) + ")", konst: true, val: bigInt(int64(p.t.n))}
			}
		case w < 98: // bool to integer
			x := g.boolExpr(depth - 1)
			src := fmt.Sprintf("(%s as %s)", x.src, t)
			if x.konst {
				return operand{src: src, konst: true, val: x.val}
			}
			return operand{src: src}
		default: // context and random
			if g.cfg.Helpers && t.kind == kU64 {
				return operand{src: []string{"random()", "src_node()", "tenant()", "request_id()"}[g.intn(4)]}
			}
		}
	}
}

// constant returns a literal or a named constant of integer type t.
func (g *gen) constant(t *typ) operand {
	if g.chance(0.3) {
		var fit []*constDef
		for _, c := range g.consts {
			if c.t == nil && fits(c.val, t) || c.t != nil && identical(c.t, t) {
				fit = append(fit, c)
			}
		}
		if len(fit) > 0 {
			c := fit[g.intn(len(fit))]
			return operand{src: c.name, konst: true, val: c.val}
		}
	}
	v := g.value(t)
	return operand{src: lit(g, v), konst: true, val: v}
}

// nonConst returns an expression of t that is not constant.
func (g *gen) nonConst(t *typ, depth int) operand {
	for range 4 {
		if x := g.expr(t, depth); !x.konst {
			return x
		}
	}
	return g.nonConstLeaf(t)
}

// nonConstLeaf reads a place of type t, or casts one of another type.
func (g *gen) nonConstLeaf(t *typ) operand {
	if x, ok := g.read(t, 0); ok {
		return x
	}
	if t.isBool() {
		x := g.nonConstLeaf(scalar(kU8))
		return operand{src: fmt.Sprintf("(%s == %s)", x.src, lit(g, bigInt(int64(g.intn(3)))))}
	}
	// Every program has a rw region, and all of its types hold integers.
	p, ok := g.place((*typ).isInt, false, false, 0)
	if !ok {
		panic("naamgen: no integer place in scope")
	}
	return operand{src: fmt.Sprintf("(%s as %s)", p.src, t)}
}

// read returns a read of a place of type t.
func (g *gen) read(t *typ, depth int) (operand, bool) {
	p, ok := g.place(func(u *typ) bool { return identical(u, t) }, false, false, depth)
	if !ok {
		return operand{}, false
	}
	return operand{src: p.src}, true
}

// divisor returns a right operand of / or %: anything but a constant 0.
func (g *gen) divisor(t *typ, depth int) operand {
	y := g.expr(t, depth)
	if y.konst && y.val.Sign() == 0 || g.chance(0.3) {
		v := bigInt(int64(1 + g.intn(9)))
		return operand{src: lit(g, v), konst: true, val: v}
	}
	return y
}

// shiftCount returns a shift count for a value of type t: a constant
// below the width, or an unsigned expression (taken modulo the width).
func (g *gen) shiftCount(t *typ, depth int) operand {
	if g.chance(0.5) || depth < 0 {
		v := bigInt(int64(g.intn(t.bits())))
		return operand{src: lit(g, v), konst: true, val: v}
	}
	u := scalar([]kind{kU8, kU16, kU32, kU64}[g.intn(4)])
	c := g.expr(u, depth)
	if c.konst && c.val.Cmp(bigInt(int64(t.bits()))) >= 0 {
		v := bigInt(int64(g.intn(t.bits())))
		return operand{src: lit(g, v), konst: true, val: v}
	}
	return c
}

// boolExpr returns an expression of type bool.
func (g *gen) boolExpr(depth int) operand {
	if depth <= 0 {
		if g.chance(0.2) {
			return g.boolConst()
		}
		return g.nonConstLeaf(scalar(kBool))
	}
	for {
		switch w := g.intn(100); {
		case w < 8:
			return g.boolConst()
		case w < 20:
			if x, ok := g.read(scalar(kBool), depth-1); ok {
				return x
			}
		case w < 55: // comparison
			t := scalar(intKinds[g.intn(len(intKinds))])
			x := g.expr(t, depth-1)
			var y operand
			if x.konst {
				y = g.nonConst(t, depth-1)
			} else {
				y = g.expr(t, depth-1)
			}
			op := []string{"==", "!=", "<", "<=", ">", ">="}[g.intn(6)]
			return operand{src: fmt.Sprintf("(%s %s %s)", x.src, op, y.src)}
		case w < 60: // bools compared
			x, y := g.boolExpr(depth-1), g.boolExpr(depth-1)
			op := "=="
			if g.chance(0.5) {
				op = "!="
			}
			return g.boolOp(x, op, y)
		case w < 75: // && ||
			x, y := g.boolExpr(depth-1), g.boolExpr(depth-1)
			op := "&&"
			if g.chance(0.5) {
				op = "||"
			}
			return g.boolOp(x, op, y)
		case w < 82:
			x := g.boolExpr(depth - 1)
			if x.konst {
				return operand{src: "(!" + x.src + ")", konst: true, val: bigInt(1 - x.val.Int64())}
			}
			return operand{src: "(!" + x.src + ")"}
		case w < 88: // arrays compared
			x, ok := g.place(func(t *typ) bool { return t.kind == kArray && t.comparable() }, false, false, depth-1)
			if !ok {
				continue
			}
			y, ok := g.place(func(t *typ) bool { return identical(t, x.t) }, false, false, depth-1)
			if !ok {
				continue
			}
			op := "=="
			if g.chance(0.3) {
				op = "!="
			}
			return operand{src: fmt.Sprintf("(%s %s %s)", x.src, op, y.src)}
		case w < 94:
			if fn := g.callee(scalar(kBool)); fn != nil {
				return g.call(fn, depth-1)
			}
		default:
			if g.cfg.Helpers {
				p, ok := g.place(func(*typ) bool { return true }, false, false, depth-1)
				if ok {
					return operand{src: fmt.Sprintf("send(%s, %s, %s)", g.expr(scalar(kU64), 0).src, g.handlerRef(), g.bytesArg(p))}
				}
			}
		}
	}
}

func (g *gen) boolConst() operand {
	if g.chance(0.5) {
		return operand{src: "true", konst: true, val: bigInt(1)}
	}
	return operand{src: "false", konst: true, val: bigInt(0)}
}

// boolOp combines two bools; constant operands fold, which is harmless for
// bools (nothing overflows).
func (g *gen) boolOp(x operand, op string, y operand) operand {
	src := fmt.Sprintf("(%s %s %s)", x.src, op, y.src)
	if !x.konst || !y.konst {
		return operand{src: src}
	}
	a, b := x.val.Sign() != 0, y.val.Sign() != 0
	var v bool
	switch op {
	case "==":
		v = a == b
	case "!=":
		v = a != b
	case "&&":
		v = a && b
	case "||":
		v = a || b
	}
	if v {
		return operand{src: src, konst: true, val: bigInt(1)}
	}
	return operand{src: src, konst: true, val: bigInt(0)}
}

// placeRes is a generated place expression.
type placeRes struct {
	src      string
	t        *typ
	writable bool
	region   bool
	ref      string // the reference variable, when src is a whole (*r)
}

// place returns a place whose type pred accepts: a variable, a region, or
// part of one (fields, elements), possibly through a reference.
func (g *gen) place(pred func(*typ) bool, writable, region bool, depth int) (placeRes, bool) {
	var roots []*variable
	for _, v := range append(g.b.vars, g.regions...) {
		if writable && !v.writable || region && !v.region {
			continue
		}
		if contains(v.t, pred) {
			roots = append(roots, v)
		}
	}
	if len(roots) == 0 {
		return placeRes{}, false
	}
	v := roots[g.intn(len(roots))]
	p := placeRes{src: v.name, t: v.t, writable: v.writable, region: v.region}
	whole := true
	for {
		var children []int
		switch p.t.kind {
		case kArray:
			if contains(p.t.elem, pred) {
				children = append(children, 0)
			}
		case kStruct:
			for i, f := range p.t.st.fields {
				if contains(f.t, pred) {
					children = append(children, i)
				}
			}
		}
		if pred(p.t) && (len(children) == 0 || g.chance(0.5)) {
			break
		}
		switch p.t.kind {
		case kArray:
			p.src += "[" + g.index(p.t.n, depth) + "]"
			p.t = p.t.elem
		case kStruct:
			f := p.t.st.fields[children[g.intn(len(children))]]
			p.src += "." + f.name
			p.t = f.t
		}
		whole = false
	}
	if v.ref && whole {
		p.ref = v.name
		p.src = "(*" + v.name + ")"
	}
	return p, true
}

// index returns an index into an array of n elements: in range, reduced
// modulo n (negative for a negative signed value), or anything. Anything
// is a region's value: an expression of lets the checker knows the value
// of (a let bound to a constant) would be a compile-time range error when
// out of range.
func (g *gen) index(n int, depth int) string {
	w := g.intn(100)
	if depth <= 0 || w < 55 {
		return lit(g, bigInt(int64(g.intn(n))))
	}
	t := scalar(intKinds[g.intn(len(intKinds))])
	if w < 90 {
		return fmt.Sprintf("%s %% %d", g.nonConst(t, depth-1).src, n)
	}
	p, ok := g.place((*typ).isInt, false, true, 0)
	if !ok {
		return lit(g, bigInt(int64(g.intn(n))))
	}
	return fmt.Sprintf("(%s as %s)", p.src, t)
}

// bytesArg formats a place for hash, copy, trace and send: the place, or
// its reference.
func (g *gen) bytesArg(p placeRes) string {
	if p.ref != "" && g.chance(0.5) {
		return p.ref
	}
	return p.src
}

// atomic returns an atomic builtin call on a rw region word of type t
// (nil: any).
func (g *gen) atomic(t *typ, depth int) (operand, bool) {
	word := func(u *typ) bool {
		return (u.kind == kU32 || u.kind == kU64 || u.kind == kI32 || u.kind == kI64) && (t == nil || identical(u, t))
	}
	p, ok := g.place(word, true, true, depth)
	if !ok {
		return operand{}, false
	}
	ref := "&" + p.src
	if p.ref != "" && g.chance(0.5) {
		ref = p.ref
	}
	op := []string{"atomic_add", "atomic_and", "atomic_or", "atomic_xor", "atomic_xchg", "atomic_cas"}[g.intn(6)]
	args := []string{ref, g.expr(p.t, depth).src}
	if op == "atomic_cas" {
		args = append(args, g.expr(p.t, depth).src)
	}
	return operand{src: op + "(" + strings.Join(args, ", ") + ")"}, true
}

// callee returns a fn the current body may call whose result is t (nil:
// any fn), and whose cost fits what is left of the budget.
func (g *gen) callee(t *typ) *fnDef {
	var fit []*fnDef
	for _, fn := range g.b.calls {
		if t != nil && (fn.result == nil || !identical(fn.result, t)) {
			continue
		}
		if g.b.cost+fn.cost*g.b.mult > g.cfg.MaxCost || !g.roomFor(fn.stack) || !g.canServe(fn) {
			continue
		}
		fit = append(fit, fn)
	}
	if len(fit) == 0 {
		return nil
	}
	return fit[g.intn(len(fit))]
}

// call returns a call of fn with generated arguments. The caller checked
// that every reference parameter can be served (refArg falls back to a
// fresh place otherwise, which always exists: see refArg).
func (g *gen) call(fn *fnDef, depth int) operand {
	g.b.cost += fn.cost * g.b.mult
	g.b.stack += fn.stack
	var args []string
	for _, p := range fn.params {
		if !p.ref {
			args = append(args, g.expr(p.t, depth).src)
			continue
		}
		args = append(args, g.refArg(p))
	}
	return operand{src: fn.name + "(" + strings.Join(args, ", ") + ")"}
}

// refArg returns an argument for reference parameter p: a reference
// variable or &place of p's type, writable if p is &mut. callee checked
// that one exists.
func (g *gen) refArg(p *variable) string {
	pl, ok := g.place(func(t *typ) bool { return identical(t, p.t) }, p.writable, false, 1)
	if !ok {
		panic(fmt.Sprintf("naamgen: no place of type %s for a reference argument", p.t))
	}
	if pl.ref != "" && g.chance(0.5) {
		return pl.ref
	}
	return "&" + pl.src
}

// canServe reports whether every reference parameter of fn has a place
// of its type in scope (writable for &mut).
func (g *gen) canServe(fn *fnDef) bool {
	for _, p := range fn.params {
		if !p.ref {
			continue
		}
		ok := false
		for _, v := range append(g.b.vars, g.regions...) {
			if (v.writable || !p.writable) && contains(v.t, func(t *typ) bool { return identical(t, p.t) }) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
