package lang

import (
	"errors"
	"go/constant"
	"slices"
	"strings"
	"testing"
)

const overrideSrc = `const N = 4
const M = N * 2
const SMALL: u8 = 3
const DEBUG = false

struct S {
    a: [u8; M]
}

region r: S rw

handler h() -> u64 {
    if DEBUG {
        return SMALL as u64
    }
    return N
}
`

// TestOverrides checks constant overrides: the value takes the
// declaration's place (and that of the constants derived from it), and a
// value of the wrong kind or out of the declared type's range is an error
// at the declaration.
func TestOverrides(t *testing.T) {
	for _, tc := range []struct {
		name    string
		have    map[string]constant.Value
		regSize int64  // the region's size when valid
		wantErr string // a substring of the error, with its position
	}{
		{name: "none", regSize: 8},
		{name: "N", have: map[string]constant.Value{"N": constant.MakeInt64(16)}, regSize: 32},
		{name: "M only", have: map[string]constant.Value{"M": constant.MakeInt64(5)}, regSize: 5},
		{name: "typed fits", have: map[string]constant.Value{"SMALL": constant.MakeInt64(255)}, regSize: 8},
		{name: "bool", have: map[string]constant.Value{"DEBUG": constant.MakeBool(true)}, regSize: 8},
		{name: "typed range", have: map[string]constant.Value{"SMALL": constant.MakeInt64(300)},
			wantErr: "o.naam:3:7: constant SMALL: the override 300 does not fit u8"},
		{name: "typed negative", have: map[string]constant.Value{"SMALL": constant.MakeInt64(-1)},
			wantErr: "o.naam:3:7: constant SMALL: the override -1 does not fit u8"},
		{name: "bool for int", have: map[string]constant.Value{"N": constant.MakeBool(true)},
			wantErr: "o.naam:1:7: constant N is an integer: the override true is not"},
		{name: "int for bool", have: map[string]constant.Value{"DEBUG": constant.MakeInt64(1)},
			wantErr: "o.naam:4:7: constant DEBUG is a bool: the override 1 is not true or false"},
		{name: "float", have: map[string]constant.Value{"N": constant.MakeFloat64(1.5)},
			wantErr: "o.naam:1:7: constant N is an integer: the override 1.5 is not"},
		{name: "nil", have: map[string]constant.Value{"N": nil},
			wantErr: "o.naam:1:7: constant N: the override has no value"},
		// An untyped constant is checked where it is used, as the
		// declared value would be.
		{name: "untyped use", have: map[string]constant.Value{"N": constant.MakeInt64(-1)},
			wantErr: "o.naam:7:13: array length -2 is out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := Config{Constants: tc.have}
			_, info, err := conf.CheckSource(NewFileSet(), "o.naam", []byte(overrideSrc))
			if tc.wantErr != "" {
				var list ErrorList
				if !errors.As(err, &list) || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v (%T), want an ErrorList with %q", err, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := Sizeof(info.Regions[0].Type()); got != tc.regSize {
				t.Errorf("region of %d bytes, want %d", got, tc.regSize)
			}
			for _, c := range info.Consts {
				if v, ok := tc.have[c.Name()]; ok && constant.Compare(c.Val, tokenNEQ, v) {
					t.Errorf("constant %s = %s, want %s", c.Name(), c.Val, v)
				}
			}
		})
	}
}

// TestOverrideNames: an override that names no constant is an
// *OverrideError naming it, before anything is checked.
func TestOverrideNames(t *testing.T) {
	for _, tc := range []struct {
		name, want string
	}{
		{"NOPE", "constant override NOPE: no constant NOPE is declared in o.naam"},
		{"r", "constant override r: r is a region, not a constant in o.naam"},
		{"S", "constant override S: S is a struct, not a constant in o.naam"},
		{"h", "constant override h: h is a handler, not a constant in o.naam"},
		{"u8", "constant override u8: no constant u8 is declared in o.naam"},
	} {
		conf := Config{Constants: map[string]constant.Value{tc.name: constant.MakeInt64(1), "N": constant.MakeInt64(2)}}
		_, _, err := conf.CheckSource(nil, "o.naam", []byte(overrideSrc))
		var oe *OverrideError
		if !errors.As(err, &oe) || oe.Name != tc.name || err.Error() != tc.want {
			t.Errorf("%s: error %v (%T), want %q", tc.name, err, err, tc.want)
		}
	}
	// Without overrides the same file checks clean.
	if _, _, err := (&Config{}).CheckSource(nil, "o.naam", []byte(overrideSrc)); err != nil {
		t.Fatal(err)
	}
}

