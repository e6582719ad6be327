package host

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/naam-project/naam/bytecode"
)

// Handler is a handler installed on a peer: its id there and the layouts
// its arguments and results are encoded with (from the object it was
// compiled into).
type Handler struct {
	Name    string // the handler's name in its program
	Program string // the program's source file name ("kv.naam")
	ID      uint32 // the id requests name on that node
	Args    []bytecode.Field
	Results []bytecode.Field

	args, results layout
	argPlans      planCache
	resultPlans   planCache
}

func newHandler(program, name string, id uint32, args, results []bytecode.Field) (*Handler, error) {
	h := &Handler{Name: name, Program: program, ID: id, Args: args, Results: results}
	var err error
	if h.args, err = parseLayout(args); err != nil {
		return nil, fmt.Errorf("host: handler %s: args: %v", h, err)
	}
	if h.results, err = parseLayout(results); err != nil {
		return nil, fmt.Errorf("host: handler %s: results: %v", h, err)
	}
	return h, nil
}

// String is the qualified name, "kv.get" for handler get of kv.naam.
func (h *Handler) String() string {
	if p := programName(h.Program); p != "" {
		return p + "." + h.Name
	}
	return h.Name
}

// programName is a program's short name: its source file's base name
// without the extension.
func programName(source string) string {
	if i := strings.LastIndexAny(source, `/\`); i >= 0 {
		source = source[i+1:]
	}
	return strings.TrimSuffix(source, ".naam")
}

// PayloadSize is the request payload's size: the arguments' struct, with
// its padding.
func (h *Handler) PayloadSize() int { return int(h.args.size) }

// Encode appends the request payload for args to dst: args is a struct
// whose exported fields match the argument names (case and underscores
// ignored; a `naam:"name"` tag overrides the Go name), a pointer to one,
// or, for a handler with a single argument, that argument's value. nil
// means no arguments. A value that does not fit its field, a field the Go
// type lacks or a Go field the layout lacks is an error that wraps
// ErrLayout.
func (h *Handler) Encode(dst []byte, args any) ([]byte, error) {
	n := int(h.args.size)
	start := len(dst)
	dst = grow(dst, n)
	buf := dst[start : start+n]
	clear(buf)
	if args == nil {
		if len(h.args.fields) > 0 {
			return dst[:start], fmt.Errorf("%w: %s takes %s, got no arguments", ErrLayout, h, h.args.names())
		}
		return dst, nil
	}
	v := reflect.ValueOf(args)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return dst[:start], fmt.Errorf("%w: %s: nil %v", ErrLayout, h, v.Type())
		}
		v = v.Elem()
	}
	p, err := h.argPlans.get(v.Type(), func(t reflect.Type) (*plan, error) { return makePlan(&h.args, t, true) })
	if err != nil {
		return dst[:start], fmt.Errorf("%w: %s args: %v", ErrLayout, h, err)
	}
	if err := p.encode(buf, v); err != nil {
		return dst[:start], fmt.Errorf("%w: %s args: %v", ErrLayout, h, err)
	}
	return dst, nil
}

// Decode reads a reply into result: a pointer to a struct whose exported
// fields name results (it may leave some out), or, for a handler with a
// single result, a pointer to a value of its type. nil discards the
// reply. Bytes past the end of a short reply read as zero.
func (h *Handler) Decode(reply []byte, result any) error {
	if result == nil {
		return nil
	}
	v := reflect.ValueOf(result)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return fmt.Errorf("%w: %s: decoding needs a non-nil pointer, got %T", ErrLayout, h, result)
	}
	v = v.Elem()
	p, err := h.resultPlans.get(v.Type(), func(t reflect.Type) (*plan, error) { return makePlan(&h.results, t, false) })
	if err != nil {
		return fmt.Errorf("%w: %s results: %v", ErrLayout, h, err)
	}
	p.decode(reply, v)
	return nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, 2*len(b)+n)
	copy(nb, b)
	return nb
}

// EncodeStrings builds the payload from text values by argument name, as
// `naam call --arg k=v` takes them: integers in Go syntax (decimal, 0x…,
// negative for signed types), true/false, byte arrays and struct fields as
// text (quoted or not) or 0x-prefixed hex, other arrays as comma-separated
// elements. Every argument must be given, and no other.
func (h *Handler) EncodeStrings(vals map[string]string) ([]byte, error) {
	buf := make([]byte, h.args.size)
	seen := map[string]bool{}
	for _, f := range h.args.fields {
		s, ok := vals[f.Name]
		if !ok {
			return nil, fmt.Errorf("%w: %s needs argument %s (%s); it takes %s", ErrLayout, h, f.Name, f.Type, h.args.names())
		}
		seen[f.Name] = true
		if err := putString(buf[f.Offset:f.Offset+f.Size], f.t, s); err != nil {
			return nil, fmt.Errorf("%w: %s argument %s (%s): %v", ErrLayout, h, f.Name, f.Type, err)
		}
	}
	for k := range vals {
		if !seen[k] {
			return nil, fmt.Errorf("%w: %s has no argument %q; it takes %s", ErrLayout, h, k, h.args.names())
		}
	}
	return buf, nil
}

func putString(b []byte, t *ltype, s string) error {
	switch t.kind {
	case lInt:
		var u uint64
		if t.signed {
			i, err := strconv.ParseInt(s, 0, int(8*t.size))
			if err != nil {
				return fmt.Errorf("%q is not an i%d", s, 8*t.size)
			}
			u = uint64(i)
		} else {
			x, err := strconv.ParseUint(s, 0, int(8*t.size))
			if err != nil {
				return fmt.Errorf("%q is not a u%d", s, 8*t.size)
			}
			u = x
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], u)
		copy(b, w[:t.size])
	case lBool:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not true or false", s)
		}
		if v {
			b[0] = 1
		}
	default:
		if t.isBytes() {
			raw, err := bytesArg(s)
			if err != nil {
				return err
			}
			if uint32(len(raw)) > t.size {
				return fmt.Errorf("%d bytes, the field holds %d", len(raw), t.size)
			}
			copy(b, raw)
			return nil
		}
		var parts []string
		if strings.TrimSpace(s) != "" {
			parts = strings.Split(s, ",")
		}
		if uint32(len(parts)) > t.n {
			return fmt.Errorf("%d elements, the field holds %d", len(parts), t.n)
		}
		for i, p := range parts {
			off := uint32(i) * t.elem.size
			if err := putString(b[off:off+t.elem.size], t.elem, strings.TrimSpace(p)); err != nil {
				return fmt.Errorf("[%d]: %v", i, err)
			}
		}
	}
	return nil
}

func bytesArg(s string) ([]byte, error) {
	if strings.HasPrefix(s, "0x") {
		b := make([]byte, (len(s)-2)/2)
		for i := range b {
			v, err := strconv.ParseUint(s[2+2*i:4+2*i], 16, 8)
			if err != nil || len(s)%2 != 0 {
				return nil, fmt.Errorf("%q is not hex", s)
			}
			b[i] = byte(v)
		}
		return b, nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		return []byte(uq), nil
	}
	return []byte(s), nil
}

// FormatResults renders a reply by result name, one "name = value" per
// line, as `naam call` prints it: integers in decimal, byte arrays as
// quoted text when printable and hex otherwise.
func (h *Handler) FormatResults(reply []byte) string {
	if len(h.results.fields) == 0 {
		return fmt.Sprintf("reply = %x\n", reply)
	}
	var b strings.Builder
	for _, f := range h.results.fields {
		fmt.Fprintf(&b, "%s = %s\n", f.Name, formatValue(window(reply, f.Offset, f.Size), f.t))
	}
	return b.String()
}

func formatValue(b []byte, t *ltype) string {
	switch t.kind {
	case lInt:
		var w [8]byte
		copy(w[:], b)
		u := binary.LittleEndian.Uint64(w[:])
		if t.signed {
			sh := 64 - 8*t.size
			return strconv.FormatInt(int64(u<<sh)>>sh, 10)
		}
		return strconv.FormatUint(u, 10)
	case lBool:
		return strconv.FormatBool(b[0] != 0)
	}
	if t.isBytes() {
		trimmed := strings.TrimRight(string(b), "\x00")
		if strconv.CanBackquote(trimmed) {
			return strconv.Quote(trimmed)
		}
		return fmt.Sprintf("0x%x", b)
	}
	parts := make([]string, t.n)
	for i := range parts {
		off := uint32(i) * t.elem.size
		parts[i] = formatValue(b[off:off+t.elem.size], t.elem)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
