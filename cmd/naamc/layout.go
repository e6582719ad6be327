package main

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/naam-project/naam/bytecode"
)

// fieldType is a parsed bytecode.Field type (spec/object.md): a scalar, an
// array of elem, or a struct known only by name and size.
type fieldType struct {
	scalar string     // u8 … i64, bool; "" for arrays and structs
	elem   *fieldType // arrays
	n      uint64     // arrays: the length
	name   string     // structs
	size   uint64     // bytes; for a struct, from the field's Size
}

var scalarSizes = map[string]uint64{"u8": 1, "i8": 1, "bool": 1, "u16": 2, "i16": 2, "u32": 4, "i32": 4, "u64": 8, "i64": 8}

// parseFieldType parses f.Type; the object's validation has already checked
// the grammar and that Size fits, so an error here means a bad object.
func parseFieldType(f bytecode.Field) (*fieldType, error) {
	t, rest, err := parseTypeText(f.Type)
	if err != nil || rest != "" {
		return nil, fmt.Errorf("field %s: malformed type %q", f.Name, f.Type)
	}
	// A struct's size is only in Size: divide it by the array lengths around it.
	total := uint64(f.Size)
	inner := t
	for inner.elem != nil {
		if inner.n == 0 {
			break
		}
		total /= inner.n
		inner = inner.elem
	}
	if inner.scalar == "" && inner.elem == nil {
		inner.size = total
	}
	t.fixSizes()
	if t.size != uint64(f.Size) {
		return nil, fmt.Errorf("field %s: type %s has %d bytes, the object says %d", f.Name, f.Type, t.size, f.Size)
	}
	return t, nil
}

func parseTypeText(s string) (*fieldType, string, error) {
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
		return &fieldType{elem: elem, n: n}, rest[end+1:], nil
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
		return &fieldType{scalar: word, size: size}, s[end:], nil
	}
	return &fieldType{name: word}, s[end:], nil
}

func (t *fieldType) fixSizes() {
	if t.elem != nil {
		t.elem.fixSizes()
		t.size = t.elem.size * t.n
	}
}

// align is the field's alignment as the language lays it out: a scalar's
// size, an array's element's. A struct's alignment is not in the object, so
// it is bounded from above by what its offset and size allow (at most 8); a
// layout size computed with it may be larger than the compiler's, never
// smaller, and a handler ignores extra request bytes and reply room.
func (t *fieldType) align(offset uint64) uint64 {
	switch {
	case t.scalar != "":
		return t.size
	case t.elem != nil:
		return t.elem.align(offset)
	}
	a := uint64(8)
	for a > 1 && (offset%a != 0 || t.size%a != 0) {
		a /= 2
	}
	return a
}

// layoutField is one argument or result with its parsed type.
type layoutField struct {
	bytecode.Field
	t *fieldType
}

// layout is a handler's request or reply.
type layout struct {
	fields []layoutField
	size   uint64 // the fields' extent rounded up to their largest alignment
}

func parseLayout(fields []bytecode.Field) (layout, error) {
	var l layout
	var end, maxAlign uint64 = 0, 1
	for _, f := range fields {
		t, err := parseFieldType(f)
		if err != nil {
			return layout{}, err
		}
		l.fields = append(l.fields, layoutField{Field: f, t: t})
		end = max(end, uint64(f.Offset)+uint64(f.Size))
		maxAlign = max(maxAlign, t.align(uint64(f.Offset)))
	}
	l.size = (end + maxAlign - 1) / maxAlign * maxAlign
	return l, nil
}

func (l layout) field(name string) (layoutField, bool) {
	for _, f := range l.fields {
		if f.Name == name {
			return f, true
		}
	}
	return layoutField{}, false
}

// describe prints the layout as "name: type @lo..hi" items.
func (l layout) describe() []string {
	var out []string
	for _, f := range l.fields {
		out = append(out, fmt.Sprintf("%s: %s @%d..%d", f.Name, f.Type, f.Offset, uint64(f.Offset)+uint64(f.Size)))
	}
	return out
}

