package lang

import (
	"fmt"
	"go/constant"
	"strings"
)

type operandMode int

const (
	invalid     operandMode = iota // an error was reported
	novalue                        // a call without a result
	constMode                      // a constant: val is set
	valueMode                      // a computed value
	placeMode                      // a place in memory (a variable, a field, an element)
	typeMode                       // a type
	builtinMode                    // a builtin function
	funcMode                       // a fn
	handlerMode                    // a handler
)

// operand is the checker's view of an evaluated expression.
type operand struct {
	mode operandMode
	expr Expr
	typ  Type
	val  constant.Value
	obj  Object

	// For a place: whether it may be written (and if not, why not) and
	// which memory it is in.
	writable bool
	whyRO    string
	root     placeRoot
	// For a value of reference type: what it points into.
	target placeRoot
	// known is the value of an integer operand that is not a constant but
	// whose value the checker knows all the same (a let bound to a
	// constant, arithmetic on such lets): only for range checks (index),
	// never for types or folding.
	known constant.Value
}

// knownValue is x's value when the checker knows it: a constant's, or
// known.
func (x *operand) knownValue() constant.Value {
	if x.mode == constMode {
		return x.val
	}
	return x.known
}

func describe(x *operand) string {
	switch x.mode {
	case novalue:
		return "no value"
	case constMode:
		if isUntyped(x.typ) {
			return fmt.Sprintf("%s constant %s", x.typ, valueString(x.val))
		}
		return fmt.Sprintf("constant %s of type %s", valueString(x.val), x.typ)
	case typeMode:
		return "a type"
	}
	return "of type " + x.typ.String()
}

// expr evaluates e as a value (or place) and records its type.
func (c *checker) expr(x *operand, e Expr) {
	c.rawExpr(x, e)
	switch x.mode {
	case typeMode:
		c.errorf(e.Pos(), "%s is a type, not a value", exprString(e))
		x.mode = invalid
	case builtinMode, funcMode:
		c.errorf(e.Pos(), "%s must be called", exprString(e))
		x.mode = invalid
	case handlerMode:
		c.errorf(e.Pos(), "handler %s can only be named in send or forward", exprString(e))
		x.mode = invalid
	}
	if x.mode == invalid {
		x.typ = Typ[Invalid]
		return
	}
	c.setType(e, x.typ, x.val)
}

func (c *checker) setType(e Expr, t Type, v constant.Value) {
	c.info.Types[e] = TypeAndValue{Type: t, Value: v}
}

// updateType gives an untyped constant expression, and its untyped
// operands, their final type.
func (c *checker) updateType(e Expr, t Type) {
	tv, ok := c.info.Types[e]
	if !ok || !isUntyped(tv.Type) {
		return
	}
	tv.Type = t
	c.info.Types[e] = tv
	switch e := e.(type) {
	case *ParenExpr:
		c.updateType(e.X, t)
	case *UnaryExpr:
		c.updateType(e.X, t)
	case *BinaryExpr:
		switch e.Op {
		case EQL, NEQ, LSS, LEQ, GTR, GEQ:
		case SHL, SHR:
			c.updateType(e.X, t)
		default:
			c.updateType(e.X, t)
			c.updateType(e.Y, t)
		}
	}
}

// assign checks that x can be stored in a T (no implicit conversions:
// only an untyped constant that fits, or &mut T where &T is wanted) and
// converts untyped constants.
func (c *checker) assign(x *operand, t Type, context string) bool {
	if x.mode == invalid || isInvalid(t) {
		return false
	}
	if isUntyped(x.typ) {
		ok := false
		switch {
		case x.typ == Typ[UntypedInt] && isInteger(t) && !isUntyped(t):
			if !representable(x.val, t) {
				c.errorf(x.expr.Pos(), "constant %s does not fit %s (in %s)", valueString(x.val), t, context)
				return false
			}
			ok = true
		case x.typ == Typ[UntypedBool] && t == Typ[Bool]:
			ok = true
		}
		if !ok {
			c.errorf(x.expr.Pos(), "cannot use %s (%s) as %s in %s", exprString(x.expr), describe(x), t, context)
			return false
		}
		x.typ = t
		c.updateType(x.expr, t)
		return true
	}
	if identical(x.typ, t) {
		return true
	}
	if r, ok := x.typ.(*Ref); ok {
		if w, ok := t.(*Ref); ok && r.Mut && !w.Mut && identical(r.Elem, w.Elem) {
			return true
		}
	}
	hint := ""
	if isInteger(x.typ) && isInteger(t) {
		hint = fmt.Sprintf(" (convert with %s as %s)", exprString(x.expr), t)
	}
	c.errorf(x.expr.Pos(), "cannot use %s (%s) as %s in %s%s", exprString(x.expr), describe(x), t, context, hint)
	return false
}

