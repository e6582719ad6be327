package lang

import "go/constant"

// Object is a named entity: a constant, a type, a region, a fn, a
// handler, a variable or a builtin.
type Object interface {
	Name() string
	Pos() Pos // where it is declared (no position for predeclared objects)
	Type() Type
}

type object struct {
	name string
	pos  Pos
	typ  Type
}

func (o *object) Name() string { return o.name }
func (o *object) Pos() Pos     { return o.pos }
func (o *object) Type() Type   { return o.typ }

// Const is a declared constant with its value.
type Const struct {
	object
	Val  constant.Value
	decl *ConstDecl
}

// TypeName is a predeclared type (u32) or a struct.
type TypeName struct {
	object
	decl *StructDecl
}

// Region is memory the host registers; Index is its place in the object's
// region table (declaration order).
type Region struct {
	object
	Writable bool
	Index    int
	decl     *RegionDecl
}

// Func is a fn. Its parameters are scalars, bools or references (they are
// passed in r1–r5); its result, if any, a scalar or bool.
type Func struct {
	object
	Params []*Var
	Result Type // nil: no result
	Decl   *FuncDecl
}

// Handler is an entry point. ID is its number in the object (declaration
// order); Args and Results give the request and reply layouts.
type Handler struct {
	object
	ID      int
	Params  []*Var
	Results []*Var // one unnamed (Name "") for -> T
	Args    Layout
	Reply   Layout
	Decl    *HandlerDecl
}

// VarKind says what a variable is, which decides where it lives and
// whether it may be assigned.
type VarKind int

const (
	LocalLet      VarKind = iota // let: immutable, on the stack or in a register
	LocalVar                     // var: mutable
	LoopVar                      // for i in …: immutable
	Param                        // fn parameter: immutable
	HandlerArg                   // handler argument: read-only bytes of the request
	HandlerResult                // named handler result: bytes of the reply, writable
)

// Var is a variable.
type Var struct {
	object
	Kind VarKind
	// For a reference: what it points into.
	root placeRoot
}

// Builtin is a predeclared function (hash, copy, atomic_add, …).
type Builtin struct {
	object
	id builtinID
}

// placeRoot says which memory a place (or the target of a reference) is in.
type placeRoot int

const (
	rootNone    placeRoot = iota // not a place
	rootStack                    // a local
	rootRequest                  // a handler argument
	rootReply                    // a named handler result
	rootRegion                   // a region
	rootUnknown                  // behind a fn's reference parameter
)
