package verifier

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/verifygen"
)

// deterministic are the default limits without the clock: tests pin what
// the verifier decides, and a loaded machine (or the race detector) must
// not change it; the benchmark measures the time.
var deterministic = Limits{Time: -1}

// within fails t if a verification used more than lim allows.
func within(t *testing.T, m *meter, lim Limits) {
	t.Helper()
	lim = lim.withDefaults()
	u := m.used
	if u.Steps > lim.Steps || u.States > lim.States || u.Bytes > lim.Bytes {
		t.Errorf("used steps %d, states %d, bytes %d; the limits are %d, %d, %d", u.Steps, u.States, u.Bytes, lim.Steps, lim.States, lim.Bytes)
	}
}

// TestShapesAccepted: every shape at sizes a handler may well have is
// accepted under the default limits with exactly the bound its generator
// computed, with every call sharing its function's context too (the
// safe twins of the worst shapes).
func TestShapesAccepted(t *testing.T) {
	for _, tc := range []struct {
		shape verifygen.Shape
		sizes []int
		fans  []int
	}{
		{verifygen.ShapeStraight, []int{10, 1000, 100_000}, nil},
		{verifygen.ShapeBranchChain, []int{10, 1000, 20_000}, nil},
		{verifygen.ShapeDiamonds, []int{10, 1000, 20_000}, nil},
		{verifygen.ShapeStackDiamonds, []int{100, 1000, 20_000}, nil},
		{verifygen.ShapeCallFanOut, []int{0}, []int{1, 2, 4, 8}},
		{verifygen.ShapeCallSwitch, []int{0}, []int{1, 3, 8, 64}},
		{verifygen.ShapeLoopChain, []int{10, 1000, 10_000}, nil},
		{verifygen.ShapeLoopBody, []int{10, 100, 1000}, nil},
		{verifygen.ShapeConstants, []int{10, 1000, 100_000}, nil},
		{verifygen.ShapeSharedTail, []int{10, 100}, []int{2, 10, 100}},
		{verifygen.ShapeShifts, []int{10, 1000}, nil},
		{verifygen.ShapeLoopAround, []int{10, 1000, 100_000}, nil},
	} {
		fans := tc.fans
		if fans == nil {
			fans = []int{0}
		}
		for _, n := range tc.sizes {
			for _, fan := range fans {
				p := verifygen.Build(tc.shape, n, fan)
				t.Run(fmt.Sprintf("%s-%d-fan%d", tc.shape, n, fan), func(t *testing.T) {
					for _, lim := range []Limits{deterministic, {Time: -1, CallStrings: -1}} {
						rep, m, err := verify(p.Insns, Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget, Limits: lim})
						if err != nil {
							t.Fatalf("call strings %d: %v", lim.CallStrings, err)
						}
						if rep.MaxInsns != p.MaxInsns {
							t.Errorf("call strings %d: bound %d, want %d", lim.CallStrings, rep.MaxInsns, p.MaxInsns)
						}
						within(t, m, lim)
					}
				})
			}
		}
	}
}

// TestCallFanOut: eight levels of functions, each calling the next K
// times in a row, make K^7 chains of call sites; analysing one context
// per chain took gigabytes at K = 4. With contexts shared per function
// and depth the analysis stays small, and the bound is the exact count.
// Past the instruction budget the rejection is the budget's, not the
// verifier's.
func TestCallFanOut(t *testing.T) {
	for _, fan := range []int{2, 3, 4, 5, 6, 7, 8} {
		p := verifygen.Build(verifygen.ShapeCallFanOut, 0, fan)
		t.Run(fmt.Sprint(fan), func(t *testing.T) {
			rep, m, err := verify(p.Insns, Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget, Limits: deterministic})
			if err != nil {
				t.Fatal(err)
			}
			if rep.MaxInsns != p.MaxInsns {
				t.Errorf("bound %d, want %d", rep.MaxInsns, p.MaxInsns)
			}
			// Call strings would need a state per block per chain.
			chains := 1
			for range 7 {
				chains *= fan
			}
			if fan >= 4 && m.used.States > chains {
				t.Errorf("%d states for %d chains of call sites: the contexts are not shared", m.used.States, chains)
			}
			within(t, m, deterministic)
			_, err = Verify(p.Insns, Config{Raw: true, MemSize: p.MemSize, Limits: deterministic})
			var verr *Error
			switch {
			case p.MaxInsns <= DefaultBudget && err != nil:
				t.Errorf("default budget: %v", err)
			case p.MaxInsns > DefaultBudget && (!errors.As(err, &verr) || verr.Code != CodeBudget):
				t.Errorf("default budget: got %v, want a %s rejection", err, CodeBudget)
			}
		})
	}
}

