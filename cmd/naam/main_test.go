package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"

	"github.com/naam-project/naam/vm/jit"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"naam": func() { os.Exit(doMain(os.Args[1:], os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the CLI scripts in testdata/script: txtar archives of
// files and naam invocations with their expected output. Nodes run in the
// background; waitaddr FILE VAR [PORTVAR] waits for a node's --addr-file
// and puts the address in $VAR (and its port in $PORTVAR); buildobj SRC.naam OUT.nobj compiles an object as
// naamc build does; freeport VAR puts in $VAR a loopback port that was
// free a moment ago (for a --gossip address a script must know).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"waitaddr": waitAddr,
			"buildobj": buildObj,
			"freeport": freePort,
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

func buildObj(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: buildobj SRC.naam OUT.nobj")
	}
	src := ts.ReadFile(args[0])
	obj, err := compiler.Compile(lang.NewFileSet(), filepath.Base(args[0]), []byte(src))
	ts.Check(err)
	b, err := obj.Marshal()
	ts.Check(err)
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), b, 0o644))
}

func freePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	ts.Setenv(args[0], strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
	ln.Close()
}

func waitAddr(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 && len(args) != 3 {
		ts.Fatalf("usage: waitaddr FILE VAR [PORTVAR]")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		if err == nil && strings.HasSuffix(string(b), "\n") {
			addr := strings.TrimSpace(string(b))
			ts.Setenv(args[1], addr)
			if len(args) == 3 {
				_, port, err := net.SplitHostPort(addr)
				ts.Check(err)
				ts.Setenv(args[2], port)
			}
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s: no address after 20 s (%v)", args[0], fmt.Sprint(err))
		}
		time.Sleep(10 * time.Millisecond)
	}
}
