//go:build cgo

package jit_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
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

// TestRandomLoops runs generated loops (masked loads and stores at the
// memory's base plus an index, with offsets that may step outside it,
// the index added either way round, a pointer walking off the memory,
// forward jumps inside the body, early exits) through the interpreter
// and the JIT, checked and, where the verifier accepts them, unchecked,
// at the run's budget and short of it: the fast copies' guards, saved
// scalars and carried counts give the interpreter's outcome, its faults
// and its instruction count.
func TestRandomLoops(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 0x100b5))
	n := 150
	if testing.Short() {
		n = 40
	}
	mem := make([]byte, 128)
	for i := range mem {
		mem[i] = byte(i*7 + 3)
	}
	for i := range n {
		src := randomLoop(rng)
		insns, err := bytecode.Assemble(src)
		if err != nil {
			t.Fatalf("program %d: %v\n%s", i, err, src)
		}
		p := mustLoad(t, insns)
		full := interpRaw(p, vm.Options{}, mem)
		for _, short := range []uint64{0, 1, 2, 3, 5 + rng.Uint64N(20), full.steps / 2} {
			if short >= full.steps {
				continue
			}
			opts := vm.Options{Budget: full.steps - short}
			if _, err := compareRaw(t, insns, opts, mem); err != nil {
				t.Fatalf("program %d, budget %d: %v\n%s", i, opts.Budget, err, src)
			}
		}
	}
}

// randomLoop returns the source of a loop of a few random items.
func randomLoop(rng *rand.Rand) string {
	var b strings.Builder
	b.WriteString("mov %r0, 0\nmov %r3, 0\nmov %r7, %r1\nmov %r9, 5\nloop:\n")
	items := 1 + rng.IntN(5)
	label := 0
	sizes := []string{"b", "h", "w", "dw"}
	for range items {
		mask := []int{3, 7, 15, 31}[rng.IntN(4)]
		shift := rng.IntN(4)
		off := rng.IntN(24) - 8
		if rng.IntN(3) == 0 {
			off = rng.IntN(160) - 16 // may leave the memory
		}
		size := sizes[rng.IntN(4)]
		switch rng.IntN(8) {
		case 0, 1: // a masked index added to the base
			fmt.Fprintf(&b, "mov %%r4, %%r3\nand %%r4, %d\nlsh %%r4, %d\nadd %%r4, %%r1\n", mask, shift)
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, "add %%r4, %d\n", rng.IntN(16)-8)
			}
			fmt.Fprintf(&b, "ldx%s %%r5, [%%r4%+d]\nadd %%r0, %%r5\n", size, off)
		case 2: // the base added to the index's register the other way round
			fmt.Fprintf(&b, "mov %%r5, %%r3\nand %%r5, %d\nlsh %%r5, %d\nmov %%r4, %%r1\nadd %%r4, %%r5\nldx%s %%r6, [%%r4%+d]\nxor %%r0, %%r6\n", mask, shift, size, off)
		case 3: // a store at a masked index
			fmt.Fprintf(&b, "mov %%r4, %%r3\nand %%r4, %d\nlsh %%r4, %d\nadd %%r4, %%r1\nstx%s [%%r4%+d], %%r3\n", mask, shift, size, off)
		case 4: // a pointer the loop moves, walking off the memory
			fmt.Fprintf(&b, "ldx%s %%r5, [%%r7+0]\nadd %%r7, %d\nadd %%r0, %%r5\n", size, 1+rng.IntN(8))
		case 5: // a forward jump inside the body
			label++
			fmt.Fprintf(&b, "jeq %%r3, %d, skip%d\nadd %%r0, %d\nmul %%r0, 3\nskip%d:\n", rng.IntN(12), label, rng.IntN(100), label)
		case 6: // an early exit
			fmt.Fprintf(&b, "jgt %%r0, %d, out\n", rng.IntN(5000))
		case 7: // a skip over one instruction, and arithmetic
			label++
			fmt.Fprintf(&b, "ja skip%d\nadd %%r0, 99\nskip%d:\nadd %%r9, %%r3\n", label, label)
		}
	}
	fmt.Fprintf(&b, "add %%r3, 1\njlt %%r3, %d, loop\nout:\nadd %%r0, %%r9\nexit\n", 1+rng.IntN(40))
	return b.String()
}
