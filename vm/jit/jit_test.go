//go:build cgo

package jit_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/bench/benchprog"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestBenchmarkPrograms: the four benchmark programs give the Go
// reference's r0 through the JIT, checked and unchecked, after the same
// number of instructions as the interpreter.
func TestBenchmarkPrograms(t *testing.T) {
	for _, p := range benchprog.Benchmarks() {
		t.Run(p.Name, func(t *testing.T) {
			if _, err := verifier.Verify(p.Insns, verifier.Config{Raw: true, MemSize: uint64(p.MemSize), Budget: vm.DefaultBudget}); err != nil {
				t.Fatalf("verifier: %v", err)
			}
			im := vm.NewMachine(vm.Options{})
			want, err := im.RunRaw(mustLoad(t, p.Insns), p.NewMem())
			if err != nil || want != p.Want {
				t.Fatalf("interpreter: r0 = %#x (err %v), want %#x", want, err, p.Want)
			}
			for _, unchecked := range []bool{false, true} {
				code, err := jit.Compile(p.Insns, jit.Options{Unchecked: unchecked})
				if err != nil {
					t.Fatal(err)
				}
				m := vm.NewMachine(vm.Options{})
				// Twice: the second run reuses the instance and its memory.
				for range 2 {
					got, err := m.RunRaw(code, p.NewMem())
					if err != nil || got != p.Want {
						t.Fatalf("unchecked=%v: r0 = %#x (err %v), want %#x", unchecked, got, err, p.Want)
					}
					if m.Executed() != im.Executed() {
						t.Errorf("unchecked=%v: executed %d, interpreter %d", unchecked, m.Executed(), im.Executed())
					}
				}
				st := code.Stats()
				t.Logf("unchecked=%v: %d slots, %d blocks, %d bytes of Wasm, compiled in %v (translate %v, wasmtime %v)",
					unchecked, st.Slots, st.Blocks, st.WasmBytes, st.Total(), st.Translate, st.Compile)
			}
		})
	}
}

