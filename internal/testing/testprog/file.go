package testprog

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
)

// CompileFile compiles the .naam file at path, named by its base name as
// naamc names it, and fails t on any error: an example's source compiled
// as the example's default configuration compiles it
// (examples/internal/source checks that the two are one object).
func CompileFile(t testing.TB, path string) *bytecode.Object {
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
