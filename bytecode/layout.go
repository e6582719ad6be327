package bytecode

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// FieldType is a parsed Field type (spec/object.md): a scalar, an array of
// Elem, or a struct known only by name and size. naamc run, the host
// library and naam call encode arguments and decode results with it.
type FieldType struct {
	Scalar string     // u8 … i64, bool; "" for arrays and structs
	Elem   *FieldType // arrays
	N      uint64     // arrays: the length
	Name   string     // structs
	Size   uint64     // bytes; for a struct, from the field's Size
}

// ParseFieldType parses f.Type and checks it against f.Size. A validated
// object's fields always parse; a field from elsewhere (a describe reply)
// may not, and gets an error, never a panic.
func ParseFieldType(f Field) (*FieldType, error) {
	t, rest, err := parseTypeText(f.Type)
	if err != nil || rest != "" {
		return nil, fmt.Errorf("field %s: malformed type %q", f.Name, f.Type)
	}
	// A struct's size is only in Size: divide it by the array lengths around it.
	total := uint64(f.Size)
	inner := t
	for inner.Elem != nil {
		if inner.N == 0 {
			break
		}
		total /= inner.N
		inner = inner.Elem
	}
	if inner.Scalar == "" && inner.Elem == nil {
		inner.Size = total
	}
	if !t.fixSizes() {
		return nil, fmt.Errorf("field %s: type %s is larger than any field can be", f.Name, f.Type)
	}
	if t.Size != uint64(f.Size) {
		return nil, fmt.Errorf("field %s: type %s has %d bytes, the object says %d", f.Name, f.Type, t.Size, f.Size)
	}
	return t, nil
}

func parseTypeText(s string) (*FieldType, string, error) {
	if strings.HasPrefix(s, "[") {
		elem, rest, err := parseTypeText(s[1:])
		if err != nil {
			return nil, "", err
		}
		rest, ok := strings.CutPrefix(rest, "; ")
		if !ok {
			return nil, "", fmt.Errorf("want ; ")
		}
		end := strings.IndexByte(rest, ']')
		if end < 0 {
			return nil, "", fmt.Errorf("want ]")
		}
		n, err := strconv.ParseUint(rest[:end], 10, 32)
		if err != nil {
			return nil, "", err
		}
		return &FieldType{Elem: elem, N: n}, rest[end+1:], nil
	}
	end := strings.IndexAny(s, ";]")
	if end < 0 {
		end = len(s)
	}
	word := s[:end]
	if word == "" {
		return nil, "", fmt.Errorf("empty type")
	}
	if size, ok := scalarSizes[word]; ok {
		return &FieldType{Scalar: word, Size: size}, s[end:], nil
	}
	return &FieldType{Name: word}, s[end:], nil
}

// fixSizes computes array sizes from their elements'; false when one
// would pass 2^32 bytes (no field is that large: the type is bogus).
func (t *FieldType) fixSizes() bool {
	if t.Elem != nil {
		if !t.Elem.fixSizes() {
			return false
		}
		hi, lo := bits.Mul64(t.Elem.Size, t.N)
		if hi != 0 || lo > 1<<32 {
			return false
		}
		t.Size = lo
	}
	return true
}

// align is the field's alignment as the language lays it out: a scalar's
// size, an array's element's. A struct's alignment is not in the object, so
// it is bounded from above by what its offset and size allow (at most 8); a
// layout size computed with it may be larger than the compiler's, never
// smaller, and a handler ignores extra request bytes and reply room.
func (t *FieldType) Align(offset uint64) uint64 {
	switch {
	case t.Scalar != "":
		return t.Size
	case t.Elem != nil:
		return t.Elem.Align(offset)
	}
	a := uint64(8)
	for a > 1 && (offset%a != 0 || t.Size%a != 0) {
		a /= 2
	}
	return a
}

// LayoutField is one argument or result with its parsed type.
type LayoutField struct {
	Field
	T *FieldType
}

// Layout is a handler's request or reply, parsed.
type Layout struct {
	Fields []LayoutField
	Size   uint64 // the fields' extent rounded up to their largest alignment
}

// ParseLayout parses a handler's Args or Results.
func ParseLayout(fields []Field) (Layout, error) {
	var l Layout
	var end, maxAlign uint64 = 0, 1
	for _, f := range fields {
		t, err := ParseFieldType(f)
		if err != nil {
			return Layout{}, err
		}
		l.Fields = append(l.Fields, LayoutField{Field: f, T: t})
		end = max(end, uint64(f.Offset)+uint64(f.Size))
		maxAlign = max(maxAlign, t.Align(uint64(f.Offset)))
	}
	l.Size = (end + maxAlign - 1) / maxAlign * maxAlign
	return l, nil
}

// Field returns the field called name.
func (l Layout) Field(name string) (LayoutField, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return LayoutField{}, false
}

// Describe prints the layout as "name: type @lo..hi" items.
func (l Layout) Describe() []string {
	var out []string
	for _, f := range l.Fields {
		out = append(out, fmt.Sprintf("%s: %s @%d..%d", f.Name, f.Type, f.Offset, uint64(f.Offset)+uint64(f.Size)))
	}
	return out
}

