//go:build cgo

package jit_test

import (
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestLoops: loops of every shape the translator meets (structured Wasm
// loops, and those it leaves to the dispatch loop: more than one entry,
// overlapping, a local call or an entry point inside; innermost loops with
// a fast copy, their guards passing or failing; the counts say which is
// which) give the
// interpreter's exact outcome, with the budget at the run's length and up
// to 20 short of it, so that the run passes or stops at each jump, call
// and exit near its end.
func TestLoops(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		entries []int // extra entry points compiled in (dispatch targets)
		// Wasm loops, of them with a fast copy, accesses guarded there
		loops, fast, guarded int
	}{
		{"two blocks", `
mov %r0, -1
mov %r3, 0
loop:
mov %r4, %r3
and %r4, 7
lsh %r4, 3
add %r4, %r1
ldxdw %r5, [%r4+0]
jne %r5, 3, next
mov %r0, %r3
next:
add %r3, 1
jlt %r3, 40, loop
exit`, nil, 1, 1, 1},
		{"nested", `
mov %r0, 0
mov %r6, 0
outer:
mov %r7, 0
inner:
add %r0, %r7
add %r7, 1
jlt %r7, 5, inner
jeq %r6, 3, skip
add %r0, 100
skip:
add %r6, 1
jlt %r6, 6, outer
exit`, nil, 2, 0, 0},
		{"break and continue", `
mov %r0, 0
mov %r3, 0
loop:
add %r3, 1
jgt %r3, 50, out
mov %r4, %r3
and %r4, 1
jeq %r4, 0, loop
add %r0, %r3
stxdw [%r1+0], %r0
ja loop
out:
exit`, nil, 1, 1, 1},
		{"two entries", `
mov %r0, 0
mov %r3, 0
jeq %r2, 8, middle
head:
add %r0, 2
middle:
add %r0, 1
add %r3, 1
jlt %r3, 30, head
exit`, nil, 0, 0, 0},
		{"overlapping", `
mov %r0, 0
mov %r3, 0
a:
add %r0, 1
b:
add %r3, 1
jlt %r3, 10, a
add %r0, 7
jlt %r3, 20, b
exit`, nil, 1, 1, 0},
		{"local call inside", `
mov %r0, 0
mov %r6, 0
loop:
call local +4
add %r6, 1
jlt %r6, 12, loop
exit
exit
add %r0, %r6
exit`, nil, 0, 0, 0},
		{"entry inside", `
mov %r0, 0
mov %r3, 0
loop:
add %r0, 3
add %r3, 1
jlt %r3, 25, loop
exit`, []int{3}, 0, 0, 0},
		{"guard fails", `
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r3
and %r4, 15
lsh %r4, 3
add %r4, %r1
ldxdw %r5, [%r4+0]
add %r0, %r5
add %r3, 1
jlt %r3, 20, loop
exit`, nil, 1, 1, 1},
		{"guarded stores", `
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r3
and %r4, 7
lsh %r4, 3
add %r4, %r1
stxdw [%r4+0], %r3
ldxdw %r5, [%r4+0]
add %r0, %r5
jeq %r3, 11, skip
add %r0, 1
skip:
add %r3, 1
jlt %r3, 30, loop
exit`, nil, 1, 1, 2},
		{"guard stepping back", `
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r3
and %r4, 7
lsh %r4, 3
add %r4, %r1
add %r4, -8
ldxdw %r5, [%r4+8]
ldxw %r6, [%r4+12]
add %r0, %r5
add %r0, %r6
add %r3, 1
jlt %r3, 24, loop
exit`, nil, 1, 1, 2},
		{"base written in the loop", `
mov %r0, 0
mov %r3, 0
mov %r7, %r1
loop:
ldxb %r5, [%r7+0]
add %r0, %r5
add %r7, 1
add %r3, 1
jlt %r3, 70, loop
exit`, nil, 1, 0, 0},
		{"scalar added to the base", `
mov %r0, 0
mov %r3, 0
loop:
mov %r5, %r3
and %r5, 7
lsh %r5, 3
mov %r4, %r1
add %r4, %r5
ldxdw %r6, [%r4+0]
add %r0, %r6
add %r3, 1
jlt %r3, 30, loop
exit`, nil, 1, 1, 1},
		{"saved scalar with offsets", `
mov %r0, 0
mov %r3, 0
loop:
mov %r4, %r3
and %r4, 3
lsh %r4, 3
add %r4, %r1
add %r4, 16
ldxdw %r5, [%r4-16]
ldxw %r6, [%r4+4]
stxdw [%r4+8], %r3
mov %r7, %r4
add %r7, -8
ldxb %r8, [%r7+1]
add %r0, %r5
add %r0, %r6
add %r0, %r8
add %r3, 1
jlt %r3, 26, loop
exit`, nil, 1, 1, 4},
		{"fault in a block that carries", `
mov %r0, 0
mov %r3, 0
mov %r7, %r1
loop:
jeq %r3, 5, skip
add %r0, 1
skip:
ldxdw %r5, [%r7+0]
add %r7, 8
add %r0, %r5
add %r3, 1
jlt %r3, 20, loop
exit`, nil, 1, 1, 0},
		{"atomics in a loop", `
mov %r0, 0
mov %r3, 0
loop:
mov %r4, 1
lock add [%r1+8], %r4
lock fetch add [%r1+0], %r4
add %r0, %r4
add %r3, 1
jlt %r3, 16, loop
exit`, nil, 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			p := mustLoad(t, insns)
			mem := make([]byte, 64)
			for i := range 8 {
				mem[8*i] = byte(i)
			}
			full := interpRaw(p, vm.Options{}, mem)
			code, err := jit.Compile(insns, jit.Options{Entries: tt.entries})
			if err != nil {
				t.Fatal(err)
			}
			defer code.Close()
			if st := code.Stats(); st.Loops != tt.loops || st.FastLoops != tt.fast || st.Guarded != tt.guarded {
				t.Errorf("%d Wasm loops, %d with a fast copy, %d accesses guarded; want %d, %d, %d", st.Loops, st.FastLoops, st.Guarded, tt.loops, tt.fast, tt.guarded)
			}
			for short := uint64(0); short <= 20 && short < full.steps; short++ {
				opts := vm.Options{Budget: full.steps - short}
				want := interpRaw(p, opts, mem)
				if got := jitRaw(t, code, opts, mem); !same(got, want) {
					t.Fatalf("budget %d:\n  jit    %v\n  interp %v", opts.Budget, got, want)
				}
			}
		})
	}
}
