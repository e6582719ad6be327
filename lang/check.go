package lang

import (
	"fmt"
	"go/constant"
	"math/big"
	"strings"
)

// Info holds what the checker learned, in side tables keyed by AST node;
// the AST itself is never changed.
type Info struct {
	Types map[Expr]TypeAndValue // every checked expression and type expression
	Defs  map[*Ident]Object     // identifiers that declare something
	Uses  map[*Ident]Object     // identifiers that refer to something

	Consts   []*Const // in declaration order
	Structs  []*Struct
	Regions  []*Region // Index order
	Funcs    []*Func
	Handlers []*Handler // ID order
}

// TypeAndValue is the type of an expression and, for a constant, its value.
type TypeAndValue struct {
	Type  Type
	Value constant.Value // nil unless the expression is constant
}

// Check type-checks a parsed file. It returns the Info (complete as far as
// checking got) and an ErrorList, sorted, if the program is not valid.
// It is Config.Check with the zero Config.
func Check(f *File) (*Info, error) { return (&Config{}).Check(f) }

// CheckSource parses and checks src: the whole front end. Type checking is
// skipped when the file does not parse. It is Config.CheckSource with the
// zero Config.
func CheckSource(fset *FileSet, name string, src []byte) (*File, *Info, error) {
	return (&Config{}).CheckSource(fset, name, src)
}

type scope struct {
	parent *scope
	names  map[string]Object
}

func newScope(parent *scope) *scope { return &scope{parent: parent, names: map[string]Object{}} }

func (s *scope) lookup(name string) Object {
	for ; s != nil; s = s.parent {
		if o, ok := s.names[name]; ok {
			return o
		}
	}
	return nil
}

var universe = func() *scope {
	s := newScope(nil)
	for k := Bool; k <= I64; k++ {
		s.names[Typ[k].Name] = &TypeName{object: object{name: Typ[k].Name, typ: Typ[k]}}
	}
	for name, id := range builtinNames {
		s.names[name] = &Builtin{object: object{name: name, typ: Typ[Invalid]}, id: id}
	}
	return s
}()

type checker struct {
	info *Info
	errs ErrorList
	pkg  *scope

	resolving map[Object]bool // top-level objects being resolved (cycle check)
	resolved  map[Object]bool

	fn *funcCtx // the fn or handler whose body is being checked

	calls map[Object][]callSite // call graph: fn or handler → fns it calls

	overrides map[string]constant.Value // Config.Constants
	objs      []Object                  // top-level declarations, in source order

	// known holds the values of lets bound to a value known here (a
	// constant, or arithmetic on such lets), for the range checks of
	// indices (operand.known).
	known map[*Var]constant.Value

	// impure says, per fn, why a reads clause may not call it ("" if it
	// may), once computed (fnImpure).
	impure map[*Func]string
}

type callSite struct {
	callee *Func
	pos    Pos
}

// funcCtx is the state of one body being checked.
type funcCtx struct {
	name       string
	fn         *Func    // or
	handler    *Handler // one of them
	scope      *scope
	loops      []int64 // trip counts of the enclosing loops
	stackBytes int64
}

func newChecker() *checker {
	return &checker{
		info: &Info{
			Types: map[Expr]TypeAndValue{},
			Defs:  map[*Ident]Object{},
			Uses:  map[*Ident]Object{},
		},
		pkg:       newScope(universe),
		resolving: map[Object]bool{},
		resolved:  map[Object]bool{},
		calls:     map[Object][]callSite{},
		known:     map[*Var]constant.Value{},
		impure:    map[*Func]string{},
	}
}

func (c *checker) errorf(pos Pos, format string, args ...any) {
	c.errs.Add(pos, fmt.Sprintf(format, args...))
}

// ---- Declarations ----

// collect declares the top-level names (they may be used before they are
// declared) and checks that every override names a constant.
func (c *checker) collect(f *File) error {
	for _, d := range f.Decls {
		var obj Object
		var name *Ident
		switch d := d.(type) {
		case *ConstDecl:
			name = d.Name
			obj = &Const{object: object{name: name.Name, pos: name.Pos()}, decl: d}
		case *StructDecl:
			name = d.Name
			st := &Struct{Name: name.Name}
			obj = &TypeName{object: object{name: name.Name, pos: name.Pos(), typ: st}, decl: d}
		case *RegionDecl:
			name = d.Name
			obj = &Region{object: object{name: name.Name, pos: name.Pos()}, Writable: d.Writable, decl: d}
		case *FuncDecl:
			name = d.Name
			obj = &Func{object: object{name: name.Name, pos: name.Pos()}, Decl: d}
		case *HandlerDecl:
			name = d.Name
			obj = &Handler{object: object{name: name.Name, pos: name.Pos()}, Decl: d}
		default:
			continue
		}
		c.objs = append(c.objs, obj)
		c.declare(c.pkg, name, obj)
	}
	return c.checkOverrideNames(f)
}