// defaultType gives an untyped constant its default type: u64 or bool.
func (c *checker) defaultType(x *operand) {
	switch x.typ {
	case Typ[UntypedInt]:
		if !representable(x.val, Typ[U64]) {
			c.errorf(x.expr.Pos(), "constant %s does not fit u64, the default type of an integer constant; write its type", valueString(x.val))
			x.mode, x.typ = invalid, Typ[Invalid]
			return
		}
		x.typ = Typ[U64]
		c.updateType(x.expr, x.typ)
	case Typ[UntypedBool]:
		x.typ = Typ[Bool]
		c.updateType(x.expr, x.typ)
	}
}

// deref turns a reference into the place it refers to (automatic for
// field access and indexing).
func deref(x *operand) {
	r, ok := x.typ.(*Ref)
	if !ok {
		return
	}
	x.mode, x.typ, x.root = placeMode, r.Elem, x.target
	x.writable = r.Mut
	x.whyRO = ""
	if !r.Mut {
		x.whyRO = "it is reached through a read-only reference (" + r.String() + ")"
	}
}

func (c *checker) rawExpr(x *operand, e Expr) {
	*x = operand{mode: invalid, expr: e, typ: Typ[Invalid]}
	switch e := e.(type) {
	case *BadExpr:
	case *Ident:
		c.ident(x, e)
	case *IntLit:
		v := intLitValue(e.Lit)
		if v == nil {
			c.errorf(e.Pos(), "malformed number %s", e.Lit)
			return
		}
		x.mode, x.typ, x.val = constMode, Typ[UntypedInt], v
	case *BoolLit:
		x.mode, x.typ, x.val = constMode, Typ[UntypedBool], constant.MakeBool(e.Value)
	case *ParenExpr:
		c.rawExpr(x, e.X)
		x.expr = e
		if x.mode != invalid && x.mode != typeMode {
			c.setType(e.X, x.typ, x.val)
		}
	case *UnaryExpr:
		c.unary(x, e)
	case *BinaryExpr:
		c.expr(x, e.X)
		var y operand
		c.expr(&y, e.Y)
		c.binary(x, &y, e.Op, e.OpPos, e)
	case *CastExpr:
		c.cast(x, e)
	case *CallExpr:
		c.callExpr(x, e, false)
	case *IndexExpr:
		c.index(x, e)
	case *SelectorExpr:
		c.selector(x, e)
	case *ArrayType, *RefType:
		x.typ = c.typeExpr(e)
		x.mode = typeMode
	default:
		c.errorf(e.Pos(), "unexpected expression")
	}
}

func (c *checker) ident(x *operand, e *Ident) {
	obj := c.lookup(e)
	if obj == nil {
		return
	}
	x.obj = obj
	switch obj := obj.(type) {
	case *Const:
		c.resolve(obj)
		if isInvalid(obj.typ) || obj.Val == nil {
			return
		}
		x.mode, x.typ, x.val = constMode, obj.typ, obj.Val
	case *TypeName:
		c.resolve(obj)
		x.mode, x.typ = typeMode, obj.typ
	case *Region:
		c.resolve(obj)
		if isInvalid(obj.typ) {
			return
		}
		x.mode, x.typ, x.root = placeMode, obj.typ, rootRegion
		x.writable = obj.Writable
		x.whyRO = "region " + obj.name + " is read-only (ro)"
	case *Var:
		if isInvalid(obj.typ) {
			return
		}
		x.mode, x.typ = placeMode, obj.typ
		if _, ok := obj.typ.(*Ref); ok {
			x.root, x.target = rootStack, obj.root
		} else {
			x.root = obj.root
		}
		switch obj.Kind {
		case LocalVar, HandlerResult:
			x.writable = true
		case LocalLet:
			x.whyRO = obj.name + " is declared with let (use var for a variable)"
			x.known = c.known[obj]
		case LoopVar:
			x.whyRO = obj.name + " is a loop variable"
		case Param:
			x.whyRO = obj.name + " is a parameter"
		case HandlerArg:
			x.whyRO = obj.name + " is a handler argument and the request is read-only"
		}
	case *Func:
		x.mode = funcMode
	case *Builtin:
		x.mode = builtinMode
	case *Handler:
		x.mode = handlerMode
	}
}

