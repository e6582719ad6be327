package msgpackshape

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"strings"
)

// CheckInts walks the msgpack value in b beside the Go type of v (a
// pointer to the value the reflective decoder will fill) and checks that
// every integer bound for an integer field, element or map value fits
// that Go type: the decoder cuts 2^32+5 to 5 for a uint32 and -1 to
// 2^64-1 for a uint64 without a word. Errors name the field's path
// (what.field[3].name) and the value. Struct fields are matched by their
// msgpack tag (or name), as the decoder matches them; what has no Go
// counterpart is left to the decoder. b must have passed Check.
func CheckInts(b []byte, v any, what string) error {
	t := reflect.TypeOf(v)
	if t == nil || t.Kind() != reflect.Pointer {
		return fmt.Errorf("msgpackshape: CheckInts needs a pointer, not %v", t)
	}
	w := intWalker{b: b}
	_, err := w.value(0, t.Elem(), what)
	return err
}

type intWalker struct{ b []byte }

// value checks the value at byte i against t and returns where it ends.
func (w *intWalker) value(i int, t reflect.Type, path string) (int, error) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	c := w.b[i]
	switch {
	case c <= 0x7f:
		return i + 1, fits(t, path, false, uint64(c))
	case c >= 0xe0:
		return i + 1, fits(t, path, true, uint64(int64(int8(c))))
	case c >= 0xcc && c <= 0xcf: // uint 8/16/32/64
		n := 1 << (c - 0xcc)
		return i + 1 + n, fits(t, path, false, w.uint(i+1, n))
	case c >= 0xd0 && c <= 0xd3: // int 8/16/32/64
		n := 1 << (c - 0xd0)
		u := w.uint(i+1, n)
		shift := 64 - 8*n
		return i + 1 + n, fits(t, path, true, uint64(int64(u<<shift)>>shift))
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		n, at := w.count(i, c, 0x80, 0xde)
		return w.mapping(at, n, t, path)
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, at := w.count(i, c, 0x90, 0xdc)
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		var err error
		for k := range n {
			if at, err = w.value(at, elem, fmt.Sprintf("%s[%d]", path, k)); err != nil {
				return 0, err
			}
		}
		return at, nil
	}
	return w.skip(i), nil
}

// mapping checks a map of n pairs starting at byte i.
func (w *intWalker) mapping(i int, n uint64, t reflect.Type, path string) (int, error) {
	var fields map[string]reflect.Type
	var key, elem reflect.Type
	switch {
	case t == nil:
	case t.Kind() == reflect.Struct:
		fields = structFields(t)
	case t.Kind() == reflect.Map:
		key, elem = t.Key(), t.Elem()
	}
	var err error
	for range n {
		name, isStr := w.str(i)
		if i, err = w.value(i, key, path+".key"); err != nil {
			return 0, err
		}
		var vt reflect.Type
		sub := path + ".value"
		switch {
		case fields != nil && isStr:
			vt, sub = fields[name], path+"."+name
		case elem != nil:
			vt = elem
			if isStr {
				sub = fmt.Sprintf("%s[%q]", path, name)
			}
		}
		if i, err = w.value(i, vt, sub); err != nil {
			return 0, err
		}
	}
	return i, nil
}

// structFields maps the msgpack names of t's exported fields to their
// types, embedded structs' fields included, as the decoder sees them.
func structFields(t reflect.Type) map[string]reflect.Type {
	m := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("msgpack"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if _, tagged := f.Tag.Lookup("msgpack"); !tagged {
				for k, v := range structFields(f.Type) {
					m[k] = v
				}
				continue
			}
		}
		m[name] = f.Type
	}
	return m
}

// fits reports whether the integer u (a two's-complement int64 when
// signed) fits t, where t is an integer type; other types are the
// decoder's to refuse.
func fits(t reflect.Type, path string, signed bool, u uint64) error {
	if t == nil {
		return nil
	}
	neg := signed && int64(u) < 0
	var ok bool
	switch t.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		ok = !neg && (t.Bits() == 64 || u < 1<<t.Bits())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		lo, hi := int64(-1)<<(t.Bits()-1), int64(math.MaxInt64)
		if t.Bits() < 64 {
			hi = int64(1)<<(t.Bits()-1) - 1
		}
		ok = neg && int64(u) >= lo || !neg && u <= uint64(hi)
	default:
		return nil
	}
	if ok {
		return nil
	}
	if neg {
		return fmt.Errorf("%s: %d does not fit %v", path, int64(u), t)
	}
	return fmt.Errorf("%s: %d does not fit %v", path, u, t)
}

// uint reads an n-byte big-endian unsigned integer at i.
func (w *intWalker) uint(i, n int) uint64 {
	switch n {
	case 1:
		return uint64(w.b[i])
	case 2:
		return uint64(binary.BigEndian.Uint16(w.b[i:]))
	case 4:
		return uint64(binary.BigEndian.Uint32(w.b[i:]))
	}
	return binary.BigEndian.Uint64(w.b[i:])
}

// count reads an array's or map's element count at i (fix forms from
// fix, 16/32-bit forms from wide) and returns it with where the
// elements start.
func (w *intWalker) count(i int, c, fix, wide byte) (uint64, int) {
	if c < fix+0x10 {
		return uint64(c - fix), i + 1
	}
	n := 2 << (c - wide)
	return w.uint(i+1, n), i + 1 + n
}

// str returns the string at i, if a string is there.
func (w *intWalker) str(i int) (string, bool) {
	c := w.b[i]
	var n, at int
	switch {
	case c >= 0xa0 && c <= 0xbf:
		n, at = int(c&0x1f), i+1
	case c >= 0xd9 && c <= 0xdb:
		k := 1 << (c - 0xd9)
		n, at = int(w.uint(i+1, k)), i+1+k
	default:
		return "", false
	}
	return string(w.b[at : at+n]), true
}

// skip returns where the value at i ends; Check has vouched for its
// lengths.
func (w *intWalker) skip(i int) int {
	c := w.b[i]
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return i + 1
	case c >= 0xa0 && c <= 0xbf:
		return i + 1 + int(c&0x1f)
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf:
		n, at := w.count(i, c, 0x80, 0xde)
		for range 2 * n {
			at = w.skip(at)
		}
		return at
	case c >= 0x90 && c <= 0x9f, c == 0xdc, c == 0xdd:
		n, at := w.count(i, c, 0x90, 0xdc)
		for range n {
			at = w.skip(at)
		}
		return at
	case c == 0xc4, c == 0xc5, c == 0xc6: // bin
		k := 1 << (c - 0xc4)
		return i + 1 + k + int(w.uint(i+1, k))
	case c == 0xc7, c == 0xc8, c == 0xc9: // ext: length, type, data
		k := 1 << (c - 0xc7)
		return i + 1 + k + 1 + int(w.uint(i+1, k))
	case c == 0xca:
		return i + 5
	case c == 0xcb:
		return i + 9
	case c >= 0xd4 && c <= 0xd8: // fixext
		return i + 2 + 1<<(c-0xd4)
	case c >= 0xd9 && c <= 0xdb: // str
		k := 1 << (c - 0xd9)
		return i + 1 + k + int(w.uint(i+1, k))
	case c >= 0xcc && c <= 0xcf: // uint 8/16/32/64
		return i + 1 + 1<<(c-0xcc)
	case c >= 0xd0 && c <= 0xd3: // int 8/16/32/64
		return i + 1 + 1<<(c-0xd0)
	}
	return i + 1 // 0xc1, which Check refuses
}
