package lang

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOK checks that every program in testdata/ok is valid.
func TestOK(t *testing.T) {
	files, _ := filepath.Glob("testdata/ok/*.naam")
	if len(files) == 0 {
		t.Fatal("no files in testdata/ok")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			fset := NewFileSet()
			_, _, err = CheckSource(fset, name, src)
			if err != nil {
				var b strings.Builder
				Print(&b, fset, err)
				t.Errorf("want no errors, got:\n%s", b.String())
			}
		})
	}
}

// errorComment matches ERROR "regexp"; inside the quotes \" is a quote
// and every other backslash belongs to the regexp.
var errorComment = regexp.MustCompile(`ERROR "((?:[^"\\]|\\.)*)"`)

// TestErrors checks the programs in testdata/errors: every error must be
// matched by an ERROR "regexp" comment on its line, and every ERROR
// comment must match an error (Go's own convention for checker tests).
func TestErrors(t *testing.T) {
	files, _ := filepath.Glob("testdata/errors/*.naam")
	if len(files) == 0 {
		t.Fatal("no files in testdata/errors")
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			src, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			want := map[int][]*regexp.Regexp{}
			for i, line := range strings.Split(string(src), "\n") {
				for _, m := range errorComment.FindAllStringSubmatch(line, -1) {
					re, err := regexp.Compile(strings.ReplaceAll(m[1], `\"`, `"`))
					if err != nil {
						t.Fatalf("line %d: bad ERROR comment: %v", i+1, err)
					}
					want[i+1] = append(want[i+1], re)
				}
			}
			if len(want) == 0 {
				t.Fatal("no ERROR comments")
			}
			_, _, err = CheckSource(nil, name, src)
			list, _ := err.(ErrorList)
			if err != nil && list == nil {
				t.Fatalf("error is %T, not ErrorList", err)
			}
			for _, e := range list {
				if e.Pos.File != name {
					t.Errorf("%s: error in file %q", e, e.Pos.File)
				}
				res := want[e.Pos.Line]
				found := -1
				for i, re := range res {
					if re.MatchString(e.Msg) {
						found = i
						break
					}
				}
				if found < 0 {
					t.Errorf("unexpected error %s", e)
					continue
				}
				want[e.Pos.Line] = append(res[:found], res[found+1:]...)
			}
			for line, res := range want {
				for _, re := range res {
					t.Errorf("%s:%d: no error matching %q", name, line, re)
				}
			}
		})
	}
}

// A shift of a constant by a variable count is not a constant: the
// checker once left the constant's value on the shift expression.
func TestShiftOfConstantIsNotConstant(t *testing.T) {
	src := "handler h(n: u8) -> u8 {\n    return (1 as u8) << n\n}\n"
	f, info, err := CheckSource(NewFileSet(), "s.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ret := f.Decls[0].(*HandlerDecl).Body.List[0].(*ReturnStmt)
	if v := info.Types[ret.Results[0]].Value; v != nil {
		t.Errorf("(1 as u8) << n has the constant value %v", v)
	}
}