func mustLoad(t testing.TB, insns asm.Instructions) *vm.Program {
	t.Helper()
	p, err := vm.Load(insns)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// outcome is everything a raw run can show.
type outcome struct {
	r0    uint64
	err   string
	mem   []byte
	steps uint64
}

func (o outcome) String() string {
	return fmt.Sprintf("r0=%#x err=%q steps=%d mem=% x", o.r0, o.err, o.steps, o.mem)
}

func interpRaw(p *vm.Program, opts vm.Options, mem []byte) outcome {
	m := vm.NewMachine(opts)
	mem = bytes.Clone(mem)
	r0, err := m.RunRaw(p, mem)
	return outcome{r0, errText(err), mem, m.Executed()}
}

func jitRaw(t testing.TB, code *jit.Code, opts vm.Options, mem []byte) outcome {
	m := vm.NewMachine(opts)
	defer m.Close()
	mem = bytes.Clone(mem)
	r0, err := m.RunRaw(code, mem)
	return outcome{r0, errText(err), mem, m.Executed()}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	var f *vm.Fault
	if !errors.As(err, &f) {
		return "not a fault: " + err.Error()
	}
	return err.Error()
}

// compareRaw runs insns in the checked interpreter and the checked JIT,
// and, when the verifier accepts them in raw mode, in the unchecked JIT
// too, and reports the first difference.
func compareRaw(t testing.TB, insns asm.Instructions, opts vm.Options, mem []byte) (verified bool, err error) {
	p, err := vm.Load(insns)
	if err != nil {
		if _, jerr := jit.Compile(insns, jit.Options{}); jerr == nil || jerr.Error() != err.Error() {
			return false, fmt.Errorf("vm.Load: %v; jit.Compile: %v", err, jerr)
		}
		return false, nil
	}
	want := interpRaw(p, opts, mem)
	code, err := jit.Compile(insns, jit.Options{})
	if err != nil {
		return false, fmt.Errorf("compile: %v", err)
	}
	defer code.Close()
	if got := jitRaw(t, code, opts, mem); !same(got, want) {
		return false, fmt.Errorf("checked JIT differs:\n  jit    %v\n  interp %v", got, want)
	}
	if _, err := verifier.Verify(insns, verifier.Config{Raw: true, MemSize: uint64(len(mem)), Budget: opts.Budget}); err != nil {
		return false, nil
	}
	fast, err := jit.Compile(insns, jit.Options{Unchecked: true})
	if err != nil {
		return true, fmt.Errorf("compile unchecked: %v", err)
	}
	defer fast.Close()
	// The unchecked interpreter is the reference here: both skip checks.
	opts.Unchecked = true
	want = interpRaw(p, opts, mem)
	if got := jitRaw(t, fast, opts, mem); !same(got, want) {
		return true, fmt.Errorf("unchecked JIT differs:\n  jit    %v\n  interp %v", got, want)
	}
	return true, nil
}

func same(a, b outcome) bool {
	return a.r0 == b.r0 && a.err == b.err && a.steps == b.steps && bytes.Equal(a.mem, b.mem)
}

// kernelDiffSeed is the first seed of TestKernelDifferential's default
// corpus.
const kernelDiffSeed = 0x4e41414d

// TestRandomPrograms runs the kernel differential test's generated
// programs (testprog.Random: the whole ISA, local calls, all atomics; r0–r9
// and the stack area end up in memory) through the interpreter and the JIT
// and requires identical outcomes: half of them the first programs of the
// kernel differential corpus itself (NAAM_JIT_DIFF_N=20000 covers its
// default 10,000), half VM-only ones (division by an immediate zero,
// oversized shifts).
func TestRandomPrograms(t *testing.T) {
	n := 400
	if s := os.Getenv("NAAM_JIT_DIFF_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("NAAM_JIT_DIFF_N=%q: want a positive count", s)
		}
		n = v
	}
	verified, budgetFaults := 0, 0
	for i := range n {
		// Even i: program i/2 of the kernel differential test's default
		// corpus (its seed and options; tests/kernel_diff_test.go). Odd i:
		// the VM-only forms, bodies of 16 to 95 instructions.
		seed, opts := kernelDiffSeed+uint64(i/2), testprog.RandomOptions{}
		if i%2 == 1 {
			seed, opts = uint64(i), testprog.RandomOptions{VMOnly: true, MaxInsns: 16 + i%80}
		}
		p := testprog.Random(rand.New(rand.NewPCG(seed, 0)), opts)
		var vmOpts vm.Options
		if i%5 == 4 {
			// A budget at the run's length or up to 3 short of it, so that the
			// run just passes or stops at its last jump, call or exit.
			steps := interpRaw(mustLoad(t, p.Insns), vmOpts, p.NewMem()).steps
			vmOpts.Budget = steps - uint64(i%4)
		}
		v, err := compareRaw(t, p.Insns, vmOpts, p.NewMem())
		if vmOpts.Budget != 0 && interpRaw(mustLoad(t, p.Insns), vmOpts, p.NewMem()).err != "" {
			budgetFaults++
		}
		if err != nil {
			t.Fatalf("program %d (seed %d, VMOnly=%v): %v\n%s", i, seed, opts.VMOnly, err, listing(p.Insns))
		}
		if v {
			verified++
		}
	}
	t.Logf("%d random programs identical in both tiers (%d ending in a budget fault), %d of them verified and compared unchecked too (NAAM_JIT_DIFF_N sets the count)", n, budgetFaults, verified)
	if verified < n/4 {
		t.Errorf("only %d of %d programs verified: the unchecked comparison is hardly exercised", verified, n)
	}
}

func listing(insns asm.Instructions) string {
	s, err := bytecode.Disassemble(insns)
	if err != nil {
		return err.Error()
	}
	return s
}