func (c *checker) unary(x *operand, e *UnaryExpr) {
	c.expr(x, e.X)
	if x.mode == invalid {
		return
	}
	x.expr = e
	if e.Op != SUB && e.Op != TILDE {
		x.known = nil
	}
	if x.mode == novalue {
		c.errorf(e.X.Pos(), "%s has no value", exprString(e.X))
		x.mode = invalid
		return
	}
	switch e.Op {
	case AND:
		if x.mode != placeMode {
			c.errorf(e.Pos(), "cannot take a reference to %s: it is not a place in memory", exprString(e.X))
			x.mode = invalid
			return
		}
		if _, ok := x.typ.(*Ref); ok {
			c.errorf(e.Pos(), "cannot take a reference to the reference %s", exprString(e.X))
			x.mode = invalid
			return
		}
		x.typ = &Ref{Elem: x.typ, Mut: x.writable}
		x.mode, x.target = valueMode, x.root
	case MUL:
		if _, ok := x.typ.(*Ref); !ok {
			c.errorf(e.Pos(), "cannot dereference %s (%s): it is not a reference", exprString(e.X), describe(x))
			x.mode = invalid
			return
		}
		deref(x)
	case SUB, TILDE:
		if !isInteger(x.typ) {
			c.errorf(e.Pos(), "operator %s needs an integer, not %s (%s)", e.Op, exprString(e.X), describe(x))
			x.mode = invalid
			return
		}
		if x.mode == constMode {
			if e.Op == SUB {
				x.val = constant.UnaryOp(tokenSUB, x.val, 0)
			} else if isUntyped(x.typ) || isSigned(x.typ) {
				x.val = constant.UnaryOp(gotokenXOR, x.val, 0)
			} else {
				x.val = constant.UnaryOp(gotokenXOR, x.val, bits(x.typ))
			}
			c.checkOverflow(x)
			return
		}
		if x.known != nil {
			if e.Op == SUB {
				x.known = wrap(constant.UnaryOp(tokenSUB, x.known, 0), x.typ)
			} else {
				x.known = wrap(constant.UnaryOp(gotokenXOR, x.known, bits(x.typ)), x.typ)
			}
		}
		x.mode = valueMode
	case NOT:
		if !isBool(x.typ) {
			c.errorf(e.Pos(), "operator ! needs a bool, not %s (%s); use ~ for bitwise not", exprString(e.X), describe(x))
			x.mode = invalid
			return
		}
		if x.mode == constMode {
			x.val = constant.UnaryOp(tokenNOT, x.val, 0)
			return
		}
		x.mode = valueMode
	}
}

// checkOverflow reports a typed constant that does not fit its type.
func (c *checker) checkOverflow(x *operand) {
	// Untyped constants are exact, within reason: like Go, cap them at
	// 512 bits so that repeated squaring cannot exhaust memory.
	if x.mode == constMode && x.typ == Typ[UntypedInt] && constant.BitLen(x.val) > 512 {
		c.errorf(x.expr.Pos(), "constant overflow: more than 512 bits")
		x.mode = invalid
		return
	}
	if x.mode == constMode && isInteger(x.typ) && !isUntyped(x.typ) && !representable(x.val, x.typ) {
		c.errorf(x.expr.Pos(), "constant %s overflows %s", valueString(x.val), x.typ)
		x.mode = invalid
	}
}

