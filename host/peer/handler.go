package peer

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

// Handler is a handler installed on a peer: its id there and the layouts
// its arguments and results are encoded with (from the object it was
// compiled into).
type Handler struct {
	Name      string // the handler's name in its program
	Program   string // the program's source file name ("kv.naam")
	ProgramID uint64 // the program's id on that node
	ID        uint32 // the id requests name on that node
	Args      []bytecode.Field
	Results   []bytecode.Field
	// ClientEligible says the node's verifier found the handler
	// client-eligible (spec/client.md); MaxInsns is then its bound.
	ClientEligible bool
	MaxInsns       uint64

	client        *clientProgram // nil: the handler cannot run at the client
	place         *placeState
	label         string // the program's name among the node's (bytecode.ProgramLabels)
	args, results layout
	argPlans      planCache
	resultPlans   planCache
}

func newHandler(program, name string, id uint32, args, results []bytecode.Field) (*Handler, error) {
	h := &Handler{Name: name, Program: program, ID: id, Args: args, Results: results, place: newPlaceState()}
	var err error
	if h.args, err = parseLayout(args); err != nil {
		return nil, fmt.Errorf("host: handler %s: args: %v", h, err)
	}
	if h.results, err = parseLayout(results); err != nil {
		return nil, fmt.Errorf("host: handler %s: results: %v", h, err)
	}
	// Layouts may come from a peer's description: no larger than a packet,
	// so that nothing decoded from them allocates without bound.
	if h.args.Size > wire.MaxPayload || h.results.Size > wire.MaxPayload {
		return nil, fmt.Errorf("host: handler %s: a request of %d bytes or a reply of %d is larger than a packet (%d)", h, h.args.Size, h.results.Size, wire.MaxPayload)
	}
	return h, nil
}

// String is the qualified name, "kv.get" for handler get of kv.naam;
// where two of the node's programs share a name, the program's id tells
// them apart: "counter#3.add" (bytecode.ProgramLabels).
func (h *Handler) String() string {
	p := h.label
	if p == "" {
		p = bytecode.ProgramName(h.Program)
	}
	if p != "" {
		return p + "." + h.Name
	}
	return h.Name
}

// PayloadSize is the request payload's size: the arguments' struct, with
// its padding.
func (h *Handler) PayloadSize() int { return int(h.args.Size) }

// Encode appends the request payload for args to dst: args is a struct
// whose exported fields match the argument names (case and underscores
// ignored; a `naam:"name"` tag overrides the Go name), a pointer to one,
// or, for a handler with a single argument, that argument's value. nil
// means no arguments. A value that does not fit its field, a field the Go
// type lacks or a Go field the layout lacks is an error that wraps
// ErrLayout.
func (h *Handler) Encode(dst []byte, args any) ([]byte, error) {
	n := int(h.args.Size)
	start := len(dst)
	dst = grow(dst, n)
	buf := dst[start : start+n]
	clear(buf)
	if args == nil {
		if len(h.args.Fields) > 0 {
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
// `naam call --arg k=v` takes them (bytecode.FieldType.EncodeText):
// integers decimal or 0x/0o/0b, negative only for signed types; true or
// false; [u8; N] as text or 0x hex; other arrays comma-separated; structs
// 0x hex. Every argument must be given, and no other.
func (h *Handler) EncodeStrings(vals map[string]string) ([]byte, error) {
	buf := make([]byte, h.args.Size)
	for _, f := range h.args.Fields {
		s, ok := vals[f.Name]
		if !ok {
			return nil, fmt.Errorf("%w: %s needs argument %s (%s); it takes %s", ErrLayout, h, f.Name, f.Type, h.args.names())
		}
		if err := f.T.EncodeText(s, buf[f.Offset:f.Offset+f.Size]); err != nil {
			return nil, fmt.Errorf("%w: %s argument %s (%s): %v", ErrLayout, h, f.Name, f.Type, err)
		}
	}
	for k := range vals {
		if _, ok := h.args.Field(k); !ok {
			return nil, fmt.Errorf("%w: %s has no argument %q; it takes %s", ErrLayout, h, k, h.args.names())
		}
	}
	return buf, nil
}

// FormatResults renders a reply by result name, one "name = value" per
// line, as `naam call` prints it (bytecode.FieldType.FormatText).
func (h *Handler) FormatResults(reply []byte) string {
	if len(h.results.Fields) == 0 {
		return fmt.Sprintf("reply = %x\n", reply)
	}
	var b strings.Builder
	for _, f := range h.results.Fields {
		fmt.Fprintf(&b, "%s = %s\n", f.Name, f.T.FormatText(window(reply, f.Offset, f.Size)))
	}
	return b.String()
}