// TestCallContextsSameBound: for call trees small enough to analyse one
// context per chain of call sites, sharing gives the same verdict and
// bound as call strings.
func TestCallContextsSameBound(t *testing.T) {
	for _, tc := range []struct {
		shape verifygen.Shape
		fan   int
	}{
		{verifygen.ShapeCallFanOut, 2}, {verifygen.ShapeCallFanOut, 3},
		{verifygen.ShapeCallSwitch, 2}, {verifygen.ShapeCallSwitch, 3},
	} {
		p := verifygen.Build(tc.shape, 0, tc.fan)
		var bounds []uint64
		for _, cs := range []int{1 << 20, DefaultCallStrings, 1, -1} {
			rep, err := Verify(p.Insns, Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget, Limits: Limits{Time: -1, CallStrings: cs}})
			if err != nil {
				t.Fatalf("%s fan %d, call strings %d: %v", tc.shape, tc.fan, cs, err)
			}
			bounds = append(bounds, rep.MaxInsns)
		}
		for _, b := range bounds {
			if b != p.MaxInsns {
				t.Errorf("%s fan %d: bounds %v with 2^20, %d, 1 and no call strings; want %d", tc.shape, tc.fan, bounds, DefaultCallStrings, p.MaxInsns)
			}
		}
	}
}

// TestSharedContextCaller: a function shared by callers whose frames
// differ gives each its own frames back, but for the ones it wrote,
// which come back as the join over its callers.
func TestSharedContextCaller(t *testing.T) {
	// f is called from two sites with different stacks; it writes only
	// its own frame. After each call the caller reads what it stored
	// before, which the other caller never stored.
	src := `
stdw [%r10-8], 1
mov %r1, 5
call local f
ldxdw %r0, [%r10-8]
stdw [%r10-16], 2
mov %r1, 6
call local f
ldxdw %r2, [%r10-16]
add %r0, %r2
exit
f:
stxdw [%r10-8], %r1
ldxdw %r0, [%r10-8]
exit`
	// g writes through the pointer it is given: the caller's frame comes
	// back as the join of its callers' frames, so bytes only one caller
	// stored are no longer known to be written.
	written := `
stdw [%r10-8], 1
mov %r1, %r10
add %r1, -8
call local g
stdw [%r10-16], 2
mov %r1, %r10
add %r1, -8
call local g
ldxdw %r0, [%r10-16]
exit
g:
stdw [%r1+0], 7
mov %r0, 0
exit`
	for _, tc := range []struct {
		name, src string
		cs        int
		wantCode  Code
	}{
		{"unwritten frames, call strings", src, 0, ""},
		{"unwritten frames, shared", src, -1, ""},
		{"written frame, call strings", written, 0, ""},
		{"written frame, shared", written, -1, CodeUninitStack},
	} {
		insns, err := bytecode.Assemble(tc.src)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Verify(insns, Config{Raw: true, MemSize: 8, Limits: Limits{CallStrings: tc.cs}})
		var verr *Error
		switch {
		case tc.wantCode == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.wantCode != "" && (!errors.As(err, &verr) || verr.Code != tc.wantCode):
			t.Errorf("%s: got %v, want %s", tc.name, err, tc.wantCode)
		}
	}
}

