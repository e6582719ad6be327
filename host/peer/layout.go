package peer

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/naam-project/naam/bytecode"
)

// kind classifies a bytecode.FieldType for the Go side.
type kind uint8

const (
	kInt kind = iota
	kBool
	kArray
	kOpaque // a struct, known only by name and size: bytes
)

func kindOf(t *bytecode.FieldType) kind {
	switch {
	case t.Scalar == "bool":
		return kBool
	case t.Scalar != "":
		return kInt
	case t.Elem != nil:
		return kArray
	}
	return kOpaque
}

func signed(t *bytecode.FieldType) bool { return t.Scalar != "" && t.Scalar[0] == 'i' }

// isBytes reports whether t is [u8; N] or a struct: Go []byte, [N]byte
// and string go there.
func isBytes(t *bytecode.FieldType) bool {
	return t.Name != "" || (t.Elem != nil && t.Elem.Scalar == "u8")
}

// layout is a parsed argument or result layout.
type layout struct {
	bytecode.Layout
}

func parseLayout(fs []bytecode.Field) (layout, error) {
	l, err := bytecode.ParseLayout(fs)
	return layout{l}, err
}

func (l layout) names() string {
	var b strings.Builder
	for i, f := range l.Fields {
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
	f     *bytecode.LayoutField
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
		if len(l.Fields) != 1 {
			return nil, fmt.Errorf("a %v fits a layout of one field; this one is %s: use a struct", t, l.names())
		}
		if err := fits(l.Fields[0].T, t, forArgs); err != nil {
			return nil, fmt.Errorf("%s: %v", l.Fields[0].Name, err)
		}
		return &plan{whole: true, steps: []step{{f: &l.Fields[0]}}}, nil
	}
	byName := map[string]int{}
	for i := range l.Fields {
		byName[normName(l.Fields[i].Name)] = i
	}
	p := &plan{}
	matched := make([]bool, len(l.Fields))
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
			return nil, fmt.Errorf("Go field %s.%s: layout field %q is already taken by another Go field", t, sf.Name, l.Fields[i].Name)
		}
		if err := fits(l.Fields[i].T, sf.Type, forArgs); err != nil {
			return nil, fmt.Errorf("Go field %s.%s (%s %s): %v", t, sf.Name, l.Fields[i].Name, l.Fields[i].Type, err)
		}
		matched[i] = true
		p.steps = append(p.steps, step{f: &l.Fields[i], index: sf.Index})
	}
	if forArgs {
		for i, m := range matched {
			if !m {
				return nil, fmt.Errorf("%s has no Go field for %q (%s)", t, l.Fields[i].Name, l.Fields[i].Type)
			}
		}
	}
	return p, nil
}

