package msgpackshape

import (
	"encoding/binary"
	"fmt"
)

// Check walks the msgpack value in b without decoding it and checks that
// b holds exactly one value, that no string, binary or extension runs past
// the end, that no array or map claims more elements than there are bytes
// left (each element takes at least one), and that nesting stays within
// maxDepth. The reflective decoder sizes its allocations from the
// length prefixes, so without this a few bytes could make it allocate
// hundreds of megabytes.
func Check(b []byte, maxDepth int, what string) error {
	pending := []uint64{1} // values still to read at each open level
	i := 0
	for len(pending) > 0 {
		top := len(pending) - 1
		if pending[top] == 0 {
			pending = pending[:top]
			continue
		}
		pending[top]--
		if i >= len(b) {
			return fmt.Errorf("unexpected end of data at byte %d", i)
		}
		at, c := i, b[i]
		i++
		// A value is a header, then size bytes of payload, then elems values.
		var size, elems uint64
		lenField := 0 // bytes of length that follow the code byte
		switch {
		case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3: // fixint, nil, bool
		case c <= 0x8f: // fixmap
			elems = 2 * uint64(c&0x0f)
		case c <= 0x9f: // fixarray
			elems = uint64(c & 0x0f)
		case c <= 0xbf: // fixstr
			size = uint64(c & 0x1f)
		case c == 0xc1:
			return fmt.Errorf("byte %d: 0xc1 is not a msgpack type", at)
		case c == 0xc4, c == 0xc5, c == 0xc6: // bin 8/16/32
			lenField = 1 << (c - 0xc4)
		case c == 0xc7, c == 0xc8, c == 0xc9: // ext 8/16/32: length, then a type byte
			lenField = 1 << (c - 0xc7)
			size = 1
		case c == 0xca, c == 0xce, c == 0xd2: // float32, uint32, int32
			size = 4
		case c == 0xcb, c == 0xcf, c == 0xd3: // float64, uint64, int64
			size = 8
		case c == 0xcc, c == 0xd0: // uint8, int8
			size = 1
		case c == 0xcd, c == 0xd1: // uint16, int16
			size = 2
		case c >= 0xd4 && c <= 0xd8: // fixext 1/2/4/8/16, plus the type byte
			size = 1 + 1<<(c-0xd4)
		case c == 0xd9, c == 0xda, c == 0xdb: // str 8/16/32
			lenField = 1 << (c - 0xd9)
		case c == 0xdc, c == 0xdd: // array 16/32
			lenField = 2 << (c - 0xdc)
		case c == 0xde, c == 0xdf: // map 16/32
			lenField = 2 << (c - 0xde)
		}
		if lenField > 0 {
			if len(b)-i < lenField {
				return fmt.Errorf("byte %d: unexpected end of data in a length", at)
			}
			var n uint64
			switch lenField {
			case 1:
				n = uint64(b[i])
			case 2:
				n = uint64(binary.BigEndian.Uint16(b[i:]))
			case 4:
				n = uint64(binary.BigEndian.Uint32(b[i:]))
			}
			i += lenField
			switch {
			case c >= 0xdc && c <= 0xdd:
				elems = n
			case c >= 0xde:
				elems = 2 * n
			default:
				size += n
			}
		}
		left := uint64(len(b) - i)
		if size > left {
			return fmt.Errorf("byte %d: value of %d bytes runs past the end (%d left)", at, size, left)
		}
		i += int(size)
		if elems > 0 {
			if elems > left {
				return fmt.Errorf("byte %d: %d elements claimed but only %d bytes left", at, elems, left)
			}
			if len(pending) >= maxDepth {
				return fmt.Errorf("byte %d: nested deeper than %d levels", at, maxDepth)
			}
			pending = append(pending, elems)
		}
	}
	if i != len(b) {
		return fmt.Errorf("%d bytes of trailing data after the %s", len(b)-i, what)
	}
	return nil
}

// OrEmpty returns s, or an empty slice for nil: msgpack then writes an
// empty array, so nil and empty lists encode alike.
func OrEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// OrNil returns s, or nil for an empty slice: decoded values then compare
// equal however an empty list was written.
func OrNil[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}
