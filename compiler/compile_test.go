package compiler_test

import (
	"os"
	"path/filepath"
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