// check checks the collected declarations.
func (c *checker) check() {
	objs := c.objs
	// Resolve every declaration's type (constants and structs resolve on
	// demand as well, so order does not matter).
	for _, obj := range objs {
		c.resolve(obj)
	}
	// Then the bodies.
	for _, obj := range objs {
		switch obj := obj.(type) {
		case *Func:
			c.body(&funcCtx{name: obj.name, fn: obj}, obj.Params, obj.Decl.Body)
		case *Handler:
			c.body(&funcCtx{name: obj.name, handler: obj}, append(obj.Params[:len(obj.Params):len(obj.Params)], obj.Results...), obj.Decl.Body)
			if obj.Decl.Reads != nil {
				c.readsClause(obj)
			}
		}
	}
	c.checkCallGraph(objs)
}

// declare adds obj to scope s under id's name.
func (c *checker) declare(s *scope, id *Ident, obj Object) {
	if id.Name == "_" {
		if _, ok := obj.(*Var); !ok {
			c.errorf(id.Pos(), "cannot declare _ here")
		}
		c.info.Defs[id] = obj
		return
	}
	u := universe.names[id.Name]
	if _, isType := u.(*TypeName); isType || u != nil && s == c.pkg {
		// Locals may shadow builtins (a result called len); nothing may
		// shadow a type name, and top-level names stay unambiguous.
		c.errorf(id.Pos(), "cannot declare %s: it is predeclared", id.Name)
	} else if old := s.names[id.Name]; old != nil {
		c.errorf(id.Pos(), "%s redeclared; the other declaration is at %s", id.Name, shortPos(old.Pos()))
	} else {
		s.names[id.Name] = obj
	}
	c.info.Defs[id] = obj
}

func shortPos(p Pos) string { return fmt.Sprintf("line %d", p.Line) }

// resolve computes a top-level object's type (and a constant's value).
func (c *checker) resolve(obj Object) {
	if c.resolved[obj] {
		return
	}
	if tn, ok := obj.(*TypeName); ok && tn.decl == nil {
		return // predeclared
	}
	if c.resolving[obj] {
		c.errorf(obj.Pos(), "%s refers to itself", obj.Name())
		c.setInvalid(obj)
		return
	}
	c.resolving[obj] = true
	defer func() { delete(c.resolving, obj); c.resolved[obj] = true }()

	saved := c.fn
	c.fn = nil // top-level declarations see only top-level names
	defer func() { c.fn = saved }()

	switch obj := obj.(type) {
	case *Const:
		c.constDecl(obj)
	case *TypeName:
		c.structDecl(obj)
	case *Region:
		c.regionDecl(obj)
	case *Func:
		c.funcDecl(obj)
	case *Handler:
		c.handlerDecl(obj)
	}
}

func (c *checker) setInvalid(obj Object) {
	switch obj := obj.(type) {
	case *Const:
		obj.typ = Typ[Invalid]
	case *TypeName:
		obj.typ = Typ[Invalid]
	}
}

func (c *checker) constDecl(obj *Const) {
	d := obj.decl
	obj.typ = Typ[Invalid]
	var t Type
	if d.Type != nil {
		t = c.typeExpr(d.Type)
		if !isInvalid(t) && !isScalar(t) {
			c.errorf(d.Type.Pos(), "constant %s must have an integer or bool type, not %s", obj.name, t)
			return
		}
	}
	var x operand
	c.expr(&x, d.Value)
	if x.mode == invalid {
		return
	}
	if x.mode != constMode {
		c.errorf(d.Value.Pos(), "%s is not constant", exprString(d.Value))
		return
	}
	if t != nil {
		if !c.assign(&x, t, "constant "+obj.name) {
			return
		}
	}
	if v, ok := c.overrides[obj.name]; ok && !c.override(obj, &x, v) {
		return
	}
	obj.typ, obj.Val = x.typ, x.val
	c.info.Consts = append(c.info.Consts, obj)
}