// binary checks x op y, leaving the result in x. e is the whole expression.
func (c *checker) binary(x, y *operand, op Token, opPos Pos, e Expr) {
	if x.mode == invalid || y.mode == invalid {
		x.mode, x.typ = invalid, Typ[Invalid]
		return
	}
	for _, o := range []*operand{x, y} {
		if o.mode == novalue {
			c.errorf(o.expr.Pos(), "%s has no value", exprString(o.expr))
			x.mode, x.typ = invalid, Typ[Invalid]
			return
		}
		if _, ok := o.typ.(*Ref); ok {
			c.errorf(opPos, "operator %s does not apply to references (%s is %s)", op, exprString(o.expr), o.typ)
			x.mode, x.typ = invalid, Typ[Invalid]
			return
		}
	}
	fail := func(format string, args ...any) {
		c.errorf(opPos, format, args...)
		x.mode, x.typ = invalid, Typ[Invalid]
	}
	bothConst := x.mode == constMode && y.mode == constMode
	kx, ky := x.knownValue(), y.knownValue()
	x.known = nil
	switch op {
	case SHL, SHR:
		if !isInteger(x.typ) || !isInteger(y.typ) {
			fail("operator %s needs integers, not %s and %s", op, x.typ, y.typ)
			return
		}
		if isSigned(y.typ) {
			fail("shift count %s must be unsigned, not %s", exprString(y.expr), y.typ)
			return
		}
		if y.mode == constMode {
			if constant.Sign(y.val) < 0 {
				fail("negative shift count %s", valueString(y.val))
				return
			}
			if !isUntyped(x.typ) {
				if n, ok := constant.Uint64Val(y.val); !ok || n >= uint64(bits(x.typ)) {
					fail("shift count %s is not less than the width of %s (%d)", valueString(y.val), x.typ, bits(x.typ))
					return
				}
			}
			if isUntyped(y.typ) {
				c.assign(y, Typ[U32], "shift count")
			}
		}
		if bothConst {
			n, ok := constant.Uint64Val(y.val)
			if !ok || n > 4096 {
				fail("shift count %s is too large", valueString(y.val))
				return
			}
			x.val = constant.Shift(x.val, goOps[op], uint(n))
			x.expr = e
			c.checkOverflow(x)
			return
		}
		if isUntyped(x.typ) {
			c.defaultType(x)
			if x.mode == invalid {
				return
			}
		}
		x.mode, x.expr, x.val = valueMode, e, nil
		return
	}

	// Both operands must have one type; an untyped constant takes the other's.
	if isUntyped(x.typ) && !isUntyped(y.typ) {
		if !c.assign(x, y.typ, "operand of "+op.String()) {
			x.mode, x.typ = invalid, Typ[Invalid]
			return
		}
	} else if isUntyped(y.typ) && !isUntyped(x.typ) {
		if !c.assign(y, x.typ, "operand of "+op.String()) {
			x.mode, x.typ = invalid, Typ[Invalid]
			return
		}
	} else if !identical(x.typ, y.typ) {
		hint := ""
		if isInteger(x.typ) && isInteger(y.typ) {
			hint = " (convert one with as)"
		}
		fail("mismatched types %s and %s in %s%s", x.typ, y.typ, exprString(e), hint)
		return
	}
	t := x.typ
	switch op {
	case LAND, LOR:
		if !isBool(t) || !isBool(y.typ) {
			fail("operator %s needs bools, not %s and %s", op, x.typ, y.typ)
			return
		}
	case EQL, NEQ:
		if !comparable(t) {
			if _, ok := t.(*Struct); ok {
				fail("cannot compare structs (%s); compare their fields", t)
			} else {
				fail("cannot compare values of type %s", t)
			}
			return
		}
	case LSS, LEQ, GTR, GEQ:
		if !isInteger(t) || !isInteger(y.typ) {
			fail("operator %s needs integers, not %s and %s", op, x.typ, y.typ)
			return
		}
	default: // + - * / % & | ^
		if !isInteger(t) || !isInteger(y.typ) {
			fail("operator %s needs integers, not %s and %s", op, x.typ, y.typ)
			return
		}
		if (op == QUO || op == REM) && y.mode == constMode && constant.Sign(y.val) == 0 {
			fail("division by zero")
			return
		}
	}
	x.expr = e
	switch op {
	case EQL, NEQ, LSS, LEQ, GTR, GEQ:
		if bothConst {
			x.val = constant.MakeBool(constant.Compare(x.val, goOps[op], y.val))
			x.typ = Typ[UntypedBool]
			return
		}
		x.mode, x.typ, x.val = valueMode, Typ[Bool], nil
		return
	}
	if bothConst {
		if op == LAND || op == LOR {
			xb, yb := constant.BoolVal(x.val), constant.BoolVal(y.val)
			x.val = constant.MakeBool(op == LAND && xb && yb || op == LOR && (xb || yb))
			return
		}
		x.val = constant.BinaryOp(x.val, goOps[op], y.val)
		c.checkOverflow(x)
		return
	}
	x.mode, x.val = valueMode, nil
	switch op {
	case ADD, SUB, MUL, AND, OR, XOR:
		if kx != nil && ky != nil && !isUntyped(t) {
			x.known = wrap(constant.BinaryOp(kx, goOps[op], ky), t)
		}
	}
}