// TestFaults: each kind of fault, and the semantics the RFC leaves open,
// give the interpreter's exact result: r0, or the fault's text (kind,
// slot, address and segment), and the instruction count.
func TestFaults(t *testing.T) {
	tests := []struct {
		name   string
		src    string
		mem    int
		budget uint64
		want   string // substring of the fault, or "r0=0x…" for a result
	}{
		{"load past the end", "ldxdw %r0, [%r1+4]\nexit", 8, 0, "insn 0: memory access out of bounds: 8-byte load at 0x300000004 (request+4 (length 8))"},
		{"load below the start", "ldxb %r0, [%r1-1]\nexit", 8, 0, "insn 0: memory access out of bounds"},
		{"null pointer", "mov %r2, 0\nldxw %r0, [%r2+0]\nexit", 8, 0, "insn 1: memory access out of bounds: 4-byte load at 0x0 (null+0, not mapped)"},
		{"segment 300", "lddw %r2, 0x12c00000000\nstb [%r2+0], 1\nexit", 8, 0, "insn 2: memory access out of bounds: 1-byte store at 0x12c00000000 (no segment)"},
		{"stack overflow below the frame", "stdw [%r10-4104], 1\nexit", 0, 0, "insn 0: memory access out of bounds"},
		{"stack above the top", "ldxdw %r0, [%r10+0]\nexit", 0, 0, "insn 0: memory access out of bounds: 8-byte load at 0x100001000 (stack+4096 (length 4096))"},
		{"misaligned atomic", "mov %r2, 1\nlock add32 [%r1+2], %r2\nexit", 8, 0, "insn 1: misaligned atomic access: 4-byte atomic at 0x300000002"},
		{"misaligned atomic on the stack", "mov %r2, 1\nlock add [%r10-12], %r2\nexit", 0, 0, "insn 1: misaligned atomic access: 8-byte atomic at 0x100000ff4 (stack+4084 (length 4096))"},
		{"stack atomic in a callee frame", "call local +2\nexit\nexit\nmov %r2, 5\nstxdw [%r10-512], %r2\nlock fetch add [%r10-512], %r2\nmov %r0, %r2\nexit", 0, 0, "r0=0x5"},
		{"stack below the frame, in bounds", "stdw [%r10-520], 9\nldxdw %r0, [%r10-520]\nexit", 0, 0, "r0=0x9"},
		{"atomic out of bounds", "mov %r2, 1\nlock xchg32 [%r1+8], %r2\nexit", 8, 0, "insn 1: memory access out of bounds: 4-byte atomic"},
		{"budget on a back edge", "mov %r0, 0\nadd %r0, 1\nja -2\nexit", 0, 1000, "insn 2: instruction budget exhausted"},
		{"budget at exit", "mov %r0, 1\nmov %r0, 2\nmov %r0, 3\nexit", 0, 3, "insn 3: instruction budget exhausted"},
		{"budget exact", "mov %r0, 1\nmov %r0, 2\nmov %r0, 3\nexit", 0, 4, "r0=0x3"},
		{"call depth", "call local -1\nexit", 0, 0, "insn 0: call depth exceeded"},
		{"fell off", "mov %r0, 1", 0, 0, "insn 1: execution fell off the end of the program"},
		{"fell off after a jump", "mov %r0, 1\njeq %r0, 1, +1\nexit\nmov %r0, 2", 0, 0, "insn 4: execution fell off"},
		{"unknown helper", "call 9\nexit", 0, 0, "insn 0: helper call failed: unknown helper 9"},
		{"callx", "mov %r1, 7\nmov %r3, 5\ncall %r3\nexit", 0, 0, "r0=0x7"},
		{"div by zero", "mov %r0, 7\nmov %r2, 0\ndiv %r0, %r2\nexit", 0, 0, "r0=0x0"},
		{"mod by zero", "mov %r0, 7\nmov %r2, 0\nmod %r0, %r2\nexit", 0, 0, "r0=0x7"},
		{"mod32 by zero", "lddw %r0, 0x100000007\nmov %r2, 0\nmod32 %r0, %r2\nexit", 0, 0, "r0=0x7"},
		{"sdiv INT_MIN by -1", "lddw %r0, 0x8000000000000000\nmov %r2, -1\nsdiv %r0, %r2\nexit", 0, 0, "r0=0x8000000000000000"},
		{"smod INT_MIN by -1", "lddw %r0, 0x8000000000000000\nsmod %r0, -1\nexit", 0, 0, "r0=0x0"},
		{"sdiv32 INT_MIN by -1", "mov32 %r0, 0x80000000\nmov32 %r2, -1\nsdiv32 %r0, %r2\nexit", 0, 0, "r0=0x80000000"},
		{"smod32 negative", "mov32 %r0, -7\nsmod32 %r0, 3\nexit", 0, 0, "r0=0xffffffff"},
		{"shift masked", "mov %r0, 1\nmov %r2, 65\nlsh %r0, %r2\nexit", 0, 0, "r0=0x2"},
		{"arsh32", "mov32 %r0, 0x80000000\narsh32 %r0, 4\nexit", 0, 0, "r0=0xf8000000"},
		{"be64", "lddw %r0, 0x0102030405060708\nbe64 %r0\nexit", 0, 0, "r0=0x807060504030201"},
		{"be16 clears", "lddw %r0, 0x0102030405060708\nbe16 %r0\nexit", 0, 0, "r0=0x807"},
		{"le32 truncates", "lddw %r0, 0x0102030405060708\nle32 %r0\nexit", 0, 0, "r0=0x5060708"},
		{"movsx8", "mov %r2, 0x80\nmovsx864 %r0, %r2\nexit", 0, 0, "r0=0xffffffffffffff80"},
		{"movsx16 32", "mov %r2, 0x8000\nmovsx1632 %r0, %r2\nexit", 0, 0, "r0=0xffff8000"},
		{"ldxsb", "stb [%r10-1], 0xfe\nldxsb %r0, [%r10-1]\nexit", 0, 0, "r0=0xfffffffffffffffe"},
		{"cmpxchg miss", "stdw [%r10-8], 5\nmov %r0, 4\nmov %r2, 9\nlock cmpxchg [%r10-8], %r2\nldxdw %r3, [%r10-8]\nlsh %r0, 8\nor %r0, %r3\nexit", 0, 0, "r0=0x505"},
		{"cmpxchg32 hit", "stw [%r10-8], 5\nmov %r0, 5\nmov %r2, 9\nlock cmpxchg32 [%r10-8], %r2\nldxw %r3, [%r10-8]\nlsh %r0, 8\nor %r0, %r3\nexit", 0, 0, "r0=0x509"},
		{"local call keeps r6", "mov %r6, 3\ncall local +2\nadd %r0, %r6\nexit\nmov %r6, 100\nmov %r0, 10\nexit", 0, 0, "r0=0xd"},
		{"callee frame", "stdw [%r10-8], 1\ncall local +2\nldxdw %r0, [%r10-8]\nexit\nmov %r0, 0\nstdw [%r10-8], 2\nexit", 0, 0, "r0=0x1"},
		{"gotol", "mov %r0, 1\nja32 +1\nmov %r0, 2\nexit", 0, 0, "r0=0x1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			opts := vm.Options{Budget: tt.budget, Helpers: vm.RawHelpers()}
			mem := make([]byte, tt.mem)
			p := mustLoad(t, insns)
			want := interpRaw(p, opts, mem)
			code, err := jit.Compile(insns, jit.Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := jitRaw(t, code, opts, mem)
			if !same(got, want) {
				t.Fatalf("jit    %v\ninterp %v", got, want)
			}
			have := got.err
			if have == "" {
				have = fmt.Sprintf("r0=%#x", got.r0)
			}
			if !strings.Contains(have, tt.want) {
				t.Errorf("got %s, want %s", have, tt.want)
			}
		})
	}
}