// TestLimitsRefuse: each limit, when a program needs more, refuses it with
// CodeVerifierBudget and a message that names the limit and its size.
func TestLimitsRefuse(t *testing.T) {
	chain := verifygen.Build(verifygen.ShapeBranchChain, 5000, 0)
	fan := verifygen.Build(verifygen.ShapeCallFanOut, 0, 8)
	alu := verifygen.Build(verifygen.ShapeShifts, 20_000, 0).Insns
	for _, tc := range []struct {
		name  string
		insns asm.Instructions
		lim   Limits
		want  string
	}{
		{"states", chain.Insns, Limits{States: 100, Time: -1}, "verifier budget: 100 states"},
		{"states of call contexts", fan.Insns, Limits{States: 300, Time: -1}, "verifier budget: 300 states"},
		{"bytes of states", chain.Insns, Limits{Bytes: 1 << 20, Time: -1}, "verifier budget: 1048576 bytes"},
		{"bytes of the graph", verifygen.Build(verifygen.ShapeBranchChain, 200_000, 0).Insns, Limits{Bytes: 4 << 20, Time: -1}, "verifier budget: 4194304 bytes"},
		{"steps", chain.Insns, Limits{Steps: 10_000, Time: -1}, "verifier budget: 10000 steps"},
		{"steps of call contexts", fan.Insns, Limits{Steps: 50_000, Time: -1}, "verifier budget: 50000 steps"},
		{"steps of variable shifts", alu, Limits{Time: -1}, fmt.Sprintf("verifier budget: %d steps", DefaultSteps)},
		{"time", alu, Limits{Time: time.Nanosecond}, "verifier budget: 1ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, m, err := verify(tc.insns, Config{Raw: true, MemSize: 64, Budget: math.MaxInt64, Limits: tc.lim})
			var verr *Error
			if !errors.As(err, &verr) || verr.Code != CodeVerifierBudget {
				t.Fatalf("got %v, want a %s rejection", err, CodeVerifierBudget)
			}
			if !strings.HasPrefix(verr.Msg, tc.want) {
				t.Errorf("message %q, want it to start with %q", verr.Msg, tc.want)
			}
			if tc.lim.Time >= 0 {
				within(t, m, tc.lim)
			}
		})
	}
}

// TestBudgetBeforeAllocation: a limit refuses a program before the memory
// it guards is allocated: a control-flow graph too large for Bytes is
// never built.
func TestBudgetBeforeAllocation(t *testing.T) {
	p := verifygen.Build(verifygen.ShapeBranchChain, 1_000_000, 0)
	lim := Limits{Bytes: 24 << 20, Time: -1}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, m, err := verify(p.Insns, Config{Raw: true, MemSize: 64, Limits: lim})
	runtime.ReadMemStats(&after)
	var verr *Error
	if !errors.As(err, &verr) || verr.Code != CodeVerifierBudget || !strings.Contains(verr.Msg, "bytes") {
		t.Fatalf("got %v, want a %s rejection for bytes", err, CodeVerifierBudget)
	}
	within(t, m, lim)
	// Validation (outside the limits) and the slot tables may be
	// allocated; the blocks, 1,000,000 of them, may not.
	allocated := after.TotalAlloc - before.TotalAlloc
	if limit := uint64(lim.Bytes) + 8*uint64(len(p.Insns)) + 1<<20; allocated > limit {
		t.Errorf("allocated %d bytes before refusing, more than %d", allocated, limit)
	}
}

