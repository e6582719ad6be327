package host

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/naam-project/naam/bytecode"
)

// A layout type is what a field's Type string says (spec/object.md):
// a scalar (u8 … u64, i8 … i64, bool), an array "[T; N]", or a struct
// name, which the host handles as opaque bytes of the field's size.
type ltype struct {
	kind   lkind
	size   uint32 // bytes of one value of this type
	signed bool   // scalars
	elem   *ltype // arrays
	n      uint32 // arrays: element count
}

type lkind uint8

const (
	lInt lkind = iota
	lBool
	lArray
	lOpaque
)

// parseType reads a field's Type string; size is the field's Size, which
// an opaque (struct) type takes as its size.
func parseType(s string, size uint32) (*ltype, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "u8", "u16", "u32", "u64", "i8", "i16", "i32", "i64":
		bitsN, _ := strconv.Atoi(s[1:])
		return &ltype{kind: lInt, size: uint32(bitsN / 8), signed: s[0] == 'i'}, nil
	case "bool":
		return &ltype{kind: lBool, size: 1}, nil
	}
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		inner := s[1 : len(s)-1]
		semi := strings.LastIndexByte(inner, ';')
		if semi < 0 {
			return nil, fmt.Errorf("type %q: an array needs \"[T; N]\"", s)
		}
		n, err := strconv.ParseUint(strings.TrimSpace(inner[semi+1:]), 10, 32)
		if err != nil || n == 0 {
			return nil, fmt.Errorf("type %q: bad element count", s)
		}
		if size%uint32(n) != 0 {
			return nil, fmt.Errorf("type %q: %d bytes do not split into %d elements", s, size, n)
		}
		elem, err := parseType(inner[:semi], size/uint32(n))
		if err != nil {
			return nil, err
		}
		if elem.size*uint32(n) != size {
			return nil, fmt.Errorf("type %q: %d elements of %d bytes is not the field's %d bytes", s, n, elem.size, size)
		}
		return &ltype{kind: lArray, size: size, elem: elem, n: uint32(n)}, nil
	}
	if s == "" || !isIdent(s) {
		return nil, fmt.Errorf("type %q is not a scalar, an array or a struct name", s)
	}
	return &ltype{kind: lOpaque, size: size}, nil
}