// TestCompileErrors: what Compile refuses names the slot.
func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name  string
		insns asm.Instructions
		opts  jit.Options
		want  string
	}{
		{"jump outside", asm.Instructions{asm.Ja.Label("x"), asm.Return()}, jit.Options{}, "insn 0"},
		{"entry not an instruction", asm.Instructions{asm.LoadImm(asm.R0, 1, asm.DWord), asm.Return()}, jit.Options{Entries: []int{1}}, "entry point 1"},
		{"entry past the end", asm.Instructions{asm.Return()}, jit.Options{Entries: []int{5}}, "entry point 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := jit.Compile(tt.insns, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

// TestNoAllocs: a run through the JIT allocates nothing, raw or under the
// handler ABI, once the machine has its instance.
func TestNoAllocs(t *testing.T) {
	p := benchprog.FNV1a()
	code, err := jit.Compile(p.Insns, jit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer code.Close()
	m := vm.NewMachine(vm.Options{})
	defer m.Close()
	mem := p.NewMem()
	if n := testing.AllocsPerRun(100, func() { m.RunRaw(code, mem) }); n != 0 {
		t.Errorf("RunRaw: %.1f allocations per run, want 0", n)
	}
	echo, err := bytecode.Assemble(handlerCases[0].src) // the echo handler
	if err != nil {
		t.Fatal(err)
	}
	echoCode, err := jit.Compile(echo, jit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer echoCode.Close()
	inv := &vm.Invocation{Request: make([]byte, 16), Reply: make([]byte, 64)}
	if res, err := m.Invoke(echoCode, inv); err != nil || res.R0 != 8 {
		t.Fatalf("echo: %+v, %v", res, err)
	}
	if n := testing.AllocsPerRun(100, func() { m.Invoke(echoCode, inv) }); n != 0 {
		t.Errorf("Invoke: %.1f allocations per run, want 0", n)
	}
}
