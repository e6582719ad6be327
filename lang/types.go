package lang

import (
	"fmt"
	"go/constant"
	"strings"
)

// Type is a type of the language: *Basic, *Array, *Struct or *Ref.
type Type interface {
	String() string
	typ()
}

// BasicKind names the predeclared scalar types and the checker's own
// pseudo-types (untyped constants, no value, invalid).
type BasicKind int

const (
	Invalid BasicKind = iota // a type error was already reported
	Bool
	U8
	U16
	U32
	U64
	I8
	I16
	I32
	I64
	UntypedInt  // an integer constant not yet given a type
	UntypedBool // a boolean constant not yet given a type
	Void        // the "result" of a call to a fn without one
)

// Basic is a scalar type.
type Basic struct {
	Kind BasicKind
	Name string
}

func (*Basic) typ() {}
func (b *Basic) String() string {
	return b.Name
}

// Typ holds the basic types, indexed by kind.
var Typ = [...]*Basic{
	Invalid:     {Invalid, "invalid type"},
	Bool:        {Bool, "bool"},
	U8:          {U8, "u8"},
	U16:         {U16, "u16"},
	U32:         {U32, "u32"},
	U64:         {U64, "u64"},
	I8:          {I8, "i8"},
	I16:         {I16, "i16"},
	I32:         {I32, "i32"},
	I64:         {I64, "i64"},
	UntypedInt:  {UntypedInt, "untyped integer"},
	UntypedBool: {UntypedBool, "untyped bool"},
	Void:        {Void, "no value"},
}

// Array is [Elem; Len].
type Array struct {
	Elem Type
	Len  int64
}

func (*Array) typ()             {}
func (a *Array) String() string { return fmt.Sprintf("[%s; %d]", a.Elem, a.Len) }

// Struct is a declared struct with its layout (spec/language.md, Layout):
// fields in declaration order, each at the next offset that is a multiple
// of its alignment; the struct's alignment is its largest field's, and its
// size is rounded up to that alignment.
type Struct struct {
	Name   string
	Fields []*StructField
	size   int64
	align  int64
}

// StructField is a field of a struct with its byte offset.
type StructField struct {
	Name   string
	Type   Type
	Offset int64
	Pos    Pos
}

func (*Struct) typ()             {}
func (s *Struct) String() string { return s.Name }