// fits checks that Go type g can carry layout type t: to encode (from Go)
// any integer will do, its value checked at the call; to decode (into Go)
// the Go type must hold every value of t.
func fits(t *bytecode.FieldType, g reflect.Type, encode bool) error {
	switch kindOf(t) {
	case kInt:
		switch {
		case isUnsignedKind(g.Kind()):
			if !encode && (signed(t) || uint64(g.Size()) < t.Size) {
				return fmt.Errorf("%v cannot hold every value", g)
			}
			return nil
		case isSignedKind(g.Kind()):
			if !encode && (uint64(g.Size()) < t.Size || (!signed(t) && uint64(g.Size()) == t.Size)) {
				return fmt.Errorf("%v cannot hold every value", g)
			}
			return nil
		}
	case kBool:
		if g.Kind() == reflect.Bool {
			return nil
		}
	case kOpaque, kArray:
		if isBytes(t) {
			switch {
			case g.Kind() == reflect.String,
				g.Kind() == reflect.Slice && g.Elem().Kind() == reflect.Uint8:
				return nil
			case g.Kind() == reflect.Array && g.Elem().Kind() == reflect.Uint8:
				if uint64(g.Len()) != t.Size {
					return fmt.Errorf("%v has %d bytes, the field %d", g, g.Len(), t.Size)
				}
				return nil
			}
		}
		if t.Elem != nil { // element by element (a [u8; N] too, from []uint16, say)
			switch g.Kind() {
			case reflect.Array:
				if uint64(g.Len()) != t.N {
					return fmt.Errorf("%v has %d elements, the field %d", g, g.Len(), t.N)
				}
				return fits(t.Elem, g.Elem(), encode)
			case reflect.Slice:
				return fits(t.Elem, g.Elem(), encode)
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
		if err := put(buf[s.f.Offset:s.f.Offset+s.f.Size], s.f.T, fv); err != nil {
			return fmt.Errorf("%s: %w", s.f.Name, err)
		}
	}
	return nil
}

func put(b []byte, t *bytecode.FieldType, v reflect.Value) error {
	switch kindOf(t) {
	case kInt:
		var u uint64
		if isUnsignedKind(v.Kind()) {
			u = v.Uint()
			if !unsignedFits(u, t) {
				return fmt.Errorf("%d does not fit", u)
			}
		} else {
			i := v.Int()
			if !signedFits(i, t) {
				return fmt.Errorf("%d does not fit", i)
			}
			u = uint64(i)
		}
		bytecode.PutUint(b, u)
	case kBool:
		if v.Bool() {
			b[0] = 1
		}
	case kOpaque, kArray:
		if isBytes(t) && isByteKind(v) {
			switch v.Kind() {
			case reflect.String:
				if uint64(v.Len()) > t.Size {
					return fmt.Errorf("%d bytes, the field holds %d", v.Len(), t.Size)
				}
				copy(b, v.String())
				return nil
			case reflect.Slice:
				if uint64(v.Len()) > t.Size {
					return fmt.Errorf("%d bytes, the field holds %d", v.Len(), t.Size)
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
		if uint64(v.Len()) > t.N {
			return fmt.Errorf("%d elements, the field holds %d", v.Len(), t.N)
		}
		for i := range v.Len() {
			off := uint64(i) * t.Elem.Size
			if err := put(b[off:off+t.Elem.Size], t.Elem, v.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
	}
	return nil
}

// isByteKind reports whether v is a string, a []byte or a [N]byte: what
// the bytes paths of put and get take (fits sends other slices and
// arrays element by element).
func isByteKind(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String:
		return true
	case reflect.Slice, reflect.Array:
		return v.Type().Elem().Kind() == reflect.Uint8
	}
	return false
}

// unsignedFits and signedFits say whether a Go value fits scalar t.
func unsignedFits(u uint64, t *bytecode.FieldType) bool {
	bits := 8*t.Size - b2u(signed(t))
	return bits >= 64 || u>>bits == 0
}

func signedFits(i int64, t *bytecode.FieldType) bool {
	if signed(t) {
		lim := int64(1) << (8*t.Size - 1)
		return t.Size == 8 || (i >= -lim && i < lim)
	}
	return i >= 0 && (t.Size == 8 || i < int64(1)<<(8*t.Size))
}

func b2u(b bool) uint64 {
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
		get(window(reply, s.f.Offset, s.f.Size), s.f.T, fv)
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

func get(b []byte, t *bytecode.FieldType, v reflect.Value) {
	switch kindOf(t) {
	case kInt:
		u := bytecode.Uint(b)
		if isUnsignedKind(v.Kind()) {
			v.SetUint(u)
			return
		}
		if signed(t) { // sign-extend
			sh := 64 - 8*t.Size
			v.SetInt(int64(u<<sh) >> sh)
			return
		}
		v.SetInt(int64(u))
	case kBool:
		v.SetBool(b[0] != 0)
	case kOpaque, kArray:
		if isBytes(t) && isByteKind(v) {
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
			if v.Cap() >= int(t.N) {
				v.SetLen(int(t.N))
			} else {
				v.Set(reflect.MakeSlice(v.Type(), int(t.N), int(t.N)))
			}
		}
		for i := range int(t.N) {
			off := uint64(i) * t.Elem.Size
			get(b[off:off+t.Elem.Size], t.Elem, v.Index(i))
		}
	}
}