func (c *checker) structDecl(obj *TypeName) {
	st := obj.typ.(*Struct)
	seen := map[string]bool{}
	for _, f := range obj.decl.Fields {
		t := c.typeExpr(f.Type)
		if isInvalid(t) {
			continue
		}
		if !c.valueType(f.Type.Pos(), t, "a struct field") {
			continue
		}
		if seen[f.Name.Name] {
			c.errorf(f.Name.Pos(), "field %s declared twice in struct %s", f.Name.Name, st.Name)
			continue
		}
		seen[f.Name.Name] = true
		st.Fields = append(st.Fields, &StructField{Name: f.Name.Name, Type: t, Pos: f.Name.Pos()})
	}
	if len(obj.decl.Fields) == 0 {
		c.errorf(obj.pos, "struct %s has no fields", st.Name)
	}
	st.layout()
	if st.size > maxRegionSize {
		c.errorf(obj.pos, "struct %s is too large (%d bytes; at most %d)", st.Name, st.size, int64(maxRegionSize))
	}
	c.info.Structs = append(c.info.Structs, st)
}

// valueType checks that t can be stored in memory: not a reference, not
// a pseudo-type. what is "a struct field", "a handler argument", ….
func (c *checker) valueType(pos Pos, t Type, what string) bool {
	if hasRef(t) {
		c.errorf(pos, "%s cannot be a reference (%s): references live only in let bindings and fn parameters", what, t)
		return false
	}
	return true
}

func (c *checker) regionDecl(obj *Region) {
	d := obj.decl
	obj.typ = c.typeExpr(d.Type)
	obj.Index = len(c.info.Regions)
	c.info.Regions = append(c.info.Regions, obj)
	if obj.Index == maxRegions {
		c.errorf(obj.pos, "too many regions: an object has at most %d", maxRegions)
	}
	if isInvalid(obj.typ) || !c.valueType(d.Type.Pos(), obj.typ, "a region") {
		obj.typ = Typ[Invalid]
		return
	}
	if sz := Sizeof(obj.typ); sz > maxRegionSize {
		c.errorf(d.Type.Pos(), "region %s is too large (%d bytes; at most %d)", obj.name, sz, int64(maxRegionSize))
	}
}

func (c *checker) funcDecl(obj *Func) {
	d := obj.Decl
	if len(d.Params) > maxParams {
		c.errorf(d.Params[maxParams].Pos(), "fn %s has %d parameters; at most %d (they are passed in r1–r5)", obj.name, len(d.Params), maxParams)
	}
	for _, p := range d.Params {
		t := c.typeExpr(p.Type)
		if !isInvalid(t) && !isScalar(t) {
			if _, ok := t.(*Ref); !ok {
				c.errorf(p.Type.Pos(), "fn parameter %s has type %s; pass a reference (&%s) instead: parameters travel in registers", p.Name.Name, t, t)
				t = Typ[Invalid]
			}
		}
		obj.Params = append(obj.Params, &Var{object: object{name: p.Name.Name, pos: p.Name.Pos(), typ: t}, Kind: Param, root: rootUnknown})
	}
	if d.Result != nil {
		t := c.typeExpr(d.Result)
		if !isInvalid(t) && !isScalar(t) {
			c.errorf(d.Result.Pos(), "fn result must be an integer or bool, not %s", t)
			t = Typ[Invalid]
		}
		obj.Result = t
	}
	c.info.Funcs = append(c.info.Funcs, obj)
}

func (c *checker) handlerDecl(obj *Handler) {
	d := obj.Decl
	obj.ID = len(c.info.Handlers)
	c.info.Handlers = append(c.info.Handlers, obj)
	vars := func(fields []*Field, kind VarKind, what string) []*Var {
		var list []*Var
		for _, f := range fields {
			t := c.typeExpr(f.Type)
			if !isInvalid(t) && !c.valueType(f.Type.Pos(), t, what) {
				t = Typ[Invalid]
			}
			v := &Var{object: object{typ: t}, Kind: kind}
			if f.Name != nil {
				v.name, v.pos = f.Name.Name, f.Name.Pos()
			}
			list = append(list, v)
		}
		return list
	}
	obj.Params = vars(d.Params, HandlerArg, "a handler argument")
	obj.Results = vars(d.Results, HandlerResult, "a handler result")
	for _, v := range obj.Params {
		v.root = rootRequest
	}
	for _, v := range obj.Results {
		v.root = rootReply
	}
	obj.Args = layoutOf(obj.Params)
	obj.Reply = layoutOf(obj.Results)
}

