//go:build cgo

package jit_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// handlerRegions are the regions every handler case gets: a writable
// table of 64 bytes and a read-only one of 16.
func handlerRegions() []vm.RegionMem {
	rw := make([]byte, 64)
	for i := range rw {
		rw[i] = byte(i)
	}
	ro := []byte("read-only region")
	return []vm.RegionMem{{Data: rw, Writable: true}, {Data: append(make([]byte, 0, 16), ro...)}}
}

var handlerVerifierRegions = []verifier.Region{{Name: "rw", Size: 64, Writable: true}, {Name: "ro", Size: 16}}

// handlerCases run under the handler ABI; want is a substring of the
// outcome (see invokeText).
var handlerCases = []struct {
	name  string
	src   string
	entry int
	req   string
	want  string
}{
	{"echo request", `
		ldxdw %r2, [%r1+0]
		ldxdw %r3, [%r1+8]
		ldxdw %r4, [%r1+16]
		mov %r5, %r2
		add %r5, 8
		jgt %r5, %r3, +3
		ldxdw %r0, [%r2+0]
		stxdw [%r4+0], %r0
		mov %r0, 8
		exit`, 0, "abcdefgh", "reply 6162636465666768"},
	{"context fields", `
		ldxdw %r0, [%r1+32]
		ldxdw %r2, [%r1+40]
		add %r0, %r2
		ldxdw %r2, [%r1+48]
		add %r0, %r2
		ldxdw %r2, [%r1+56]
		add %r0, %r2
		neg %r0
		exit`, 0, "", "error code"},
	{"fetch-add on a region", `
		lddw %r2, region[0]
		mov %r3, 100
		lock fetch add [%r2+8], %r3
		ldxdw %r4, [%r1+16]
		stxdw [%r4+0], %r3
		mov %r0, 8
		exit`, 0, "", "reply 0809"},
	{"hash helper", `
		ldxdw %r6, [%r1+16]
		ldxdw %r2, [%r1+8]
		ldxdw %r1, [%r1+0]
		sub %r2, %r1
		call 1
		stxdw [%r6+0], %r0
		mov %r0, 8
		exit`, 0, "hash me", "reply"},
	{"copy helper from a read-only region", `
		ldxdw %r1, [%r1+16]
		lddw %r2, region[1]
		mov %r3, 16
		call 2
		mov %r0, 16
		exit`, 0, "", "reply 726561642d6f6e6c7920726567696f6e"},
	{"copy helper into a read-only region", `
		lddw %r1, region[1]
		lddw %r2, region[0]
		mov %r3, 8
		call 2
		mov %r0, 0
		exit`, 0, "", "write to read-only memory"},
	{"trace, send and forward", `
		mov %r6, %r1
		ldxdw %r1, [%r6+0]
		ldxdw %r2, [%r6+8]
		sub %r2, %r1
		call 5
		mov %r1, 3
		mov %r2, 4
		ldxdw %r3, [%r6+0]
		ldxdw %r4, [%r6+8]
		sub %r4, %r3
		call 6
		mov %r1, 5
		mov %r2, 6
		call 7
		lddw %r0, 0x8000000000000000
		exit`, 0, "payload", "forwarded"},
	{"store to the request", `
		ldxdw %r2, [%r1+0]
		stb [%r2+0], 1
		mov %r0, 0
		exit`, 0, "x", "insn 1: write to read-only memory: 1-byte store at 0x300000000 (request+0 (length 1))"},
	{"region out of bounds", `
		lddw %r2, region[0]
		ldxdw %r0, [%r2+60]
		exit`, 0, "", "insn 2: memory access out of bounds: 8-byte load at 0x80000003c (region0+60 (length 64))"},
	{"store to a read-only region", `
		lddw %r2, region[1]
		stw [%r2+0], 1
		mov %r0, 0
		exit`, 0, "", "insn 2: write to read-only memory"},
	{"unmapped region", `
		lddw %r2, region[5]
		ldxb %r0, [%r2+0]
		exit`, 0, "", "insn 2: memory access out of bounds: 1-byte load at 0xd00000000 (region5+0, not mapped)"},
	{"reply too long", "mov %r0, 65\nexit", 0, "", "insn 1: bad handler return value: reply of 65 bytes, the buffer has 64"},
	{"second entry", "mov %r0, 1\nexit\nmov %r0, 2\nexit", 2, "", "reply 0000"},
	{"local call in a handler", `
		mov %r6, %r1
		call local +4
		ldxdw %r2, [%r6+16]
		stxdw [%r2+0], %r0
		mov %r0, 8
		exit
		lddw %r1, region[0]
		ldxdw %r0, [%r1+16]
		exit`, 0, "", "reply 1011121314151617"},
}

