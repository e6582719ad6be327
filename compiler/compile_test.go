package compiler_test

import (
	"errors"
	"go/constant"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/verifier"
)

// compileFile compiles a .naam file and fails the test on any error.
func compileFile(t testing.TB, path string) *bytecode.Object {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), filepath.Base(path), src)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return obj
}

// verify runs the verifier on obj as a node would at install time.
func verify(obj *bytecode.Object) (*verifier.Report, error) {
	return verifier.VerifyObject(obj, verifier.Config{})
}

// Every program the front end accepts compiles to an object the verifier
// accepts.
func TestFrontEndCorpusVerifies(t *testing.T) {
	files, _ := filepath.Glob("../lang/testdata/ok/*.naam")
	if len(files) == 0 {
		t.Fatal("no programs")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			obj := compileFile(t, path)
			rep, err := verify(obj)
			if err != nil {
				insns, _ := obj.Insns()
				text, _ := bytecode.Disassemble(insns)
				t.Fatalf("verifier: %+v\n%s", err, text)
			}
			t.Logf("%d slots, %s", len(obj.Code)/8, rep)
		})
	}
}

// CompileWith's overrides give the code that the edited source would:
// the same instructions, regions and layouts as a file that declares the
// overriding values.
func TestCompileWithOverrides(t *testing.T) {
	const src = "const N = 4\nconst W = N * 8\nregion r: [u64; N] rw\n\nhandler h(i: u64) -> (v: u64, w: u64) {\n    return r[i % N], W\n}\n"
	edited := strings.Replace(src, "const N = 4", "const N = 32", 1)
	conf := lang.Config{Constants: map[string]constant.Value{"N": constant.MakeInt64(32)}}
	got, err := compiler.CompileWith(conf, lang.NewFileSet(), "o.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want, err := compiler.Compile(lang.NewFileSet(), "o.naam", []byte(edited))
	if err != nil {
		t.Fatal(err)
	}
	if got.Sources[0].Text != src {
		t.Error("the object does not keep the source as written")
	}
	got.Sources, want.Sources = nil, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("overridden object\n%+v\nwant the edited source's\n%+v", got, want)
	}
	if got.Regions[0].Size != 32*8 {
		t.Errorf("region of %d bytes", got.Regions[0].Size)
	}
	_, err = compiler.CompileWith(lang.Config{Constants: map[string]constant.Value{"M": constant.MakeInt64(1)}}, nil, "o.naam", []byte(src))
	var oe *lang.OverrideError
	if !errors.As(err, &oe) || oe.Name != "M" {
		t.Errorf("an undeclared override: %v", err)
	}
}
