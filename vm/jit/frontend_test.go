//go:build cgo

package jit_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestFrontEndPrograms compiles every front-end test program
// (lang/testdata/ok), which the verifier accepts, and runs each handler on
// random requests and region contents in the interpreter and the JIT,
// checked and unchecked: the outcome, reply, regions, traces, sends and
// forwards must be the same.
func TestFrontEndPrograms(t *testing.T) {
	files, _ := filepath.Glob("../../lang/testdata/ok/*.naam")
	if len(files) == 0 {
		t.Fatal("no programs")
	}
	runs := 0
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			obj, err := compiler.Compile(lang.NewFileSet(), filepath.Base(path), src)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := verifier.VerifyObject(obj, verifier.Config{}); err != nil {
				t.Fatalf("verifier: %v", err)
			}
			insns, err := obj.Insns()
			if err != nil {
				t.Fatal(err)
			}
			var entries []int
			for _, h := range obj.Handlers {
				entries = append(entries, h.Entry)
			}
			for _, unchecked := range []bool{false, true} {
				code, err := jit.Compile(insns, jit.Options{Unchecked: unchecked, Entries: entries})
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(len(src)), 8))
				for _, h := range obj.Handlers {
					for i := range 40 {
						reqLen := []int{0, 1, 7, 8, 16, 32, 64, 200}[i%8]
						req := make([]byte, reqLen)
						for j := range req {
							req[j] = byte(rng.Uint32() >> uint(i%3*8))
						}
						regions := make([][]byte, len(obj.Regions))
						for j, r := range obj.Regions {
							regions[j] = aligned(int(r.Size))
							for k := range regions[j] {
								if i%2 == 0 {
									regions[j][k] = byte(rng.Uint32())
								}
							}
						}
						want := runHandler(t, obj, code, h, req, regions, unchecked, false)
						got := runHandler(t, obj, code, h, req, regions, unchecked, true)
						if got != want {
							t.Fatalf("unchecked=%v handler %s request %x:\n jit    %s\n interp %s", unchecked, h.Name, req, got, want)
						}
						runs++
					}
				}
			}
		})
	}
	t.Logf("%d programs, %d runs identical in both tiers", len(files), runs)
}

// runHandler runs handler h once on copies of regions and describes it.
func runHandler(t *testing.T, obj *bytecode.Object, code *jit.Code, h bytecode.Handler, req []byte, regions [][]byte, unchecked, useJIT bool) string {
	var trace bytes.Buffer
	env := vm.NewLocalEnv(3, &trace)
	opts := vm.Options{Helpers: vm.ABIHelpers(fixedClock{env}), Unchecked: unchecked}
	inv := &vm.Invocation{Entry: h.Entry, Handler: h.ID, SrcNode: 5, Tenant: 6, RequestID: 7, Request: req, Reply: aligned(256)}
	for i, r := range obj.Regions {
		mem := aligned(len(regions[i]))
		copy(mem, regions[i])
		inv.Regions = append(inv.Regions, vm.RegionMem{Data: mem, Writable: r.Writable})
	}
	var res vm.Result
	var err error
	if useJIT {
		m := vm.NewMachine(opts)
		defer m.Close()
		res, err = m.Invoke(code, inv)
	} else {
		res, err = vm.NewMachine(opts).Invoke(code.Program(), inv)
	}
	s := fmt.Sprintf("r0 %d %v code %d insns %d err %q reply %x", res.R0, res.Outcome, res.Code, res.Insns, errText(err), res.Reply)
	if res.Forward != nil {
		s += fmt.Sprintf(" forward %+v", *res.Forward)
	}
	for _, r := range inv.Regions {
		s += fmt.Sprintf(" region %x", r.Data)
	}
	return s + fmt.Sprintf(" trace %q sent %+v forwards %+v", trace.String(), env.Sent, env.Forwards)
}

// aligned returns n zero bytes on an 8-byte boundary (writable segments
// must be).
func aligned(n int) []byte {
	words := make([]uint64, (n+7)/8)
	if n == 0 {
		return []byte{}
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}

// fixedClock is a LocalEnv whose clock stands still, so that two runs of
// a handler that reads it can be compared.
type fixedClock struct{ *vm.LocalEnv }

func (fixedClock) Now() uint64 { return 1_000_000 }