func (c *checker) cast(x *operand, e *CastExpr) {
	t := c.typeExpr(e.Type)
	c.expr(x, e.X)
	if x.mode == invalid || isInvalid(t) {
		x.mode, x.typ = invalid, Typ[Invalid]
		return
	}
	x.expr = e
	if !isScalar(t) {
		c.errorf(e.Type.Pos(), "cannot cast to %s: casts are between integer and bool types", t)
		x.mode = invalid
		return
	}
	if x.mode == novalue || !isScalar(x.typ) {
		c.errorf(e.X.Pos(), "cannot cast %s (%s) to %s", exprString(e.X), describe(x), t)
		x.mode = invalid
		return
	}
	if t == Typ[Bool] {
		if !isBool(x.typ) {
			c.errorf(e.As, "cannot cast %s (%s) to bool; compare it with 0", exprString(e.X), describe(x))
			x.mode = invalid
			return
		}
	} else if x.mode == constMode {
		if isBool(x.typ) {
			if constant.BoolVal(x.val) {
				x.val = constant.MakeInt64(1)
			} else {
				x.val = constant.MakeInt64(0)
			}
		}
		x.val = wrap(x.val, t)
	}
	if x.mode != constMode {
		x.mode = valueMode
	}
	if x.known != nil && isInteger(t) {
		x.known = wrap(x.known, t)
	} else {
		x.known = nil
	}
	x.typ = t
}

func (c *checker) index(x *operand, e *IndexExpr) {
	c.expr(x, e.X)
	var i operand
	c.expr(&i, e.Index)
	if x.mode == invalid {
		return
	}
	deref(x)
	arr, ok := x.typ.(*Array)
	if !ok {
		c.errorf(e.Lbrack, "cannot index %s (%s): it is not an array", exprString(e.X), describe(x))
		x.mode = invalid
		return
	}
	x.expr, x.typ, x.val = e, arr.Elem, nil
	if x.mode != placeMode {
		x.mode = valueMode
	}
	if i.mode == invalid {
		return
	}
	if i.mode == novalue || !isInteger(i.typ) {
		c.errorf(e.Index.Pos(), "index %s is %s, not an integer", exprString(e.Index), describe(&i))
		return
	}
	if i.mode != constMode && i.known != nil {
		if constant.Sign(i.known) < 0 || constant.Compare(i.known, tokenGEQ, constant.MakeInt64(arr.Len)) {
			c.errorf(e.Index.Pos(), "index %s is %s, out of range [0, %d)", exprString(e.Index), valueString(i.known), arr.Len)
		}
		return
	}
	if i.mode == constMode {
		if constant.Sign(i.val) < 0 || constant.Compare(i.val, tokenGEQ, constant.MakeInt64(arr.Len)) {
			c.errorf(e.Index.Pos(), "index %s is out of range [0, %d)", valueString(i.val), arr.Len)
			return
		}
		if isUntyped(i.typ) {
			c.assign(&i, Typ[U64], "index")
		}
	}
}