func isIdent(s string) bool {
	for i, r := range s {
		if r != '_' && !(r >= 'a' && r <= 'z') && !(r >= 'A' && r <= 'Z') && !(i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// isBytes reports whether t is [u8; N] or opaque: Go []byte, [N]byte and
// string go there.
func (t *ltype) isBytes() bool {
	return t.kind == lOpaque || (t.kind == lArray && t.elem.kind == lInt && t.elem.size == 1 && !t.elem.signed)
}

// field is one parsed layout field.
type field struct {
	bytecode.Field
	t *ltype
}

// layout is a parsed argument or result layout.
type layout struct {
	fields []field
	extent uint32 // the end of the last byte any field covers
	size   uint32 // extent rounded up to the largest alignment: the struct's size
}

// align is the type's alignment as the language lays it out: a scalar's
// size, an array's element's. A struct's is not in the object, so it is
// bounded from above by what its offset and size allow (at most 8): a size
// computed with it may exceed the compiler's, never fall short of it, and a
// handler ignores extra request bytes.
func (t *ltype) align(offset uint32) uint32 {
	switch t.kind {
	case lInt, lBool:
		return t.size
	case lArray:
		return t.elem.align(offset)
	}
	a := uint32(8)
	for a > 1 && (offset%a != 0 || t.size%a != 0) {
		a /= 2
	}
	return a
}

func parseLayout(fs []bytecode.Field) (layout, error) {
	var l layout
	maxAlign := uint32(1)
	for i, f := range fs {
		t, err := parseType(f.Type, f.Size)
		if err != nil {
			return layout{}, fmt.Errorf("field %d %q: %v", i, f.Name, err)
		}
		if t.size != f.Size {
			return layout{}, fmt.Errorf("field %d %q: type %s has %d bytes, the layout says %d", i, f.Name, f.Type, t.size, f.Size)
		}
		l.fields = append(l.fields, field{f, t})
		l.extent = max(l.extent, f.Offset+f.Size)
		maxAlign = max(maxAlign, t.align(f.Offset))
	}
	l.size = (l.extent + maxAlign - 1) / maxAlign * maxAlign
	return l, nil
}

func (l layout) names() string {
	var b strings.Builder
	for i, f := range l.fields {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(f.Name + " " + f.Type)
	}
	return "(" + b.String() + ")"
}

// A plan moves one Go type to or from a layout: for each layout field the
// Go value it comes from or goes to. Plans are made once per (handler, Go
// type) and cached.
type plan struct {
	steps []step
	// whole: the Go value itself is the single field (a scalar, an array,
	// []byte or string), not a struct of fields.
	whole bool
}

type step struct {
	f     *field
	index []int // the Go struct field; nil when plan.whole
}

// planCache caches plans by Go type.
type planCache struct{ m sync.Map } // reflect.Type → *plan or error

func (c *planCache) get(t reflect.Type, make func(reflect.Type) (*plan, error)) (*plan, error) {
	if v, ok := c.m.Load(t); ok {
		if p, ok := v.(*plan); ok {
			return p, nil
		}
		return nil, v.(error)
	}
	p, err := make(t)
	if err != nil {
		c.m.Store(t, err)
		return nil, err
	}
	c.m.Store(t, p)
	return p, nil
}

// normName folds a name for matching a Go field to a layout field:
// ValueLen, valueLen and value_len are all "valuelen".
func normName(s string) string {
	return strings.ToLower(strings.ReplaceAll(s, "_", ""))
}

// makePlan matches Go type t to l. forArgs: every layout field must have a
// Go field (an argument left out would go as zero); for results a Go
// struct may leave some out. Either way every exported Go field must name
// a layout field, so that a typo is an error and not a silent zero.
func makePlan(l *layout, t reflect.Type, forArgs bool) (*plan, error) {
	if t.Kind() != reflect.Struct {
		if len(l.fields) != 1 {
			return nil, fmt.Errorf("a %v fits a layout of one field; this one is %s: use a struct", t, l.names())
		}
		if err := fits(l.fields[0].t, t, forArgs); err != nil {
			return nil, fmt.Errorf("%s: %v", l.fields[0].Name, err)
		}
		return &plan{whole: true, steps: []step{{f: &l.fields[0]}}}, nil
	}
	byName := map[string]int{}
	for i := range l.fields {
		byName[normName(l.fields[i].Name)] = i
	}
	p := &plan{}
	matched := make([]bool, len(l.fields))
	for _, sf := range reflect.VisibleFields(t) {
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		name := sf.Name
		if tag, ok := sf.Tag.Lookup("naam"); ok {
			if tag == "-" {
				continue
			}
			name = tag
		}
		i, ok := byName[normName(name)]
		if !ok {
			return nil, fmt.Errorf("Go field %s.%s names no field of %s", t, sf.Name, l.names())
		}
		if matched[i] {
			return nil, fmt.Errorf("Go field %s.%s: layout field %q is already taken by another Go field", t, sf.Name, l.fields[i].Name)
		}
		if err := fits(l.fields[i].t, sf.Type, forArgs); err != nil {
			return nil, fmt.Errorf("Go field %s.%s (%s %s): %v", t, sf.Name, l.fields[i].Name, l.fields[i].Type, err)
		}
		matched[i] = true
		p.steps = append(p.steps, step{f: &l.fields[i], index: sf.Index})
	}
	if forArgs {
		for i, m := range matched {
			if !m {
				return nil, fmt.Errorf("%s has no Go field for %q (%s)", t, l.fields[i].Name, l.fields[i].Type)
			}
		}
	}
	return p, nil
}

// fits checks that Go type g can carry layout type t: to encode (from Go)
// any integer will do, its value checked at the call; to decode (into Go)
// the Go type must hold every value of t.
func fits(t *ltype, g reflect.Type, encode bool) error {
	switch t.kind {
	case lInt:
		switch {
		case isUnsignedKind(g.Kind()):
			if !encode && (t.signed || uint32(g.Size()) < t.size) {
				return fmt.Errorf("%v cannot hold every value", g)
			}
			return nil
		case isSignedKind(g.Kind()):
			if !encode && (uint32(g.Size()) < t.size || (!t.signed && uint32(g.Size()) == t.size)) {
				return fmt.Errorf("%v cannot hold every value", g)
			}
			return nil
		}
	case lBool:
		if g.Kind() == reflect.Bool {
			return nil
		}
	case lOpaque, lArray:
		if t.isBytes() {
			switch {
			case g.Kind() == reflect.String,
				g.Kind() == reflect.Slice && g.Elem().Kind() == reflect.Uint8:
				return nil
			case g.Kind() == reflect.Array && g.Elem().Kind() == reflect.Uint8:
				if uint32(g.Len()) != t.size {
					return fmt.Errorf("%v has %d bytes, the field %d", g, g.Len(), t.size)
				}
				return nil
			}
		}
		if t.kind == lArray {
			switch g.Kind() {
			case reflect.Array:
				if uint32(g.Len()) != t.n {
					return fmt.Errorf("%v has %d elements, the field %d", g, g.Len(), t.n)
				}
				return fits(t.elem, g.Elem(), encode)
			case reflect.Slice:
				return fits(t.elem, g.Elem(), encode)
			}
		}
	}
	return fmt.Errorf("a %v does not fit", g)
}

func isUnsignedKind(k reflect.Kind) bool {
	return k >= reflect.Uint && k <= reflect.Uintptr
}

func isSignedKind(k reflect.Kind) bool {
	return k >= reflect.Int && k <= reflect.Int64
}

// encode writes v (of the plan's type) into buf, which covers the layout's
// extent and is zeroed.
func (p *plan) encode(buf []byte, v reflect.Value) error {
	for _, s := range p.steps {
		fv := v
		if !p.whole {
			fv = v.FieldByIndex(s.index)
		}
		if err := put(buf[s.f.Offset:s.f.Offset+s.f.Size], s.f.t, fv); err != nil {
			return fmt.Errorf("%s: %w", s.f.Name, err)
		}
	}
	return nil
}

func put(b []byte, t *ltype, v reflect.Value) error {
	switch t.kind {
	case lInt:
		var u uint64
		if isUnsignedKind(v.Kind()) {
			u = v.Uint()
			if t.size < 8 && u>>(8*t.size-b2u(t.signed)) != 0 || t.size == 8 && t.signed && u > math.MaxInt64 {
				return fmt.Errorf("%d does not fit", u)
			}
		} else {
			i := v.Int()
			if !fitsSigned(i, t) {
				return fmt.Errorf("%d does not fit", i)
			}
			u = uint64(i)
		}
		switch t.size {
		case 1:
			b[0] = byte(u)
		case 2:
			binary.LittleEndian.PutUint16(b, uint16(u))
		case 4:
			binary.LittleEndian.PutUint32(b, uint32(u))
		case 8:
			binary.LittleEndian.PutUint64(b, u)
		}
	case lBool:
		if v.Bool() {
			b[0] = 1
		}
	case lOpaque, lArray:
		if t.isBytes() {
			switch v.Kind() {
			case reflect.String:
				if uint32(v.Len()) > t.size {
					return fmt.Errorf("%d bytes, the field holds %d", v.Len(), t.size)
				}
				copy(b, v.String())
				return nil
			case reflect.Slice:
				if uint32(v.Len()) > t.size {
					return fmt.Errorf("%d bytes, the field holds %d", v.Len(), t.size)
				}
				copy(b, v.Bytes())
				return nil
			case reflect.Array:
				if v.CanAddr() {
					copy(b, v.Bytes())
					return nil
				}
				for i := range v.Len() {
					b[i] = byte(v.Index(i).Uint())
				}
				return nil
			}
		}
		if uint32(v.Len()) > t.n {
			return fmt.Errorf("%d elements, the field holds %d", v.Len(), t.n)
		}
		for i := range v.Len() {
			off := uint32(i) * t.elem.size
			if err := put(b[off:off+t.elem.size], t.elem, v.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	}
	return nil
}

func fitsSigned(i int64, t *ltype) bool {
	if t.signed {
		lim := int64(1) << (8*t.size - 1)
		return t.size == 8 || (i >= -lim && i < lim)
	}
	return i >= 0 && (t.size == 8 || i < int64(1)<<(8*t.size))
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// decode reads the reply into v (addressable, of the plan's type). Bytes a
// short reply lacks read as zero.
func (p *plan) decode(reply []byte, v reflect.Value) {
	for _, s := range p.steps {
		fv := v
		if !p.whole {
			fv = v.FieldByIndex(s.index)
		}
		get(window(reply, s.f.Offset, s.f.Size), s.f.t, fv)
	}
}

// window returns reply[off:off+n], or a zero-padded copy where the reply
// is shorter.
func window(reply []byte, off, n uint32) []byte {
	if uint64(off)+uint64(n) <= uint64(len(reply)) {
		return reply[off : off+n]
	}
	b := make([]byte, n)
	if off < uint32(len(reply)) {
		copy(b, reply[off:])
	}
	return b
}

func get(b []byte, t *ltype, v reflect.Value) {
	switch t.kind {
	case lInt:
		var u uint64
		switch t.size {
		case 1:
			u = uint64(b[0])
		case 2:
			u = uint64(binary.LittleEndian.Uint16(b))
		case 4:
			u = uint64(binary.LittleEndian.Uint32(b))
		case 8:
			u = binary.LittleEndian.Uint64(b)
		}
		if isUnsignedKind(v.Kind()) {
			v.SetUint(u)
			return
		}
		if t.signed { // sign-extend
			sh := 64 - 8*t.size
			v.SetInt(int64(u<<sh) >> sh)
			return
		}
		v.SetInt(int64(u))
	case lBool:
		v.SetBool(b[0] != 0)
	case lOpaque, lArray:
		if t.isBytes() {
			switch v.Kind() {
			case reflect.String:
				v.SetString(string(b))
				return
			case reflect.Slice:
				if v.Cap() >= len(b) {
					v.SetLen(len(b))
				} else {
					v.Set(reflect.MakeSlice(v.Type(), len(b), len(b)))
				}
				copy(v.Bytes(), b)
				return
			case reflect.Array:
				copy(v.Bytes(), b)
				return
			}
		}
		if v.Kind() == reflect.Slice {
			if v.Cap() >= int(t.n) {
				v.SetLen(int(t.n))
			} else {
				v.Set(reflect.MakeSlice(v.Type(), int(t.n), int(t.n)))
			}
		}
		for i := range int(t.n) {
			off := uint32(i) * t.elem.size
			get(b[off:off+t.elem.size], t.elem, v.Index(i))
		}
	}
}