// encodeValue writes the command-line text v for a value of type t into b
// (len(b) == t.size, zero). Integers are decimal or 0x/0o/0b, negative only
// for signed types; bools true or false; [u8; N] a string or 0x hex,
// zero-padded; other arrays comma-separated elements, zero-filled; structs
// (and arrays of them) 0x hex bytes, zero-padded.
func encodeValue(t *fieldType, v string, b []byte) error {
	switch {
	case t.scalar == "bool":
		switch v {
		case "true":
			b[0] = 1
		case "false":
		default:
			return fmt.Errorf("%q is not a bool (true or false)", v)
		}
		return nil
	case t.scalar != "":
		return encodeInt(t, v, b)
	case t.elem != nil && t.elem.scalar == "u8":
		if strings.HasPrefix(v, "0x") || strings.HasPrefix(v, "0X") {
			return encodeHex(v, b)
		}
		if len(v) > len(b) {
			return fmt.Errorf("%d bytes do not fit %d", len(v), len(b))
		}
		copy(b, v)
		return nil
	case t.elem != nil && t.leaf().scalar != "":
		leaf := t.leaf()
		items := strings.Split(v, ",")
		if n := uint64(len(b)) / leaf.size; uint64(len(items)) > n {
			return fmt.Errorf("%d values do not fit %d", len(items), n)
		}
		for i, item := range items {
			off := uint64(i) * leaf.size
			if err := encodeValue(leaf, strings.TrimSpace(item), b[off:off+leaf.size]); err != nil {
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
func (t *fieldType) leaf() *fieldType {
	for t.elem != nil {
		t = t.elem
	}
	return t
}

func (t *fieldType) String() string {
	switch {
	case t.scalar != "":
		return t.scalar
	case t.elem != nil:
		return fmt.Sprintf("[%s; %d]", t.elem, t.n)
	}
	return t.name
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

func encodeInt(t *fieldType, v string, b []byte) error {
	bits := int(t.size * 8)
	var u uint64
	if t.scalar[0] == 'i' {
		n, err := strconv.ParseInt(v, 0, bits)
		if err != nil {
			return fmt.Errorf("%q is not an %s", v, t.scalar)
		}
		u = uint64(n)
	} else {
		n, err := strconv.ParseUint(v, 0, bits)
		if err != nil {
			return fmt.Errorf("%q is not a %s", v, t.scalar)
		}
		u = n
	}
	putUint(b, u)
	return nil
}

func putUint(b []byte, u uint64) {
	switch len(b) {
	case 1:
		b[0] = byte(u)
	case 2:
		binary.LittleEndian.PutUint16(b, uint16(u))
	case 4:
		binary.LittleEndian.PutUint32(b, uint32(u))
	case 8:
		binary.LittleEndian.PutUint64(b, u)
	}
}

func getUint(b []byte) uint64 {
	switch len(b) {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}

// formatValue prints the bytes b of a value of type t: integers in decimal,
// bools as true or false, [u8; N] as a quoted string when printable (without
// its trailing zero bytes) or 0x hex, other arrays as [a, b, …], structs as
// 0x hex.
func formatValue(t *fieldType, b []byte) string {
	switch {
	case t.scalar == "bool":
		return strconv.FormatBool(b[0] != 0)
	case t.scalar != "" && t.scalar[0] == 'i':
		u := getUint(b)
		shift := 64 - 8*len(b)
		return strconv.FormatInt(int64(u<<shift)>>shift, 10)
	case t.scalar != "":
		return strconv.FormatUint(getUint(b), 10)
	case t.elem != nil && t.elem.scalar == "u8":
		text := strings.TrimRight(string(b), "\x00")
		if printable(text) {
			return strconv.Quote(text)
		}
		return "0x" + hex.EncodeToString(b)
	case t.elem != nil:
		items := make([]string, t.n)
		for i := range items {
			off := uint64(i) * t.elem.size
			items[i] = formatValue(t.elem, b[off:off+t.elem.size])
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
