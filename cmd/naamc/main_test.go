package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/naam-project/naam/vm/jit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"naamc": func() { os.Exit(doMain(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: each is a txtar
// archive of files and naamc invocations with their expected output.
func TestScripts(t *testing.T) {
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		// $EXAMPLES: the repository's examples, whose .naam files the
		// scripts build as they are.
		Setup: func(env *testscript.Env) error {
			env.Setenv("EXAMPLES", examples)
			return nil
		},
		// [jit]: this build has the JIT tier (cgo).
		Condition: func(cond string) (bool, error) {
			if cond == "jit" {
				return jit.Available() == nil, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	})
}