// typeExpr evaluates a type expression.
func (c *checker) typeExpr(e Expr) Type {
	t := c.typeExpr1(e)
	c.info.Types[e] = TypeAndValue{Type: t}
	return t
}

func (c *checker) typeExpr1(e Expr) Type {
	switch e := e.(type) {
	case *BadExpr:
		return Typ[Invalid]
	case *Ident:
		obj := c.lookup(e)
		if obj == nil {
			return Typ[Invalid]
		}
		tn, ok := obj.(*TypeName)
		if !ok {
			c.errorf(e.Pos(), "%s is not a type", e.Name)
			return Typ[Invalid]
		}
		c.resolve(tn)
		return tn.typ
	case *ArrayType:
		elem := c.typeExpr(e.Elem)
		var x operand
		c.expr(&x, e.Len)
		if x.mode == invalid || isInvalid(elem) {
			return Typ[Invalid]
		}
		if x.mode != constMode || !isInteger(x.typ) {
			c.errorf(e.Len.Pos(), "array length %s must be an integer constant", exprString(e.Len))
			return Typ[Invalid]
		}
		n, exact := constant.Int64Val(x.val)
		if !exact || n < 1 || n > maxRegionSize {
			c.errorf(e.Len.Pos(), "array length %s is out of range [1, %d]", valueString(x.val), int64(maxRegionSize))
			return Typ[Invalid]
		}
		if !c.valueType(e.Elem.Pos(), elem, "an array element") {
			return Typ[Invalid]
		}
		if sz := Sizeof(elem); sz > 0 && n > maxRegionSize/sz {
			c.errorf(e.Pos(), "array [%s; %d] is too large (more than %d bytes)", elem, n, int64(maxRegionSize))
			return Typ[Invalid]
		}
		return &Array{Elem: elem, Len: n}
	case *RefType:
		elem := c.typeExpr(e.Elem)
		if isInvalid(elem) {
			return Typ[Invalid]
		}
		if _, ok := elem.(*Ref); ok {
			c.errorf(e.Pos(), "a reference to a reference is not allowed")
			return Typ[Invalid]
		}
		return &Ref{Elem: elem, Mut: e.Mut}
	}
	c.errorf(e.Pos(), "%s is not a type", exprString(e))
	return Typ[Invalid]
}

// lookup resolves an identifier in the current scope and records the use.
func (c *checker) lookup(id *Ident) Object {
	if id.Name == "_" {
		c.errorf(id.Pos(), "cannot use _ as a value or type")
		return nil
	}
	s := c.pkg
	if c.fn != nil {
		s = c.fn.scope
	}
	obj := s.lookup(id.Name)
	if obj == nil {
		c.errorf(id.Pos(), "undefined: %s", id.Name)
		return nil
	}
	c.info.Uses[id] = obj
	return obj
}

// ---- Bodies ----

func (c *checker) body(fc *funcCtx, params []*Var, body *BlockStmt) {
	fc.scope = newScope(c.pkg)
	ids := c.paramIdents(fc)
	for i, v := range params {
		if v.name == "" {
			continue
		}
		if i < len(ids) && ids[i] != nil {
			c.declare(fc.scope, ids[i], v)
		}
	}
	c.fn = fc
	defer func() { c.fn = nil }()
	c.stmtList(body.List)

	wantsReturn := (fc.fn != nil && fc.fn.Result != nil) || (fc.handler != nil && len(fc.handler.Results) > 0)
	if wantsReturn && !c.isTerminating(body) {
		c.errorf(body.Rbrace, "missing return at the end of %s: the last statement must be return, fail or forward", fc.name)
	}
	if fc.stackBytes > stackSize {
		pos := Pos{}
		if fc.fn != nil {
			pos = fc.fn.pos
		} else {
			pos = fc.handler.pos
		}
		c.errorf(pos, "the locals of %s take %d bytes of stack; a frame has %d", fc.name, fc.stackBytes, stackSize)
	}
}

