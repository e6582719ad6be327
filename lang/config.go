package lang

import (
	"fmt"
	"go/constant"
	"slices"
	"strings"
)

// Config configures a check. The zero Config checks the source as written;
// Check and CheckSource use it.
type Config struct {
	// Constants overrides top-level constant declarations by name (as
	// naamc build -D NAME=VALUE does). Each value takes the place of the
	// declaration's value and is checked as that declaration is: it must
	// be of the declaration's kind (an integer for an integer constant,
	// a bool for a bool constant) and, when the constant has an integer
	// type (written, as in const N: u8 = 3, or inferred from typed
	// operands), fit that type; untyped constants are checked where they
	// are used, as the declared value would be. Constants derived from an
	// overridden one (const SIZE = N * 8, [T; N]) see the override. The
	// declaration's own value must still check. Such errors are reported
	// at the declaration, in the ErrorList.
	//
	// A name that is not a top-level constant of the file is an
	// *OverrideError, returned before anything else is checked: it is the
	// caller's mistake, not the source's. nil or empty: no overrides.
	Constants map[string]constant.Value
}

// OverrideError is a Config.Constants entry that names no top-level
// constant of the file. It has no position in the source.
type OverrideError struct {
	Name string // the override's name
	File string // the file checked
	Msg  string // why: "no constant BUCKET is declared", "BUCKETS is a region, not a constant"
}

func (e *OverrideError) Error() string {
	return fmt.Sprintf("constant override %s: %s in %s", e.Name, e.Msg, e.File)
}

// Check type-checks a parsed file with conf's overrides, as Check does.
func (conf *Config) Check(f *File) (*Info, error) {
	c := newChecker()
	c.overrides = conf.Constants
	if err := c.collect(f); err != nil {
		return c.info, err
	}
	c.check()
	c.errs.Sort()
	return c.info, c.errs.Err()
}

// CheckSource parses and checks src with conf's overrides, as CheckSource
// does.
func (conf *Config) CheckSource(fset *FileSet, name string, src []byte) (*File, *Info, error) {
	f, err := ParseFile(fset, name, src)
	if err != nil {
		return f, nil, err
	}
	info, err := conf.Check(f)
	return f, info, err
}

// checkOverrideNames returns an *OverrideError for the first override (in
// name order) that is not a top-level constant of f.
func (c *checker) checkOverrideNames(f *File) error {
	names := make([]string, 0, len(c.overrides))
	for name := range c.overrides {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		switch obj := c.pkg.names[name].(type) {
		case *Const:
		case nil:
			return &OverrideError{Name: name, File: f.Name, Msg: fmt.Sprintf("no constant %s is declared", name)}
		default:
			return &OverrideError{Name: name, File: f.Name, Msg: fmt.Sprintf("%s is %s, not a constant", name, objectKind(obj))}
		}
	}
	return nil
}

func objectKind(obj Object) string {
	switch obj.(type) {
	case *TypeName:
		return "a struct"
	case *Region:
		return "a region"
	case *Func:
		return "a fn"
	case *Handler:
		return "a handler"
	}
	return "not a constant"
}

// override replaces x, the checked value of constant obj, with v,
// reporting at the declaration why v cannot take its place.
func (c *checker) override(obj *Const, x *operand, v constant.Value) bool {
	isBool := x.typ == Typ[Bool] || x.typ == Typ[UntypedBool]
	switch {
	case v == nil || v.Kind() == constant.Unknown:
		c.errorf(obj.pos, "constant %s: the override has no value", obj.name)
		return false
	case isBool && v.Kind() != constant.Bool:
		c.errorf(obj.pos, "constant %s is a bool: the override %s is not true or false", obj.name, v)
		return false
	case !isBool && v.Kind() != constant.Int:
		c.errorf(obj.pos, "constant %s is an integer: the override %s is not", obj.name, v)
		return false
	case !isBool && !isUntyped(x.typ) && !representable(v, x.typ):
		c.errorf(obj.pos, "constant %s: the override %s does not fit %s", obj.name, valueString(v), x.typ)
		return false
	}
	x.val = v
	return true
}

// ParseConstant reads an override's value as a person writes it on a
// command line: an integer literal of the language (42, 0x2a, 0o52,
// 0b101010, 1_000, with an optional leading -) or true or false.
func ParseConstant(s string) (constant.Value, error) {
	var sc Scanner
	var scanErr string
	sc.Init("", []byte(s), func(_ Pos, msg string) {
		if scanErr == "" {
			scanErr = msg
		}
	})
	neg := false
	tok, _, lit := sc.Scan()
	if tok == SUB {
		neg = true
		tok, _, lit = sc.Scan()
	}
	var v constant.Value
	switch tok {
	case INT:
		v = intLitValue(lit)
		if neg && v != nil {
			v = constant.UnaryOp(tokenSUB, v, 0)
		}
	case TRUE, FALSE:
		if !neg {
			v = constant.MakeBool(tok == TRUE)
		}
	}
	end, _, endLit := sc.Scan()
	if end == SEMICOLON && endLit == "\n" {
		end, _, _ = sc.Scan()
	}
	if v == nil || end != EOF || scanErr != "" {
		why := "not an integer literal, true or false"
		if scanErr != "" && strings.TrimSpace(s) != "" {
			why += " (" + scanErr + ")"
		}
		return nil, fmt.Errorf("%q is %s", s, why)
	}
	return v, nil
}

// ParseOverrides reads constant overrides as command lines give them,
// NAME=VALUE each (naamc build -D, naam install -D), into
// Config.Constants. Errors name the override: `"N": want NAME=VALUE`,
// `N: given twice`, or N and ParseConstant's error.
func ParseOverrides(defs []string) (map[string]constant.Value, error) {
	var out map[string]constant.Value
	for _, d := range defs {
		name, value, ok := strings.Cut(d, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, fmt.Errorf("%q: want NAME=VALUE", d)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("%s: given twice", name)
		}
		v, err := ParseConstant(value)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if out == nil {
			out = map[string]constant.Value{}
		}
		out[name] = v
	}
	return out, nil
}