// TestAccountingCoversHeap: what the meter accounts is at least what the
// analysis really keeps: its live heap after the walk, with every state
// still held, is within what it reserved (plus the slot tables and a
// margin for the runtime's rounding).
func TestAccountingCoversHeap(t *testing.T) {
	for _, tc := range []shapeSize{
		{verifygen.ShapeBranchChain, 20_000, 0},
		{verifygen.ShapeStackDiamonds, 5_000, 0},
		{verifygen.ShapeCallFanOut, 0, 4},
		{verifygen.ShapeCallSwitch, 0, 16},
		{verifygen.ShapeLoopChain, 5_000, 0},
	} {
		p := verifygen.Build(tc.shape, tc.n, tc.fan)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m := newMeter(deterministic)
		prog := newProgram(p.Insns)
		g, err := buildCFG(prog, []int{0}, m)
		if err != nil {
			t.Fatal(err)
		}
		funcs, err := g.structure([]int{0}, m)
		if err != nil {
			t.Fatal(err)
		}
		c, err := newChecker(prog, g, funcs, Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget}, m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.analyzeEntry(Entry{Name: "main"}); err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		live := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		runtime.KeepAlive(c)
		slots := int64(len(p.Insns)) * (slotCost + 8)
		if limit := m.used.Bytes + slots + 1<<20; live > limit {
			t.Errorf("%s: %d bytes live after the walk, the meter accounted %d (+%d for the slots)", tc.shape, live, m.used.Bytes, slots)
		}
		t.Logf("%s: %d bytes live, %d accounted", tc.shape, live, m.used.Bytes)
	}
}

// TestWorstShapesWithinLimits: every worst shape of the benchmark, up to
// the install size limit, is accepted or refused for a limit, and no
// verification uses more than the limits allow.
func TestWorstShapesWithinLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("programs of up to 2,000,000 instructions; run without -short")
	}
	for _, ws := range worstShapes {
		p := verifygen.Build(ws.shape, ws.n, ws.fan)
		rep, m, err := verify(p.Insns, Config{Raw: true, MemSize: p.MemSize, Budget: p.Budget, Limits: deterministic})
		var verr *Error
		switch {
		case err == nil:
			if rep.MaxInsns != p.MaxInsns {
				t.Errorf("%s %d/%d: bound %d, want %d", ws.shape, ws.n, ws.fan, rep.MaxInsns, p.MaxInsns)
			}
		case !errors.As(err, &verr) || verr.Code != CodeVerifierBudget:
			t.Errorf("%s %d/%d: %v", ws.shape, ws.n, ws.fan, err)
		}
		within(t, m, deterministic)
	}
}

// TestVerifyObjectDefaultLimits: an object verified with a zero Config,
// as nicrt's install does it, runs under the default limits.
func TestVerifyObjectDefaultLimits(t *testing.T) {
	// A handler: a context field, then more branches than states.
	insns := asm.Instructions{asm.LoadMem(asm.R0, asm.R1, 40, asm.DWord)}
	for i := range 2 * DefaultStates {
		insns = append(insns, asm.Instruction{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R0, Constant: int64(i % 256)})
	}
	insns = append(insns, asm.Return())
	code, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	obj := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Code: code,
		Handlers: []bytecode.Handler{{Name: "h", Entry: 0}}}
	_, err = VerifyObject(obj, Config{Budget: 1 << 40})
	var verr *Error
	if !errors.As(err, &verr) || verr.Code != CodeVerifierBudget {
		t.Fatalf("got %v, want a %s rejection", err, CodeVerifierBudget)
	}
	defaults := false // which limit stops it first depends on the machine's load
	for _, w := range []string{fmt.Sprintf("%d states", DefaultStates), fmt.Sprintf("%d steps", DefaultSteps), DefaultTime.String()} {
		defaults = defaults || strings.HasPrefix(verr.Msg, "verifier budget: "+w+":")
	}
	if !defaults {
		t.Errorf("message %q names no default limit", verr.Msg)
	}
	if got := ObjectConfig(obj, Config{Limits: Limits{States: 7}}).Limits.States; got != 7 {
		t.Errorf("ObjectConfig dropped the limits: states %d", got)
	}
}