func (c *checker) paramIdents(fc *funcCtx) []*Ident {
	var ids []*Ident
	if fc.fn != nil {
		for _, p := range fc.fn.Decl.Params {
			ids = append(ids, p.Name)
		}
		return ids
	}
	for _, p := range fc.handler.Decl.Params {
		ids = append(ids, p.Name)
	}
	for _, p := range fc.handler.Decl.Results {
		ids = append(ids, p.Name)
	}
	return ids
}

// isTerminating reports whether s never completes normally: return, fail,
// forward, a block ending in one, an if whose branches all are.
func (c *checker) isTerminating(s Stmt) bool {
	switch s := s.(type) {
	case *ReturnStmt, *FailStmt:
		return true
	case *ExprStmt:
		call, ok := s.X.(*CallExpr)
		return ok && c.info.Uses[call.Fun] == universe.names["forward"]
	case *BlockStmt:
		return len(s.List) > 0 && c.isTerminating(s.List[len(s.List)-1])
	case *IfStmt:
		return s.Else != nil && c.isTerminating(s.Then) && c.isTerminating(s.Else)
	}
	return false
}

func (c *checker) openScope()  { c.fn.scope = newScope(c.fn.scope) }
func (c *checker) closeScope() { c.fn.scope = c.fn.scope.parent }

func (c *checker) stmtList(list []Stmt) {
	for _, s := range list {
		c.stmt(s)
	}
}

func (c *checker) addLocal(t Type) {
	c.fn.stackBytes += roundUp(max(Sizeof(t), 1), 8)
}

func (c *checker) stmt(s Stmt) {
	switch s := s.(type) {
	case *BadStmt:
	case *BlockStmt:
		c.openScope()
		c.stmtList(s.List)
		c.closeScope()
	case *LetStmt:
		c.letStmt(s)
	case *AssignStmt:
		c.assignStmt(s)
	case *ExprStmt:
		call, ok := s.X.(*CallExpr)
		if !ok {
			var x operand
			c.expr(&x, s.X)
			if x.mode != invalid {
				c.errorf(s.X.Pos(), "%s is evaluated but not used", exprString(s.X))
			}
			return
		}
		var x operand
		c.callExpr(&x, call, true)
	case *IfStmt:
		c.cond(s.Cond, "if")
		c.stmt(s.Then)
		if s.Else != nil {
			c.stmt(s.Else)
		}
	case *ForStmt:
		c.forStmt(s)
	case *BranchStmt:
		if len(c.fn.loops) == 0 {
			c.errorf(s.Pos(), "%s is not in a loop", s.Tok)
		}
	case *ReturnStmt:
		c.returnStmt(s)
	case *FailStmt:
		var x operand
		c.expr(&x, s.Code)
		if x.mode == invalid {
			return
		}
		if x.mode != constMode || !isInteger(x.typ) {
			c.errorf(s.Code.Pos(), "fail code %s must be an integer constant", exprString(s.Code))
			return
		}
		if constant.Sign(x.val) <= 0 || constant.Compare(x.val, tokenGTR, constant.MakeInt64(MaxFailCode)) {
			c.errorf(s.Code.Pos(), "fail code %s is out of range [1, %d]", valueString(x.val), MaxFailCode)
		}
		c.setType(s.Code, x.typ, x.val)
	default:
		c.errorf(s.Pos(), "unexpected statement")
	}
}

func (c *checker) cond(e Expr, what string) {
	var x operand
	c.expr(&x, e)
	if x.mode == invalid {
		return
	}
	if !isBool(x.typ) || x.mode == novalue {
		c.errorf(e.Pos(), "%s condition %s is %s, not bool", what, exprString(e), describe(&x))
		return
	}
	c.assign(&x, Typ[Bool], what+" condition")
}

