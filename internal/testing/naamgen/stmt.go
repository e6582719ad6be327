package naamgen

import (
	"fmt"
	"strings"
)

// maxStack keeps a body's locals, with those of the fns it calls (the
// compiler inlines them into the handler's frame), well under the
// 512-byte frame: the register allocator spills into the same frame.
const maxStack = 320

// maxMult bounds the iterations of a loop nest.
const maxMult = 64

// block generates up to n statements at indent; a nested block may end in
// a terminator (return, fail, break, continue).
func (g *gen) block(indent, n int, nested bool) {
	b := g.b
	saved := len(b.vars)
	count := 1 + g.intn(n)
	if nested {
		count = g.intn(n + 1)
	}
	for range count {
		if b.cost > g.cfg.MaxCost {
			break
		}
		g.stmt(indent)
	}
	if nested && g.chance(0.3) {
		g.terminator(indent)
	}
	b.vars = b.vars[:saved]
}

func (g *gen) declare(v *variable, size int) {
	g.b.vars = append(g.b.vars, v)
	g.b.stack += roundUp(max(size, 1), 8)
}

func (g *gen) roomFor(size int) bool { return g.b.stack+roundUp(max(size, 1), 8) <= maxStack }

func (g *gen) stmt(indent int) {
	b := g.b
	b.cost += b.mult
	for {
		switch w := g.intn(100); {
		case w < 10: // let of a scalar
			if !g.roomFor(8) {
				continue
			}
			t := g.scalarType()
			x := g.expr(t, g.cfg.MaxDepth)
			v := &variable{name: g.name("v"), t: t}
			if x.konst || g.chance(0.5) {
				g.line(indent, "let %s: %s = %s", v.name, t, x.src)
			} else {
				g.line(indent, "let %s = %s", v.name, x.src)
			}
			g.declare(v, t.size())
		case w < 20: // var of a scalar
			if !g.roomFor(8) {
				continue
			}
			t := g.scalarType()
			v := &variable{name: g.name("v"), t: t, writable: true}
			switch g.intn(3) {
			case 0:
				g.line(indent, "var %s: %s", v.name, t)
			case 1:
				g.line(indent, "var %s: %s = %s", v.name, t, g.expr(t, g.cfg.MaxDepth).src)
			default:
				g.line(indent, "var %s = %s", v.name, g.nonConst(t, g.cfg.MaxDepth).src)
			}
			g.declare(v, t.size())
		case w < 25: // an aggregate local
			if !g.aggregateLocal(indent) {
				continue
			}
		case w < 30: // a reference
			if !g.roomFor(8) {
				continue
			}
			p, ok := g.place(func(*typ) bool { return true }, false, false, g.cfg.MaxDepth)
			if !ok {
				continue
			}
			v := &variable{name: g.name("r"), t: p.t, ref: true, writable: p.writable, region: p.region}
			g.line(indent, "let %s = &%s", v.name, p.src)
			g.declare(v, 8)
		case w < 48: // scalar assignment
			p, ok := g.place((*typ).isScalar, true, false, g.cfg.MaxDepth)
			if !ok {
				continue
			}
			if p.t.isInt() && g.chance(0.5) {
				op := []string{"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"}[g.intn(10)]
				var y operand
				switch op {
				case "<<", ">>":
					y = g.shiftCount(p.t, g.cfg.MaxDepth-1)
				case "/", "%":
					y = g.divisor(p.t, g.cfg.MaxDepth-1)
				default:
					y = g.expr(p.t, g.cfg.MaxDepth-1)
				}
				g.line(indent, "%s %s= %s", p.src, op, y.src)
			} else {
				g.line(indent, "%s = %s", p.src, g.expr(p.t, g.cfg.MaxDepth).src)
			}
		case w < 53: // aggregate assignment or copy
			dst, ok := g.place(func(t *typ) bool { return !t.isScalar() }, true, false, g.cfg.MaxDepth-1)
			if !ok {
				continue
			}
			src, ok := g.place(func(t *typ) bool { return identical(t, dst.t) }, false, false, g.cfg.MaxDepth-1)
			if !ok {
				continue
			}
			if g.chance(0.5) {
				g.line(indent, "%s = %s", dst.src, src.src)
			} else {
				g.line(indent, "copy(%s, %s)", g.bytesArg(dst), g.bytesArg(src))
			}
		case w < 66: // if
			g.line(indent, "if %s {", g.expr(scalar(kBool), g.cfg.MaxDepth).src)
			g.nested(indent + 1)
			for g.chance(0.4) {
				if g.chance(0.4) {
					g.line(indent, "} else if %s {", g.expr(scalar(kBool), g.cfg.MaxDepth).src)
					g.nested(indent + 1)
					continue
				}
				g.line(indent, "} else {")
				g.nested(indent + 1)
				break
			}
			g.line(indent, "}")
		case w < 76: // loops
			if b.loops >= 2 || b.mult*2 > maxMult || !g.roomFor(8) {
				continue
			}
			g.loop(indent)
		case w < 82: // atomic statement
			x, ok := g.atomic(nil, g.cfg.MaxDepth-1)
			if !ok {
				continue
			}
			g.line(indent, "%s", x.src)
		case w < 90: // fn call
			fn := g.callee(nil)
			if fn == nil {
				continue
			}
			g.line(indent, "%s", g.call(fn, g.cfg.MaxDepth-1).src)
		case w < 94: // hash into a variable
			if !g.roomFor(8) {
				continue
			}
			p, ok := g.place(func(*typ) bool { return true }, false, false, g.cfg.MaxDepth-1)
			if !ok {
				continue
			}
			v := &variable{name: g.name("v"), t: scalar(kU64)}
			g.line(indent, "let %s = hash(%s)", v.name, g.bytesArg(p))
			g.declare(v, 8)
		default: // helpers
			if !g.cfg.Helpers {
				continue
			}
			p, ok := g.place(func(*typ) bool { return true }, false, false, g.cfg.MaxDepth-1)
			if !ok {
				continue
			}
			if g.chance(0.5) {
				g.line(indent, "trace(%s)", g.bytesArg(p))
			} else {
				g.line(indent, "send(%s, %s, %s)", g.expr(scalar(kU64), 1).src, g.handlerRef(), g.bytesArg(p))
			}
		}
		return
	}
}