func (c *checker) selector(x *operand, e *SelectorExpr) {
	c.expr(x, e.X)
	if x.mode == invalid {
		return
	}
	deref(x)
	st, ok := x.typ.(*Struct)
	if !ok {
		c.errorf(e.Sel.Pos(), "%s (%s) has no field %s: it is not a struct", exprString(e.X), describe(x), e.Sel.Name)
		x.mode = invalid
		return
	}
	f := st.Field(e.Sel.Name)
	if f == nil {
		c.errorf(e.Sel.Pos(), "struct %s has no field %s", st.Name, e.Sel.Name)
		x.mode = invalid
		return
	}
	x.expr, x.typ, x.val = e, f.Type, nil
	if x.mode != placeMode {
		x.mode = valueMode
	}
}

// ---- Calls ----

func (c *checker) callExpr(x *operand, e *CallExpr, stmt bool) {
	*x = operand{mode: invalid, expr: e, typ: Typ[Invalid]}
	obj := c.lookup(e.Fun)
	checkArgs := func() {
		for _, a := range e.Args {
			var y operand
			c.rawExpr(&y, a)
		}
	}
	switch obj := obj.(type) {
	case nil:
		checkArgs()
	case *Func:
		c.resolve(obj)
		c.funcCall(x, e, obj)
	case *Builtin:
		c.builtinCall(x, e, obj.id, stmt)
	case *Handler:
		c.errorf(e.Pos(), "cannot call handler %s; send it a message with send(node, %s, bytes) or forward(node, %s)", obj.name, obj.name, obj.name)
		checkArgs()
	default:
		c.errorf(e.Pos(), "cannot call %s: it is not a fn", e.Fun.Name)
		checkArgs()
	}
	if x.mode != invalid {
		c.setType(e, x.typ, x.val)
	}
}

func (c *checker) argCount(e *CallExpr, name string, want int) bool {
	if len(e.Args) == want {
		return true
	}
	pos := e.Rparen
	if len(e.Args) > want {
		pos = e.Args[want].Pos()
	}
	c.errorf(pos, "wrong number of arguments to %s: have %d, want %d", name, len(e.Args), want)
	for _, a := range e.Args {
		var y operand
		c.rawExpr(&y, a)
	}
	return false
}

func (c *checker) funcCall(x *operand, e *CallExpr, fn *Func) {
	if c.fn != nil {
		cur := Object(c.fn.fn)
		if c.fn.fn == nil {
			cur = c.fn.handler
		}
		c.calls[cur] = append(c.calls[cur], callSite{callee: fn, pos: e.Fun.Pos()})
	}
	if !c.argCount(e, fn.name, len(fn.Params)) {
		return
	}
	for i, a := range e.Args {
		var y operand
		c.expr(&y, a)
		if y.mode == novalue {
			c.errorf(a.Pos(), "%s has no value", exprString(a))
			continue
		}
		c.assign(&y, fn.Params[i].typ, fmt.Sprintf("argument %d of %s", i+1, fn.name))
	}
	if fn.Result == nil {
		x.mode, x.typ = novalue, Typ[Void]
		return
	}
	x.mode, x.typ = valueMode, fn.Result
}

// bytesArg evaluates an argument whose bytes a helper reads or writes: a
// place, or a reference to one.
func (c *checker) bytesArg(e Expr, name string) (operand, bool) {
	var y operand
	c.expr(&y, e)
	if y.mode == invalid {
		return y, false
	}
	if _, ok := y.typ.(*Ref); ok {
		deref(&y)
		return y, true
	}
	if y.mode != placeMode {
		c.errorf(e.Pos(), "%s needs a place in memory or a reference, not %s (%s)", name, exprString(e), describe(&y))
		return y, false
	}
	return y, true
}

// handlerArg evaluates the handler of send or forward: a handler's name
// (its id) or a u32.
func (c *checker) handlerArg(e Expr, name string) {
	if id, ok := e.(*Ident); ok {
		if h, ok := c.pkg.lookup(id.Name).(*Handler); ok && (c.fn == nil || c.fn.scope.lookup(id.Name) == Object(h)) {
			c.info.Uses[id] = h
			c.setType(e, Typ[U32], constant.MakeInt64(int64(h.ID)))
			return
		}
	}
	var y operand
	c.expr(&y, e)
	c.assign(&y, Typ[U32], "handler argument of "+name)
}

func (c *checker) scalarArg(e Expr, t Type, context string) {
	var y operand
	c.expr(&y, e)
	if y.mode == novalue {
		c.errorf(e.Pos(), "%s has no value", exprString(e))
		return
	}
	c.assign(&y, t, context)
}

