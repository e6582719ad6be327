package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/naam-project/naam/vm/jit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"naam": func() { os.Exit(doMain(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: txtar archives of
// files and naam invocations with their expected output. Nodes run in the
// background; waitaddr FILE VAR waits for a node's --addr-file and puts
// the address in $VAR.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitaddr": waitAddr,
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

func waitAddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: waitaddr FILE VAR")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			ts.Setenv(args[1], strings.TrimSpace(string(b)))
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s: no address after 20 s (%v)", args[0], fmt.Sprint(err))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