// nested generates a block inside an if.
func (g *gen) nested(indent int) {
	g.block(indent, max(1, g.cfg.MaxStmts/(2+g.b.loops)), true)
}

// aggregateLocal declares an array or struct local.
func (g *gen) aggregateLocal(indent int) bool {
	if g.chance(0.5) {
		src, ok := g.place(func(t *typ) bool { return !t.isScalar() }, false, false, g.cfg.MaxDepth-1)
		if !ok || !g.roomFor(src.t.size()) {
			return false
		}
		v := &variable{name: g.name("v"), t: src.t, writable: g.chance(0.6)}
		kw := "let"
		if v.writable {
			kw = "var"
		}
		g.line(indent, "%s %s = %s", kw, v.name, src.src)
		g.declare(v, v.t.size())
		return true
	}
	var t *typ
	if g.chance(0.5) {
		t = g.structType(g.intn(len(g.structs)))
	} else {
		t = arrayOf(scalar(kind(g.intn(int(kI64)+1))), 2+g.intn(6))
	}
	if !g.roomFor(t.size()) {
		return false
	}
	v := &variable{name: g.name("v"), t: t, writable: true}
	g.line(indent, "var %s: %s", v.name, t)
	g.declare(v, t.size())
	return true
}

// loop generates a constant or a capped loop.
func (g *gen) loop(indent int) {
	b := g.b
	t := scalar(intKinds[g.intn(len(intKinds))])
	v := &variable{name: g.name("k"), t: t}
	var trips int
	if g.chance(0.5) {
		trips = 1 + g.intn(min(8, maxMult/b.mult))
		lo := g.smallValue(t)
		hi := lo + int64(trips)
		if g.chance(0.1) {
			lo, hi = hi, lo // runs nothing
		}
		lo64, hi64 := lit(g, bigInt(lo)), lit(g, bigInt(hi))
		if t.kind == kU64 && g.chance(0.5) {
			g.line(indent, "for %s in %s..%s {", v.name, lo64, hi64)
		} else {
			g.line(indent, "for %s: %s in %s..%s {", v.name, t, lo64, hi64)
		}
	} else {
		trips = 1 + g.intn(min(8, maxMult/b.mult))
		var lo, hi operand
		if g.chance(0.5) {
			lo = operand{src: lit(g, bigInt(g.smallValue(t))), konst: true}
			k := trips + 2
			hi = operand{src: fmt.Sprintf("(%s %% %d)", g.nonConst(t, 1).src, k)}
		} else {
			lo, hi = g.expr(t, 1), g.expr(t, 1)
		}
		g.line(indent, "for %s: %s in %s..%s max %d {", v.name, t, lo.src, hi.src, trips)
	}
	g.declare(v, t.size())
	saved := len(b.vars)
	b.loops++
	b.mult *= trips
	g.block(indent+1, max(1, g.cfg.MaxStmts/2), true)
	b.mult /= trips
	b.loops--
	b.vars = b.vars[:saved-1] // the loop variable too
	g.line(indent, "}")
}