func (c *checker) builtinCall(x *operand, e *CallExpr, id builtinID, stmt bool) {
	name := e.Fun.Name
	nargs := map[builtinID]int{
		bHash: 1, bCopy: 2, bNow: 0, bRandom: 0, bTrace: 1, bSend: 3, bForward: 2,
		bSrcNode: 0, bTenant: 0, bRequestID: 0, bLen: 1,
		bAtomicAdd: 2, bAtomicAnd: 2, bAtomicOr: 2, bAtomicXor: 2, bAtomicXchg: 2, bAtomicCas: 3,
		bMin: 2, bMax: 2,
	}[id]
	if !c.argCount(e, name, nargs) {
		return
	}
	u64 := func() { x.mode, x.typ = valueMode, Typ[U64] }
	none := func() { x.mode, x.typ = novalue, Typ[Void] }
	switch id {
	case bHash:
		if _, ok := c.bytesArg(e.Args[0], name); ok {
			u64()
		}
	case bTrace:
		if _, ok := c.bytesArg(e.Args[0], name); ok {
			none()
		}
	case bNow, bRandom, bSrcNode, bTenant, bRequestID:
		u64()
	case bCopy:
		dst, ok1 := c.bytesArg(e.Args[0], name)
		src, ok2 := c.bytesArg(e.Args[1], name)
		if !ok1 || !ok2 {
			return
		}
		if !dst.writable {
			c.errorf(e.Args[0].Pos(), "copy destination %s is not writable: %s", exprString(e.Args[0]), dst.whyRO)
			return
		}
		if !identical(dst.typ, src.typ) {
			c.errorf(e.Args[1].Pos(), "copy needs equal types: destination is %s, source is %s", dst.typ, src.typ)
			return
		}
		none()
	case bSend:
		c.scalarArg(e.Args[0], Typ[U64], "node argument of send")
		c.handlerArg(e.Args[1], name)
		if _, ok := c.bytesArg(e.Args[2], name); ok {
			x.mode, x.typ = valueMode, Typ[Bool]
		}
	case bForward:
		c.scalarArg(e.Args[0], Typ[U64], "node argument of forward")
		c.handlerArg(e.Args[1], name)
		switch {
		case c.fn == nil || c.fn.handler == nil:
			c.errorf(e.Pos(), "forward is allowed only in a handler")
		case !stmt:
			c.errorf(e.Pos(), "forward ends the handler; write it as a statement")
		default:
			none()
		}
	case bMin, bMax:
		c.minMax(x, e, name)
	case bLen:
		var y operand
		c.expr(&y, e.Args[0])
		if y.mode == invalid {
			return
		}
		deref(&y)
		arr, ok := y.typ.(*Array)
		if !ok {
			c.errorf(e.Args[0].Pos(), "len needs an array, not %s (%s)", exprString(e.Args[0]), describe(&y))
			return
		}
		x.mode, x.typ, x.val = constMode, Typ[UntypedInt], constant.MakeInt64(arr.Len)
	default: // atomics
		var p operand
		c.expr(&p, e.Args[0])
		if p.mode == invalid {
			for _, a := range e.Args[1:] {
				var y operand
				c.rawExpr(&y, a)
			}
			return
		}
		ok := false
		r, isRef := p.typ.(*Ref)
		switch {
		case !isRef:
			c.errorf(e.Args[0].Pos(), "%s needs a reference to a region word, like &table[i].count; %s is %s", name, exprString(e.Args[0]), describe(&p))
		case !isInteger(r.Elem) || Sizeof(r.Elem) != 4 && Sizeof(r.Elem) != 8:
			c.errorf(e.Args[0].Pos(), "%s works on 4- and 8-byte integers, not %s", name, r.Elem)
		case p.target != rootRegion:
			c.errorf(e.Args[0].Pos(), "%s works on region words; %s does not point into a region", name, exprString(e.Args[0]))
		case !r.Mut:
			c.errorf(e.Args[0].Pos(), "%s needs a writable place; %s is %s", name, exprString(e.Args[0]), r)
		default:
			ok = true
		}
		for i, a := range e.Args[1:] {
			if ok {
				c.scalarArg(a, r.Elem, fmt.Sprintf("argument %d of %s", i+2, name))
			} else {
				var y operand
				c.rawExpr(&y, a)
			}
		}
		if ok {
			x.mode, x.typ = valueMode, r.Elem
		}
	}
	if stmt && x.mode == invalid {
		return
	}
}

