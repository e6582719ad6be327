package lang

import (
	"fmt"
	"go/constant"
)

// maxReads is the most items a reads clause may have
// (bytecode.MaxAccessRanges): each is one range of the access function.
const maxReads = 64

// readsBuiltins are the builtins a reads clause may call, directly or
// through fns: functions of their arguments and of the request's context,
// with no effect outside the run.
var readsBuiltins = map[builtinID]bool{
	bHash: true, bCopy: true, bLen: true, bMin: true, bMax: true,
	bSrcNode: true, bTenant: true, bRequestID: true,
}

// readsClause checks a handler's reads clause: every item is a place in
// a region, and its indices and counts are integers computed from the
// request alone (the handler's arguments, constants, context fields, and
// fns that read no region and have no effect).
func (c *checker) readsClause(h *Handler) {
	r := h.Decl.Reads
	fc := &funcCtx{name: h.name, handler: h, scope: newScope(c.pkg)}
	ids := c.paramIdents(fc)
	vars := append(h.Params[:len(h.Params):len(h.Params)], h.Results...)
	for i, v := range vars {
		if v.name != "" && i < len(ids) && ids[i] != nil {
			c.declare(fc.scope, ids[i], v)
		}
	}
	c.fn = fc
	defer func() { c.fn = nil }()
	if len(r.Items) > maxReads {
		c.errorf(r.Items[maxReads].Pos(), "a reads clause declares at most %d ranges; %s has %d", maxReads, h.name, len(r.Items))
	}
	for _, item := range r.Items {
		c.readItem(item)
	}
}

// readItem checks one item of a reads clause.
func (c *checker) readItem(e Expr) {
	var x operand
	if s, ok := e.(*SliceExpr); ok {
		c.slice(&x, s)
	} else {
		c.expr(&x, e)
	}
	if x.mode == invalid {
		return
	}
	root := e
	for {
		switch r := root.(type) {
		case *SliceExpr:
			root = r.X
			continue
		case *IndexExpr:
			c.readsPure(r.Index)
			root = r.X
			continue
		case *SelectorExpr:
			root = r.X
			continue
		}
		break
	}
	if s, ok := e.(*SliceExpr); ok {
		c.readsPure(s.Index)
		c.readsPure(s.Count)
	}
	id, ok := root.(*Ident)
	if _, isRegion := c.info.Uses[id].(*Region); !ok || !isRegion || x.mode != placeMode {
		c.errorf(e.Pos(), "reads %s: not a place in a region (a reads item is a region, or a field or element of one)", exprString(e))
	}
}

// slice checks X[Index; Count]: Count elements of the array X from Index.
func (c *checker) slice(x *operand, s *SliceExpr) {
	c.expr(x, s.X)
	var i, n operand
	c.expr(&i, s.Index)
	c.expr(&n, s.Count)
	if x.mode == invalid {
		return
	}
	arr, ok := x.typ.(*Array)
	if !ok {
		c.errorf(s.Lbrack, "cannot take a range of %s (%s): it is not an array", exprString(s.X), describe(x))
		x.mode = invalid
		return
	}
	c.setType(s, arr, nil)
	for _, y := range []*operand{&i, &n} {
		if y.mode == invalid {
			continue
		}
		what := "index"
		if y == &n {
			what = "count"
		}
		if y.mode == novalue || !isInteger(y.typ) {
			c.errorf(y.expr.Pos(), "range %s %s is %s, not an integer", what, exprString(y.expr), describe(y))
			continue
		}
		if y.mode != constMode {
			continue
		}
		switch {
		case y == &i && (constant.Sign(y.val) < 0 || constant.Compare(y.val, tokenGEQ, constant.MakeInt64(arr.Len))):
			c.errorf(y.expr.Pos(), "range index %s is out of range [0, %d)", valueString(y.val), arr.Len)
			continue
		case y == &n && constant.Sign(y.val) <= 0:
			c.errorf(y.expr.Pos(), "range count %s must be positive", valueString(y.val))
			continue
		}
		if isUntyped(y.typ) {
			c.assign(y, Typ[U64], "range "+what)
		}
	}
}

// readsPure reports what in e is not computed from the request alone: a
// region, a handler result, a builtin with an effect or another input,
// a fn that does one of these.
func (c *checker) readsPure(e Expr) {
	c.impureNodes(e, func(n Node, why string) {
		c.errorf(n.Pos(), "reads: %s; a reads clause is computed from the request alone", why)
	})
}

// impureNodes calls found for every node under root that is not a
// function of the request (impureNode), except inside constant
// expressions (len(region) names a region but reads nothing).
func (c *checker) impureNodes(root Node, found func(n Node, why string)) {
	parent := map[Node]Node{}
	Inspect(root, func(p, n Node) { parent[n] = p })
	constant := func(n Node) bool {
		for ; n != nil; n = parent[n] {
			if e, ok := n.(Expr); ok && c.info.Types[e].Value != nil {
				return true
			}
		}
		return false
	}
	Inspect(root, func(_, n Node) {
		if why := c.impureNode(n); why != "" && !constant(n) {
			found(n, why)
		}
	})
}

// impureNode says why n, a node of an expression or fn body, is not a
// function of the request, or "".
func (c *checker) impureNode(n Node) string {
	switch n := n.(type) {
	case *Ident:
		switch obj := c.info.Uses[n].(type) {
		case *Region:
			return fmt.Sprintf("%s reads region %s", exprString(n), obj.name)
		case *Var:
			if obj.Kind == HandlerResult {
				return fmt.Sprintf("%s is a result, not part of the request", obj.name)
			}
		}
	case *CallExpr:
		switch obj := c.info.Uses[n.Fun].(type) {
		case *Builtin:
			if !readsBuiltins[obj.id] {
				return fmt.Sprintf("%s cannot be called here", obj.name)
			}
		case *Func:
			if why := c.fnImpure(obj); why != "" {
				return fmt.Sprintf("fn %s %s", obj.name, why)
			}
		}
	}
	return ""
}

// fnImpure says why a reads clause may not call fn (it reads a region,
// calls a builtin readsBuiltins lacks, or calls such a fn), or "".
func (c *checker) fnImpure(fn *Func) string {
	if why, done := c.impure[fn]; done {
		return why
	}
	c.impure[fn] = "" // recursion is rejected elsewhere
	why := ""
	c.impureNodes(fn.Decl.Body, func(n Node, w string) {
		if why == "" {
			why = fmt.Sprintf("at line %d: %s", n.Pos().Line, w)
		}
	})
	c.impure[fn] = why
	return why
}