// TestOverrideDeclarationStillChecked: the declared value must check even
// when an override replaces it.
func TestOverrideDeclarationStillChecked(t *testing.T) {
	src := "const N = NOPE\nhandler h() -> u64 {\n    return N\n}\n"
	conf := Config{Constants: map[string]constant.Value{"N": constant.MakeInt64(1)}}
	_, _, err := conf.CheckSource(nil, "d.naam", []byte(src))
	if err == nil || !strings.Contains(err.Error(), "d.naam:1:11") {
		t.Errorf("error %v, want one at d.naam:1:11", err)
	}
}

func TestParseConstant(t *testing.T) {
	for _, tc := range []struct {
		have string
		want string // ExactString, or "" for an error
	}{
		{"42", "42"},
		{"0x2a", "42"},
		{"0X2A", "42"},
		{"0o52", "42"},
		{"0b101010", "42"},
		{"1_000", "1000"},
		{"017", "17"},
		{"-1", "-1"},
		{"- 1", "-1"},
		{" 7 ", "7"},
		{"18446744073709551616", "18446744073709551616"},
		{"true", "true"},
		{"false", "false"},
		{"", ""},
		{"-", ""},
		{"--1", ""},
		{"-true", ""},
		{"abc", ""},
		{"4k", ""},
		{"0x", ""},
		{"1 2", ""},
		{"1;", ""},
		{"N", ""},
		{"1+1", ""},
		{"0x1g", ""},
		{"\"s\"", ""},
	} {
		v, err := ParseConstant(tc.have)
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("ParseConstant(%q) = %v, want an error", tc.have, v)
		case tc.want == "" && !strings.Contains(err.Error(), "is not an integer literal, true or false"):
			t.Errorf("ParseConstant(%q): error %q", tc.have, err)
		case tc.want != "" && err != nil:
			t.Errorf("ParseConstant(%q): %v", tc.have, err)
		case tc.want != "" && v.ExactString() != tc.want:
			t.Errorf("ParseConstant(%q) = %s, want %s", tc.have, v.ExactString(), tc.want)
		}
	}
}

func FuzzParseConstant(f *testing.F) {
	for _, s := range []string{"42", "-0x2a", "true", "1_0", "0b", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseConstant(s)
		if err == nil && v.Kind() != constant.Int && v.Kind() != constant.Bool {
			t.Fatalf("ParseConstant(%q) = %v of kind %v", s, v, v.Kind())
		}
	})
}

func TestParseOverrides(t *testing.T) {
	for _, tc := range []struct {
		have []string
		want string // the overrides as NAME=VALUE, sorted; or the error
	}{
		{nil, ""},
		{[]string{"N=8", "F=true", " M =-0x10"}, "F=true M=-16 N=8"},
		{[]string{"N"}, `"N": want NAME=VALUE`},
		{[]string{"=3"}, `"=3": want NAME=VALUE`},
		{[]string{"N=1", "N=2"}, "N: given twice"},
		{[]string{"N=x"}, `N: "x" is not an integer literal, true or false`},
	} {
		got, err := ParseOverrides(tc.have)
		s := ""
		if err != nil {
			s = err.Error()
		} else {
			var parts []string
			for k, v := range got {
				parts = append(parts, k+"="+v.String())
			}
			slices.Sort(parts)
			s = strings.Join(parts, " ")
		}
		if s != tc.want {
			t.Errorf("ParseOverrides(%q) = %q, want %q", tc.have, s, tc.want)
		}
	}
}