// Field returns the field called name, or nil.
func (s *Struct) Field(name string) *StructField {
	for _, f := range s.Fields {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// layout places fields at their offsets and computes size and alignment.
func (s *Struct) layout() {
	off, align := int64(0), int64(1)
	for _, f := range s.Fields {
		a := Alignof(f.Type)
		off = roundUp(off, a)
		f.Offset = off
		off += Sizeof(f.Type)
		align = max(align, a)
	}
	s.size, s.align = roundUp(off, align), align
}

// Ref is a reference &Elem (read-only) or &mut Elem (writable) into a
// region, the request, the reply or the stack. References are never null
// and live only in let bindings and fn parameters.
type Ref struct {
	Elem Type
	Mut  bool
}

func (*Ref) typ() {}
func (r *Ref) String() string {
	if r.Mut {
		return "&mut " + r.Elem.String()
	}
	return "&" + r.Elem.String()
}

// Sizeof returns the size of t in bytes (8 for a reference, which is an
// address at run time).
func Sizeof(t Type) int64 {
	switch t := t.(type) {
	case *Basic:
		switch t.Kind {
		case Bool, U8, I8:
			return 1
		case U16, I16:
			return 2
		case U32, I32:
			return 4
		case U64, I64:
			return 8
		}
	case *Array:
		return t.Len * Sizeof(t.Elem)
	case *Struct:
		return t.size
	case *Ref:
		return 8
	}
	return 0
}

// Alignof returns the alignment of t: a scalar's size, an array's element
// alignment, a struct's largest field alignment.
func Alignof(t Type) int64 {
	switch t := t.(type) {
	case *Array:
		return Alignof(t.Elem)
	case *Struct:
		return t.align
	}
	return max(Sizeof(t), 1)
}

func roundUp(n, a int64) int64 { return (n + a - 1) / a * a }

// Layout describes where each handler argument sits in the request, or
// each result in the reply: the same rules as a struct's fields.
type Layout struct {
	Fields []*StructField
	Size   int64 // including padding to the largest alignment
}

func layoutOf(vars []*Var) Layout {
	s := &Struct{}
	for _, v := range vars {
		s.Fields = append(s.Fields, &StructField{Name: v.name, Type: v.typ, Pos: v.pos})
	}
	s.layout()
	return Layout{Fields: s.Fields, Size: s.size}
}

func isInteger(t Type) bool {
	b, ok := t.(*Basic)
	return ok && (b.Kind >= U8 && b.Kind <= I64 || b.Kind == UntypedInt)
}

// IsSigned reports whether t is one of the signed integer types i8 … i64.
func IsSigned(t Type) bool { return isSigned(t) }

func isSigned(t Type) bool {
	b, ok := t.(*Basic)
	return ok && b.Kind >= I8 && b.Kind <= I64
}

func isBool(t Type) bool {
	b, ok := t.(*Basic)
	return ok && (b.Kind == Bool || b.Kind == UntypedBool)
}

func isUntyped(t Type) bool {
	b, ok := t.(*Basic)
	return ok && (b.Kind == UntypedInt || b.Kind == UntypedBool)
}

func isScalar(t Type) bool { return isInteger(t) || isBool(t) }

func isInvalid(t Type) bool {
	b, ok := t.(*Basic)
	return t == nil || ok && b.Kind == Invalid
}

// hasRef reports whether t is or contains a reference.
func hasRef(t Type) bool {
	switch t := t.(type) {
	case *Ref:
		return true
	case *Array:
		return hasRef(t.Elem)
	}
	return false // struct fields are checked when declared
}

// identical reports whether x and y are the same type.
func identical(x, y Type) bool {
	switch x := x.(type) {
	case *Basic:
		return x == y
	case *Array:
		y, ok := y.(*Array)
		return ok && x.Len == y.Len && identical(x.Elem, y.Elem)
	case *Struct:
		return x == y
	case *Ref:
		y, ok := y.(*Ref)
		return ok && x.Mut == y.Mut && identical(x.Elem, y.Elem)
	}
	return false
}

// comparable reports whether == and != apply to t: scalars and arrays of
// them (compared element by element). Structs are not comparable: their
// padding has no defined value.
func comparable(t Type) bool {
	if a, ok := t.(*Array); ok {
		return comparable(a.Elem)
	}
	return isScalar(t)
}

// bits returns the width of an integer type.
func bits(t Type) uint { return uint(Sizeof(t) * 8) }

// representable reports whether constant v fits integer type t.
func representable(v constant.Value, t Type) bool {
	if v.Kind() != constant.Int {
		return false
	}
	n := bits(t)
	lo, hi := constant.MakeInt64(0), constant.Shift(constant.MakeInt64(1), tokenSHL, n)
	if isSigned(t) {
		hi = constant.Shift(constant.MakeInt64(1), tokenSHL, n-1)
		lo = constant.UnaryOp(tokenSUB, hi, 0)
	}
	return constant.Compare(v, tokenGEQ, lo) && constant.Compare(v, tokenLSS, hi)
}

// wrap reduces integer constant v to type t the way a cast does at run
// time: keep the low bits, then read them as signed or unsigned.
func wrap(v constant.Value, t Type) constant.Value {
	n := bits(t)
	mod := constant.Shift(constant.MakeInt64(1), tokenSHL, n)
	v = constant.BinaryOp(v, tokenREM, mod)
	if constant.Sign(v) < 0 {
		v = constant.BinaryOp(v, tokenADD, mod)
	}
	if isSigned(t) && !representable(v, t) {
		v = constant.BinaryOp(v, tokenSUB, mod)
	}
	return v
}

// typeList formats types for messages.
func typeList(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = t.String()
	}
	return strings.Join(s, ", ")
}