// TestHandlers runs each case through vm.Machine.Invoke and the JIT's
// Invoke (checked, and unchecked when the verifier accepts the handler)
// and requires the same result, fault text, reply, region bytes, traces,
// sends and forwards.
func TestHandlers(t *testing.T) {
	for _, tc := range handlerCases {
		t.Run(tc.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tc.src)
			if err != nil {
				t.Fatal(err)
			}
			want := invokeText(t, nil, insns, tc.entry, tc.req, false)
			if !strings.Contains(want, tc.want) {
				t.Fatalf("interpreter: %s\nwant %q in it", want, tc.want)
			}
			if got := invokeText(t, jitEngine, insns, tc.entry, tc.req, false); got != want {
				t.Fatalf("checked JIT:\n%s\ninterpreter:\n%s", got, want)
			}
			cfg := verifier.Config{Regions: handlerVerifierRegions, Entries: []verifier.Entry{{Name: "h", Slot: tc.entry}}}
			if _, err := verifier.Verify(insns, cfg); err != nil {
				t.Logf("checked only: the verifier rejects it: %v", err)
				return
			}
			want = invokeText(t, nil, insns, tc.entry, tc.req, true)
			if got := invokeText(t, jitEngine, insns, tc.entry, tc.req, true); got != want {
				t.Fatalf("unchecked JIT:\n%s\ninterpreter:\n%s", got, want)
			}
		})
	}
}

// engine is how invokeText runs a handler: nil is the interpreter.
type engine func(t *testing.T, insns []byte, entry int, opts vm.Options, unchecked bool, inv *vm.Invocation) (vm.Result, error)

func jitEngine(t *testing.T, raw []byte, entry int, opts vm.Options, unchecked bool, inv *vm.Invocation) (vm.Result, error) {
	insns, err := bytecode.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	code, err := jit.Compile(insns, jit.Options{Unchecked: unchecked, Entries: []int{entry}})
	if err != nil {
		t.Fatal(err)
	}
	m := vm.NewMachine(opts)
	defer m.Close()
	return m.Invoke(code, inv)
}

// invokeText runs the handler once and describes everything it did.
func invokeText(t *testing.T, eng engine, insns asm.Instructions, entry int, req string, unchecked bool) string {
	t.Helper()
	var trace bytes.Buffer
	env := vm.NewLocalEnv(7, &trace)
	opts := vm.Options{Helpers: vm.ABIHelpers(env), Unchecked: unchecked}
	regions := handlerRegions()
	inv := &vm.Invocation{Entry: entry, Handler: 11, SrcNode: 22, Tenant: 33, RequestID: 44, Request: []byte(req), Reply: make([]byte, 64), Regions: regions}
	var res vm.Result
	var err error
	if eng == nil {
		p := mustLoad(t, insns)
		res, err = vm.NewMachine(opts).Invoke(p, inv)
	} else {
		raw, rerr := bytecode.Encode(insns)
		if rerr != nil {
			t.Fatal(rerr)
		}
		res, err = eng(t, raw, entry, opts, unchecked, inv)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "r0 %d outcome %v code %d insns %d err %q\n", res.R0, res.Outcome, res.Code, res.Insns, errText(err))
	if res.Outcome == bytecode.OutcomeReply {
		fmt.Fprintf(&b, "reply %x\n", res.Reply)
	}
	if res.Forward != nil {
		fmt.Fprintf(&b, "forward %+v\n", *res.Forward)
	}
	for i, r := range regions {
		fmt.Fprintf(&b, "region %d %x\n", i, r.Data)
	}
	fmt.Fprintf(&b, "trace %q sent %+v forwards %+v\n", trace.String(), env.Sent, env.Forwards)
	return b.String()
}

// TestKVGet runs the hand-written KV GET handler (testprog.KVGetHand)
// through both tiers over a table with a few keys, hits and misses.
func TestKVGet(t *testing.T) {
	obj, err := testprog.KVGetHandObject()
	if err != nil {
		t.Fatal(err)
	}
	insns, err := obj.Insns()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifier.VerifyObject(obj, verifier.Config{}); err != nil {
		t.Fatalf("verifier: %v", err)
	}
	size := obj.Regions[0].Size
	for _, unchecked := range []bool{false, true} {
		code, err := jit.Compile(insns, jit.Options{Unchecked: unchecked})
		if err != nil {
			t.Fatal(err)
		}
		jm := vm.NewMachine(vm.Options{})
		im := vm.NewMachine(vm.Options{Unchecked: unchecked})
		table := make([]byte, size)
		for i := range table {
			table[i] = byte(i * 7)
		}
		for key := range 64 {
			req := make([]byte, 16)
			req[0], req[9] = byte(key), byte(key*3)
			var outs [2]string
			for i, run := range []func(*vm.Invocation) (vm.Result, error){
				func(inv *vm.Invocation) (vm.Result, error) { return im.Invoke(code.Program(), inv) },
				func(inv *vm.Invocation) (vm.Result, error) { return jm.Invoke(code, inv) },
			} {
				inv := &vm.Invocation{Request: req, Reply: make([]byte, 128), Regions: []vm.RegionMem{{Data: table, Writable: obj.Regions[0].Writable}}}
				res, err := run(inv)
				outs[i] = fmt.Sprintf("%d %v %x %d %q", res.R0, res.Outcome, res.Reply, res.Insns, errText(err))
			}
			if outs[0] != outs[1] {
				t.Fatalf("unchecked=%v key %d: interpreter %s, JIT %s", unchecked, key, outs[0], outs[1])
			}
		}
	}
}
