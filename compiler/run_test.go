package compiler_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/vm"
)

// runSource compiles src, verifies it and runs handler once in the
// checked VM with the request req and one zeroed region per declared
// one; it returns the result and the object (for its line table).
func runSource(t *testing.T, src, handler string, req []byte) (vm.Result, *bytecode.Object) {
	t.Helper()
	obj, err := compiler.Compile(lang.NewFileSet(), "t.naam", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verify(obj); err != nil {
		t.Fatal(err)
	}
	insns, err := obj.Insns()
	if err != nil {
		t.Fatal(err)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		t.Fatal(err)
	}
	var h *bytecode.Handler
	for i := range obj.Handlers {
		if obj.Handlers[i].Name == handler {
			h = &obj.Handlers[i]
		}
	}
	if h == nil {
		t.Fatalf("no handler %s", handler)
	}
	inv := &vm.Invocation{Entry: h.Entry, Request: req, Reply: make([]byte, 64)}
	for _, r := range obj.Regions {
		inv.Regions = append(inv.Regions, vm.RegionMem{Data: make([]byte, (r.Size+7)&^7)[:r.Size], Writable: r.Writable})
	}
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, nil))})
	res, err := m.Invoke(prog, inv)
	if err != nil {
		t.Fatal(err)
	}
	return res, obj
}

func le64(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

func TestMinMax(t *testing.T) {
	const src = `
handler u(a: u64, b: u64) -> (lo: u64, hi: u64) {
    return min(a, b), max(a, b)
}

handler s(a: i64, b: i64) -> (lo: i64, hi: i64) {
    return min(a, b), max(a, b)
}

handler w(a: u32, b: u32) -> (lo: u32, hi: u32) {
    return min(a, b), max(a, 7)
}
`
	for _, tc := range []struct {
		handler string
		a, b    uint64
		lo, hi  uint64
	}{
		{"u", 3, 5, 3, 5},
		{"u", 5, 3, 3, 5},
		{"u", 1 << 63, 1, 1, 1 << 63}, // unsigned: the top bit is large
		{"u", 4, 4, 4, 4},
		{"s", uint64(1 << 63), 1, uint64(1 << 63), 1}, // signed: the top bit is negative
		{"s", ^uint64(0), 0, ^uint64(0), 0},
		{"w", 0xffff_ffff, 3, 3, 0xffff_ffff},
		{"w", 2, 3, 2, 7},
	} {
		req := le64(tc.a, tc.b)
		if tc.handler == "w" {
			req = binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, uint32(tc.a)), uint32(tc.b))
		}
		res, _ := runSource(t, src, tc.handler, req)
		var lo, hi uint64
		if tc.handler == "w" {
			lo, hi = uint64(binary.LittleEndian.Uint32(res.Reply)), uint64(binary.LittleEndian.Uint32(res.Reply[4:]))
		} else {
			lo, hi = binary.LittleEndian.Uint64(res.Reply), binary.LittleEndian.Uint64(res.Reply[8:])
		}
		if res.Outcome != bytecode.OutcomeReply || lo != tc.lo || hi != tc.hi {
			t.Errorf("%s(%#x, %#x) = %v (%#x, %#x), want (%#x, %#x)", tc.handler, tc.a, tc.b, res.Outcome, lo, hi, tc.lo, tc.hi)
		}
	}
}

// A capped loop runs at most its cap: a body that breaks before the cap
// ends it normally whatever the range; one that does not fails with
// FailLoopCap in place of iteration cap+1, keeping what it wrote.
func TestCappedLoopBreak(t *testing.T) {
	const src = `
region seen: [u64; 1] rw

handler find(n: u64, target: u64) -> u64 {
    for i in 0..n max 8 {
        seen[0] += 1
        if i == target {
            return i
        }
    }
    fail(1)
}
`
	for _, tc := range []struct {
		n, target uint64
		code      int32 // 0: replied target
	}{
		{n: 4, target: 2},
		{n: 1000, target: 5}, // a range over the cap, left early
		{n: 1000, target: 7}, // the last iteration the cap allows
		{n: 1000, target: 8, code: bytecode.FailLoopCap}, // beyond the cap
		{n: 8, target: 9, code: 1},                       // within the cap, not found
	} {
		res, _ := runSource(t, src, "find", le64(tc.n, tc.target))
		switch {
		case tc.code == 0 && (res.Outcome != bytecode.OutcomeReply || binary.LittleEndian.Uint64(res.Reply) != tc.target):
			t.Errorf("find(%d, %d) = %v %x, want the reply %d", tc.n, tc.target, res.Outcome, res.Reply, tc.target)
		case tc.code != 0 && (res.Outcome != bytecode.OutcomeError || res.Code != tc.code):
			t.Errorf("find(%d, %d) = %v code %#x, want code %#x", tc.n, tc.target, res.Outcome, res.Code, tc.code)
		}
	}
}

// Every failing check has an exit of its own, which the line table maps
// to the check: the exit a run ends at names the failure's source.
func TestFailSitePositions(t *testing.T) {
	const src = `region r: [u64; 4] rw

handler h(i: u64, j: u64, d: u64, n: u64) -> u64 {
    let a = r[i]
    let b = r[j]
    for k in 0..n max 2 {
        r[0] += 1
    }
    if d == 7 {
        fail(7)
    }
    return a / d + b % d
}
`
	for _, tc := range []struct {
		i, j, d, n uint64
		code       int64
		pos        string
	}{
		{9, 0, 1, 0, bytecode.FailIndexOutOfRange, "t.naam:4:15"},
		{0, 9, 1, 0, bytecode.FailIndexOutOfRange, "t.naam:5:15"},
		{0, 0, 1, 3, bytecode.FailLoopCap, "t.naam:6:23"},
		{0, 0, 7, 0, 7, "t.naam:10:9"},
		{0, 0, 0, 0, bytecode.FailDivideByZero, "t.naam:12:14"},
	} {
		name := fmt.Sprintf("i=%d j=%d d=%d n=%d", tc.i, tc.j, tc.d, tc.n)
		res, obj := runSource(t, src, "h", le64(tc.i, tc.j, tc.d, tc.n))
		if res.Outcome != bytecode.OutcomeError || int64(res.Code) != tc.code {
			t.Errorf("%s: %v code %#x, want code %#x", name, res.Outcome, res.Code, tc.code)
			continue
		}
		pos, ok := obj.Position(res.Exit)
		if !ok || pos.String() != tc.pos {
			t.Errorf("%s: failed at slot %d, %v (%v); want %s", name, res.Exit, pos, ok, tc.pos)
		}
	}
}