func (c *checker) letStmt(s *LetStmt) {
	var t Type
	if s.Type != nil {
		t = c.typeExpr(s.Type)
	}
	var x operand
	x.mode = invalid
	if s.Value != nil {
		c.expr(&x, s.Value)
		if x.mode == novalue {
			c.errorf(s.Value.Pos(), "%s has no value", exprString(s.Value))
			x.mode = invalid
		}
	}
	switch {
	case t != nil && s.Value != nil:
		c.assign(&x, t, "let "+s.Name.Name)
	case t == nil && s.Value != nil:
		if x.mode == invalid {
			t = Typ[Invalid]
		} else {
			c.defaultType(&x)
			t = x.typ
		}
	case t == nil:
		c.errorf(s.Name.End(), "var %s needs a type or a value", s.Name.Name)
		t = Typ[Invalid]
	case !s.Mutable:
		c.errorf(s.Name.End(), "let %s needs a value (var %s: T starts at zero)", s.Name.Name, s.Name.Name)
	}
	kind := LocalLet
	if s.Mutable {
		kind = LocalVar
	}
	v := &Var{object: object{name: s.Name.Name, pos: s.Name.Pos(), typ: t}, Kind: kind, root: rootStack}
	if r, ok := t.(*Ref); ok {
		if s.Mutable {
			c.errorf(s.Let, "var %s cannot hold a reference; use let", s.Name.Name)
		}
		if s.Value == nil || x.mode == invalid {
			v.root = rootUnknown
		} else {
			v.root = x.root
		}
		_ = r
	}
	if !s.Mutable && x.mode != invalid && isInteger(t) && !isUntyped(t) {
		if kv := x.knownValue(); kv != nil {
			c.known[v] = kv
		}
	}
	c.addLocal(t)
	c.declare(c.fn.scope, s.Name, v)
}

func (c *checker) assignStmt(s *AssignStmt) {
	var lhs operand
	c.expr(&lhs, s.Lhs)
	if lhs.mode == invalid {
		var rhs operand
		c.expr(&rhs, s.Rhs)
		return
	}
	if lhs.mode != placeMode {
		c.errorf(s.Lhs.Pos(), "cannot assign to %s: it is not a variable or a place in memory", exprString(s.Lhs))
		var rhs operand
		c.expr(&rhs, s.Rhs)
		return
	}
	if !lhs.writable {
		c.errorf(s.Lhs.Pos(), "cannot assign to %s: %s", exprString(s.Lhs), lhs.whyRO)
	}
	if s.Tok == ASSIGN {
		var rhs operand
		c.expr(&rhs, s.Rhs)
		if rhs.mode == novalue {
			c.errorf(s.Rhs.Pos(), "%s has no value", exprString(s.Rhs))
			return
		}
		c.assign(&rhs, lhs.typ, "assignment")
		return
	}
	// x op= y is x = x op y.
	var rhs operand
	c.expr(&rhs, s.Rhs)
	x := lhs
	x.mode = valueMode
	c.binary(&x, &rhs, s.Tok.assignOp(), s.TokPos, s.Lhs)
	if x.mode != invalid {
		c.assign(&x, lhs.typ, "assignment")
	}
}

func (c *checker) forStmt(s *ForStmt) {
	var t Type
	if s.Type != nil {
		t = c.typeExpr(s.Type)
		if !isInvalid(t) && !isInteger(t) {
			c.errorf(s.Type.Pos(), "loop variable must have an integer type, not %s", t)
			t = Typ[Invalid]
		}
	}
	var lo, hi operand
	c.expr(&lo, s.Low)
	c.expr(&hi, s.High)
	trips := int64(-1)
	ok := lo.mode != invalid && hi.mode != invalid
	if ok {
		for _, x := range []*operand{&lo, &hi} {
			if !isInteger(x.typ) || x.mode == novalue {
				c.errorf(x.expr.Pos(), "loop bound %s is %s, not an integer", exprString(x.expr), describe(x))
				ok = false
			}
		}
	}
	if ok {
		if t == nil {
			// The bounds decide the type: a typed one wins; two untyped
			// constants give u64.
			switch {
			case !isUntyped(lo.typ):
				t = lo.typ
			case !isUntyped(hi.typ):
				t = hi.typ
			default:
				t = Typ[U64]
			}
		}
		ok = c.assign(&lo, t, "loop bound") && c.assign(&hi, t, "loop bound")
	}
	if t == nil {
		t = Typ[Invalid]
	}
	if s.Max == nil {
		if ok && (lo.mode != constMode || hi.mode != constMode) {
			bad := s.Low
			if lo.mode == constMode {
				bad = s.High
			}
			c.errorf(bad.Pos(), "loop bound %s is not constant; give the loop a constant cap: for %s in %s..%s max N",
				exprString(bad), s.Var.Name, exprString(s.Low), exprString(s.High))
		} else if ok {
			d := constant.BinaryOp(hi.val, tokenSUB, lo.val)
			trips = 0
			if constant.Sign(d) > 0 {
				trips = clampInt64(d)
			}
		}
	} else {
		var m operand
		c.expr(&m, s.Max)
		if m.mode != invalid {
			if m.mode != constMode || !isInteger(m.typ) {
				c.errorf(s.Max.Pos(), "loop cap %s must be an integer constant", exprString(s.Max))
			} else if constant.Sign(m.val) <= 0 {
				c.errorf(s.Max.Pos(), "loop cap %s must be positive", valueString(m.val))
			} else {
				trips = clampInt64(m.val)
				c.setType(s.Max, m.typ, m.val)
			}
		}
	}
	if trips >= 0 {
		total := big.NewInt(trips)
		for _, n := range c.fn.loops {
			total.Mul(total, big.NewInt(n))
		}
		if total.Cmp(big.NewInt(insnBudget)) > 0 {
			what := "loop runs"
			if len(c.fn.loops) > 0 {
				what = "loop nest runs"
			}
			c.errorf(s.For, "%s up to %s iterations; a run may execute at most %d instructions", what, total, insnBudget)
		}
	} else {
		trips = 1
	}

	c.openScope()
	v := &Var{object: object{name: s.Var.Name, pos: s.Var.Pos(), typ: t}, Kind: LoopVar, root: rootStack}
	c.addLocal(t)
	c.declare(c.fn.scope, s.Var, v)
	c.fn.loops = append(c.fn.loops, trips)
	c.stmt(s.Body)
	c.fn.loops = c.fn.loops[:len(c.fn.loops)-1]
	c.closeScope()
}