// EncodeText writes the command-line text v for a value of type t into b
// (len(b) == t.Size, zero). Integers are decimal or 0x/0o/0b, negative only
// for signed types; bools true or false; [u8; N] a string or 0x hex,
// zero-padded; other arrays comma-separated elements, zero-filled; structs
// (and arrays of them) 0x hex bytes, zero-padded. An empty text leaves an
// array or a struct all zero.
func (t *FieldType) EncodeText(v string, b []byte) error {
	if t.Scalar == "" && strings.TrimSpace(v) == "" {
		return nil // an empty array or struct: all zero
	}
	switch {
	case t.Scalar == "bool":
		switch v {
		case "true":
			b[0] = 1
		case "false":
		default:
			return fmt.Errorf("%q is not a bool (true or false)", v)
		}
		return nil
	case t.Scalar != "":
		return encodeInt(t, v, b)
	case t.Elem != nil && t.Elem.Scalar == "u8":
		if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
			return encodeHex(v, b)
		}
		if len(v) > len(b) {
			return fmt.Errorf("%d bytes do not fit %d", len(v), len(b))
		}
		copy(b, v)
		return nil
	case t.Elem != nil && t.Leaf().Scalar != "":
		leaf := t.Leaf()
		items := strings.Split(v, ",")
		if n := uint64(len(b)) / leaf.Size; uint64(len(items)) > n {
			return fmt.Errorf("%d values do not fit %d", len(items), n)
		}
		for i, item := range items {
			off := uint64(i) * leaf.Size
			if err := leaf.EncodeText(strings.TrimSpace(item), b[off:off+leaf.Size]); err != nil {
				return fmt.Errorf("element %d: %v", i, err)
			}
		}
		return nil
	}
	if !strings.HasPrefix(v, "0x") && !strings.HasPrefix(v, "0X") {
		return fmt.Errorf("a %s is given as 0x and hex bytes", t)
	}
	return encodeHex(v, b)
}

// leaf is the scalar or struct at the bottom of nested arrays.
func (t *FieldType) Leaf() *FieldType {
	for t.Elem != nil {
		t = t.Elem
	}
	return t
}

func (t *FieldType) String() string {
	switch {
	case t.Scalar != "":
		return t.Scalar
	case t.Elem != nil:
		return fmt.Sprintf("[%s; %d]", t.Elem, t.N)
	}
	return t.Name
}

func encodeHex(v string, b []byte) error {
	raw, err := hex.DecodeString(v[2:])
	if err != nil {
		return fmt.Errorf("bad hex %q: %v", v, err)
	}
	if len(raw) > len(b) {
		return fmt.Errorf("%d bytes do not fit %d", len(raw), len(b))
	}
	copy(b, raw)
	return nil
}

func encodeInt(t *FieldType, v string, b []byte) error {
	bits := int(t.Size * 8)
	var u uint64
	if t.Scalar[0] == 'i' {
		n, err := strconv.ParseInt(v, 0, bits)
		if err != nil {
			return fmt.Errorf("%q is not an %s", v, t.Scalar)
		}
		u = uint64(n)
	} else {
		n, err := strconv.ParseUint(v, 0, bits)
		if err != nil {
			return fmt.Errorf("%q is not a %s", v, t.Scalar)
		}
		u = n
	}
	PutUint(b, u)
	return nil
}

// PutUint writes the low len(b) bytes of u into b, little-endian: the
// bytes of a scalar field (len(b) at most 8).
func PutUint(b []byte, u uint64) {
	var w [8]byte
	binary.LittleEndian.PutUint64(w[:], u)
	copy(b, w[:])
}

// Uint reads the scalar field b (at most 8 bytes), little-endian.
func Uint(b []byte) uint64 {
	var w [8]byte
	copy(w[:], b)
	return binary.LittleEndian.Uint64(w[:])
}

// FormatText prints the bytes b of a value of type t: integers in decimal,
// bools as true or false, [u8; N] as a quoted string when printable (without
// its trailing zero bytes) or 0x hex, other arrays as [a, b, …], structs as
// 0x hex.
func (t *FieldType) FormatText(b []byte) string {
	switch {
	case t.Scalar == "bool":
		return strconv.FormatBool(b[0] != 0)
	case t.Scalar != "" && t.Scalar[0] == 'i':
		u := Uint(b)
		shift := 64 - 8*len(b)
		return strconv.FormatInt(int64(u<<shift)>>shift, 10)
	case t.Scalar != "":
		return strconv.FormatUint(Uint(b), 10)
	case t.Elem != nil && t.Elem.Scalar == "u8":
		text := strings.TrimRight(string(b), "\x00")
		if printable(text) {
			return strconv.Quote(text)
		}
		return "0x" + hex.EncodeToString(b)
	case t.Elem != nil:
		items := make([]string, t.N)
		for i := range items {
			off := uint64(i) * t.Elem.Size
			items[i] = t.Elem.FormatText(b[off : off+t.Elem.Size])
		}
		return "[" + strings.Join(items, ", ") + "]"
	}
	return "0x" + hex.EncodeToString(b)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
