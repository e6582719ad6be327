package lang

import (
	"fmt"
	"io"
	"reflect"
	"strings"
)

// Fprint writes the syntax tree under n, one field per line, positions as
// line:col: for golden tests and for debugging the parser.
func Fprint(w io.Writer, n Node) error {
	p := &printer{w: w}
	p.value(reflect.ValueOf(n), 0)
	return p.err
}

type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

var posType = reflect.TypeFor[Pos]()

func (p *printer) value(v reflect.Value, depth int) {
	indent := strings.Repeat("  ", depth+1)
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			p.printf("nil")
			return
		}
		p.value(v.Elem(), depth)
	case reflect.Struct:
		if v.Type() == posType {
			pos := v.Interface().(Pos)
			p.printf("%d:%d", pos.Line, pos.Col)
			return
		}
		p.printf("%s {\n", v.Type().Name())
		for i := 0; i < v.NumField(); i++ {
			p.printf("%s%s: ", indent, v.Type().Field(i).Name)
			p.value(v.Field(i), depth+1)
			p.printf("\n")
		}
		p.printf("%s}", indent[2:])
	case reflect.Slice:
		if v.Len() == 0 {
			p.printf("[]")
			return
		}
		p.printf("[\n")
		for i := 0; i < v.Len(); i++ {
			p.printf("%s", indent)
			p.value(v.Index(i), depth+1)
			p.printf("\n")
		}
		p.printf("%s]", indent[2:])
	case reflect.Int:
		if t, ok := v.Interface().(Token); ok {
			p.printf("%q", t.String())
			return
		}
		p.printf("%d", v.Int())
	case reflect.String:
		p.printf("%q", v.String())
	default:
		p.printf("%v", v.Interface())
	}
}