func clampInt64(v constant.Value) int64 {
	if n, ok := constant.Int64Val(v); ok {
		return n
	}
	return 1 << 62
}

func (c *checker) returnStmt(s *ReturnStmt) {
	var want []Type
	named := false
	if fn := c.fn.fn; fn != nil {
		if fn.Result != nil {
			want = []Type{fn.Result}
		}
	} else {
		for _, v := range c.fn.handler.Results {
			want = append(want, v.typ)
			named = v.name != ""
		}
	}
	if len(s.Results) == 0 && (len(want) == 0 || named) {
		return
	}
	if len(s.Results) != len(want) {
		switch {
		case len(want) == 0:
			c.errorf(s.Results[0].Pos(), "too many return values: %s has no results", c.fn.name)
		case len(s.Results) == 0:
			c.errorf(s.Return, "missing return value: %s returns %s", c.fn.name, typeList(want))
		default:
			c.errorf(s.Results[0].Pos(), "wrong number of return values: have %d, want %d (%s)", len(s.Results), len(want), typeList(want))
		}
		for _, e := range s.Results {
			var x operand
			c.expr(&x, e)
		}
		return
	}
	for i, e := range s.Results {
		var x operand
		c.expr(&x, e)
		if x.mode == novalue {
			c.errorf(e.Pos(), "%s has no value", exprString(e))
			continue
		}
		c.assign(&x, want[i], "return value")
	}
}

// ---- Call graph ----

// checkCallGraph rejects recursion (the verifier does) and call chains
// deeper than the ABI's frames.
func (c *checker) checkCallGraph(objs []Object) {
	const (
		white = iota
		grey
		black
	)
	color := map[Object]int{}
	depth := map[Object]int{} // frames needed from this function down
	path := []Object{}
	recursive := false
	var visit func(o Object) int
	visit = func(o Object) int {
		switch color[o] {
		case grey:
			return 0
		case black:
			return depth[o]
		}
		color[o] = grey
		path = append(path, o)
		d := 1
		for _, cs := range c.calls[o] {
			if color[cs.callee] == grey {
				// A cycle: report it once, at the call that closes it.
				i := 0
				for path[i] != Object(cs.callee) {
					i++
				}
				names := []string{}
				for _, p := range path[i:] {
					names = append(names, p.Name())
				}
				names = append(names, cs.callee.name)
				c.errorf(cs.pos, "recursive call: %s; the verifier forbids recursion", strings.Join(names, " → "))
				recursive = true
				continue
			}
			d = max(d, 1+visit(cs.callee))
		}
		path = path[:len(path)-1]
		color[o] = black
		depth[o] = d
		return d
	}
	for _, o := range objs {
		switch o.(type) {
		case *Func, *Handler:
			visit(o)
		}
	}
	if recursive {
		return
	}
	for _, o := range objs {
		if h, ok := o.(*Handler); ok && depth[h] > maxFrames {
			c.errorf(h.pos, "handler %s needs %d stack frames through its calls; at most %d", h.name, depth[h], maxFrames)
		}
	}
}