// minMax checks min(a, b) and max(a, b): two integers of one type, as
// the operands of a comparison (an untyped constant takes the other's
// type); the result has that type, and is a constant when both are.
func (c *checker) minMax(x *operand, e *CallExpr, name string) {
	var a, b operand
	c.expr(&a, e.Args[0])
	c.expr(&b, e.Args[1])
	if a.mode == invalid || b.mode == invalid {
		return
	}
	for _, o := range []*operand{&a, &b} {
		if o.mode == novalue || !isInteger(o.typ) {
			c.errorf(o.expr.Pos(), "%s needs integers; %s is %s", name, exprString(o.expr), describe(o))
			return
		}
	}
	switch {
	case isUntyped(a.typ) && !isUntyped(b.typ):
		if !c.assign(&a, b.typ, "argument of "+name) {
			return
		}
	case isUntyped(b.typ) && !isUntyped(a.typ):
		if !c.assign(&b, a.typ, "argument of "+name) {
			return
		}
	case !identical(a.typ, b.typ):
		c.errorf(e.Args[1].Pos(), "%s needs arguments of one type, not %s and %s (convert one with as)", name, a.typ, b.typ)
		return
	}
	if a.mode == constMode && b.mode == constMode {
		v := a.val
		if (constant.Compare(b.val, tokenLSS, a.val)) == (name == "min") {
			v = b.val
		}
		x.mode, x.typ, x.val = constMode, a.typ, v
		return
	}
	x.mode, x.typ = valueMode, a.typ
	if ka, kb := a.knownValue(), b.knownValue(); ka != nil && kb != nil {
		x.known = ka
		if (constant.Compare(kb, tokenLSS, ka)) == (name == "min") {
			x.known = kb
		}
	}
}

// exprString formats an expression for messages, compactly.
func exprString(e Expr) string {
	var b strings.Builder
	writeExpr(&b, e)
	return b.String()
}

func writeExpr(b *strings.Builder, e Expr) {
	switch e := e.(type) {
	case nil:
		b.WriteString("?")
	case *BadExpr:
		b.WriteString("BadExpr")
	case *Ident:
		b.WriteString(e.Name)
	case *IntLit:
		b.WriteString(e.Lit)
	case *BoolLit:
		fmt.Fprint(b, e.Value)
	case *ParenExpr:
		b.WriteByte('(')
		writeExpr(b, e.X)
		b.WriteByte(')')
	case *UnaryExpr:
		b.WriteString(e.Op.String())
		writeExpr(b, e.X)
	case *BinaryExpr:
		writeExpr(b, e.X)
		fmt.Fprintf(b, " %s ", e.Op)
		writeExpr(b, e.Y)
	case *CastExpr:
		writeExpr(b, e.X)
		b.WriteString(" as ")
		writeExpr(b, e.Type)
	case *CallExpr:
		writeExpr(b, e.Fun)
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			writeExpr(b, a)
		}
		b.WriteByte(')')
	case *IndexExpr:
		writeExpr(b, e.X)
		b.WriteByte('[')
		writeExpr(b, e.Index)
		b.WriteByte(']')
	case *SelectorExpr:
		writeExpr(b, e.X)
		b.WriteByte('.')
		b.WriteString(e.Sel.Name)
	case *ArrayType:
		b.WriteByte('[')
		writeExpr(b, e.Elem)
		b.WriteString("; ")
		writeExpr(b, e.Len)
		b.WriteByte(']')
	case *RefType:
		b.WriteByte('&')
		if e.Mut {
			b.WriteString("mut ")
		}
		writeExpr(b, e.Elem)
	case *SliceExpr:
		writeExpr(b, e.X)
		b.WriteByte('[')
		writeExpr(b, e.Index)
		b.WriteString("; ")
		writeExpr(b, e.Count)
		b.WriteByte(']')
	}
}