// smallValue returns a small value of t for loop bounds.
func (g *gen) smallValue(t *typ) int64 {
	if t.signed() {
		return int64(g.intn(10)) - 5
	}
	return int64(g.intn(10))
}

// terminator ends a nested block.
func (g *gen) terminator(indent int) {
	b := g.b
	switch w := g.intn(10); {
	case b.loops > 0 && w < 4:
		if g.chance(0.5) {
			g.line(indent, "break")
		} else {
			g.line(indent, "continue")
		}
	case w < 6:
		g.line(indent, "fail(%d)", 1+g.intn(1000))
	case b.h != nil && g.cfg.Helpers && w < 7:
		g.line(indent, "forward(%s, %s)", g.expr(scalar(kU64), 1).src, g.handlerRef())
	default:
		g.line(indent, "%s", g.returnStmt())
	}
}

// returnStmt returns a return statement for the current body.
func (g *gen) returnStmt() string {
	b := g.b
	if b.fn != nil {
		if b.fn.result == nil {
			return "return"
		}
		return "return " + g.expr(b.fn.result, g.cfg.MaxDepth).src
	}
	h := b.h
	switch {
	case len(h.results) == 0:
		return "return"
	case !h.named:
		return "return " + g.expr(h.results[0].t, g.cfg.MaxDepth).src
	case g.chance(0.4):
		return "return"
	}
	var vals []string
	for _, f := range h.results {
		if f.t.isScalar() {
			vals = append(vals, g.expr(f.t, g.cfg.MaxDepth-1).src)
			continue
		}
		p, ok := g.place(func(t *typ) bool { return identical(t, f.t) }, false, false, g.cfg.MaxDepth-1)
		if !ok {
			return "return" // the result itself is always such a place; not reached
		}
		vals = append(vals, p.src)
	}
	return "return " + strings.Join(vals, ", ")
}

// handlerRef names a handler for send or forward: a declared one, or an id.
func (g *gen) handlerRef() string {
	if len(g.handlers) > 0 && g.chance(0.7) {
		return g.handlers[g.intn(len(g.handlers))].name
	}
	if b := g.b; b.h != nil && g.chance(0.5) {
		return b.h.name
	}
	return fmt.Sprintf("%d", g.intn(4))
}
