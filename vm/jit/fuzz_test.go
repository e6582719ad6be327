//go:build cgo

package jit_test

import (
	"math/rand/v2"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/vm"
)

// FuzzJIT: a fuzzed program that vm.Load accepts gives the same outcome in
// the checked interpreter and the checked JIT (r0 or the same fault, the
// same memory, the same instruction count); one the verifier accepts in raw
// mode does so unchecked too. The budget is small so that loops end.
//
//	go test ./vm/jit -run '^$' -fuzz FuzzJIT -fuzztime 60s
func FuzzJIT(f *testing.F) {
	for _, src := range []string{
		"mov %r0, 1\nexit",
		"ldxdw %r0, [%r1+0]\nexit",
		"mov %r2, 1\nlock fetch add [%r1+8], %r2\nmov %r0, %r2\nexit",
		"mov %r0, 0\nadd %r0, 1\njlt %r0, 10, -2\nexit",
		"mov %r6, 3\ncall local +2\nadd %r0, %r6\nexit\nmov %r0, 10\nexit",
	} {
		insns, err := bytecode.Assemble(src)
		if err != nil {
			f.Fatal(err)
		}
		raw, err := bytecode.Encode(insns)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, []byte("0123456789abcdef"))
	}
	for i := range 4 {
		p := testprog.Random(rand.New(rand.NewPCG(uint64(i), 1)), testprog.RandomOptions{MaxInsns: 24})
		raw, err := bytecode.Encode(p.Insns)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, p.NewMem())
	}
	f.Fuzz(func(t *testing.T, raw, mem []byte) {
		if len(raw) > 64*bytecode.SlotSize || len(mem) > 512 {
			return // long programs only make compiling slow
		}
		insns, err := bytecode.Decode(raw)
		if err != nil {
			return
		}
		if _, err := compareRaw(t, insns, vm.Options{Budget: 5000}, mem); err != nil {
			t.Fatalf("%v\n%s", err, listing(insns))
		}
	})
}
