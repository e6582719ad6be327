package vm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// le is the little-endian bytes of vals, as a handler stores them.
func le(vals ...uint64) []byte {
	b := make([]byte, 0, 8*len(vals))
	for _, v := range vals {
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	return b
}

// testEnv is a LocalEnv with a fixed clock, so that now's result is known.
type testEnv struct{ *vm.LocalEnv }

const testNow = 123456789

func (testEnv) Now() uint64 { return testNow }

const (
	testSeed      = 1
	testSrcNode   = 0x100000001
	testTenant    = 42
	testRequestID = 0xdeadbeefcafe
	testHandler   = 7
)

// The ABI's fixed points, in the assembler's hex (lddw takes the unsigned
// 64-bit pattern).
const (
	asmForwarded = "0x8000000000000000" // bytecode.ReturnForwarded
	asmMinInt32  = "0xffffffff80000000" // -2^31: one past the error codes
)

// Handler fragments: r6 keeps the context across calls.
const (
	// hashRequest puts hash(data, data_end - data) in the reply's first 8 bytes.
	hashRequest = `
mov %r6, %r1
ldxdw %r1, [%r6+0]
ldxdw %r2, [%r6+8]
sub %r2, %r1
call 1
ldxdw %r7, [%r6+16]
stxdw [%r7], %r0
mov %r0, 8
exit`
	// readsZeroReply returns 0 when every reply byte is 0, error 1 otherwise.
	readsZeroReply = `
ldxdw %r2, [%r1+16]
ldxdw %r3, [%r1+24]
L:
jge %r2, %r3, done
ldxb %r4, [%r2]
jne %r4, 0, dirty
add %r2, 1
ja L
done:
mov %r0, 0
exit
dirty:
mov %r0, -1
exit`
	// forwards forwards to handler 9 (given as 0x1_00000009: the helper
	// takes the low 32 bits) on node 3 and returns ReturnForwarded, or
	// -100 if the forward failed.
	forwards = `
mov %r1, 3
lddw %r2, 0x100000009
call 7
jne %r0, 0, fail
lddw %r0, ` + asmForwarded + `
exit
fail:
mov %r0, -100
exit`
)

type invokeCase struct {
	name     string
	src      string
	entry    int
	request  []byte
	replyLen int  // 0: 64 bytes
	noReply  bool // an empty reply buffer
	prefill  byte // written over the reply buffer before Invoke
	regions  func() []vm.RegionMem
	refuse   bool // the env refuses send and forward
	// checkedOnly: the case makes a direct access fault, which only a
	// checked machine may run.
	checkedOnly bool

	want    vm.Result // Insns is not compared
	wantErr error
	wantMsg string
	check   func(t *testing.T, inv *vm.Invocation, env testEnv, trace *bytes.Buffer)
}

var invokeCases = []invokeCase{
	// The context.
	{
		name: "context fields",
		src: `
ldxdw %r2, [%r1+16]
ldxdw %r3, [%r1+32]
stxdw [%r2], %r3
ldxdw %r3, [%r1+40]
stxdw [%r2+8], %r3
ldxdw %r3, [%r1+48]
stxdw [%r2+16], %r3
ldxdw %r3, [%r1+56]
stxdw [%r2+24], %r3
ldxdw %r3, [%r1+0]
stxdw [%r2+32], %r3
ldxdw %r4, [%r1+8]
sub %r4, %r3
stxdw [%r2+40], %r4
ldxdw %r4, [%r1+24]
stxdw [%r2+48], %r4
mov %r0, 56
exit`,
		request: []byte("12345"),
		want: vm.Result{R0: 56, Outcome: bytecode.OutcomeReply,
			Reply: le(testSrcNode, testTenant, testRequestID, testHandler, vm.Addr(vm.SegRequest, 0), 5, vm.Addr(vm.SegReply, 64))},
	},
	{
		name:    "entry",
		src:     "mov %r0, 1\nexit\nldxdw %r0, [%r1+56]\nexit",
		entry:   2,
		want:    vm.Result{R0: testHandler, Outcome: bytecode.OutcomeReply, Reply: make([]byte, testHandler)},
		wantErr: nil,
	},
	{
		name:        "context is read-only",
		src:         "stdw [%r1+0], 0\nmov %r0, 0\nexit",
		checkedOnly: true,
		wantErr:     vm.ErrReadOnly,
		wantMsg:     "insn 0: write to read-only memory: 8-byte store at 0x200000000 (context+0 (length 64))",
	},
	{
		name:        "request is read-only",
		src:         "ldxdw %r2, [%r1+0]\nstb [%r2], 1\nmov %r0, 0\nexit",
		request:     []byte("12345678"),
		checkedOnly: true,
		wantErr:     vm.ErrReadOnly,
		wantMsg:     "insn 1: write to read-only memory: 1-byte store at 0x300000000 (request+0 (length 8))",
		check: func(t *testing.T, inv *vm.Invocation, _ testEnv, _ *bytes.Buffer) {
			if string(inv.Request) != "12345678" {
				t.Errorf("request written: %q", inv.Request)
			}
		},
	},
	{
		name:    "request is readable",
		src:     "ldxdw %r2, [%r1+0]\nldxb %r0, [%r2+1]\nexit",
		request: []byte{0, 3},
		want:    vm.Result{R0: 3, Outcome: bytecode.OutcomeReply, Reply: make([]byte, 3)},
	},

	// The reply.
	{
		name:    "reply zeroed before the run",
		src:     readsZeroReply,
		prefill: 0xaa,
		want:    vm.Result{R0: 0, Outcome: bytecode.OutcomeReply, Reply: []byte{}},
	},
	{
		name: "reply of the whole buffer",
		src:  "ldxdw %r2, [%r1+16]\nstb [%r2+63], 9\nmov %r0, 64\nexit",
		want: vm.Result{R0: 64, Outcome: bytecode.OutcomeReply, Reply: append(make([]byte, 63), 9)},
	},
	{
		name:    "reply longer than the buffer",
		src:     "mov %r0, 65\nexit",
		want:    vm.Result{R0: 65, Outcome: bytecode.OutcomeInvalid},
		wantErr: vm.ErrReturn,
		wantMsg: "insn 1: bad handler return value: reply of 65 bytes, the buffer has 64",
	},
	{
		name:    "reply with no buffer",
		src:     "mov %r0, 1\nexit",
		noReply: true,
		want:    vm.Result{R0: 1, Outcome: bytecode.OutcomeInvalid},
		wantErr: vm.ErrReturn,
		wantMsg: "reply of 1 bytes, the buffer has 0",
	},
	{
		name:    "empty reply with no buffer",
		src:     "ldxdw %r2, [%r1+16]\nldxdw %r0, [%r1+24]\nsub %r0, %r2\nexit",
		noReply: true,
		want:    vm.Result{R0: 0, Outcome: bytecode.OutcomeReply}, // Reply is nil[:0]
	},

	// Error codes and invalid returns.
	{
		name: "error code",
		src:  "mov %r0, -5\nexit",
		want: vm.Result{R0: -5, Outcome: bytecode.OutcomeError, Code: 5},
	},
	{
		name: "largest error code",
		src:  "mov %r0, -2147483647\nexit",
		want: vm.Result{R0: -bytecode.MaxErrorCode, Outcome: bytecode.OutcomeError, Code: bytecode.MaxErrorCode},
	},
	{
		name:    "invalid r0",
		src:     "lddw %r0, " + asmMinInt32 + "\nexit",
		want:    vm.Result{R0: -1 << 31, Outcome: bytecode.OutcomeInvalid},
		wantErr: vm.ErrReturn,
		wantMsg: "insn 2: bad handler return value: r0 = -2147483648 is neither a reply length, an error code (-1 to -2147483647) nor ReturnForwarded",
	},

	// Forwarding.
	{
		name: "forward",
		src:  forwards,
		want: vm.Result{R0: bytecode.ReturnForwarded, Outcome: bytecode.OutcomeForwarded, Forward: &vm.Forward{Node: 3, Handler: 9}},
		check: func(t *testing.T, _ *vm.Invocation, env testEnv, _ *bytes.Buffer) {
			if want := []vm.Forward{{Node: 3, Handler: 9}}; !equalForwards(env.Forwards, want) {
				t.Errorf("env.Forwards = %v, want %v", env.Forwards, want)
			}
		},
	},
	{
		name:    "forwarded without a forward",
		src:     "lddw %r0, " + asmForwarded + "\nexit",
		want:    vm.Result{R0: bytecode.ReturnForwarded, Outcome: bytecode.OutcomeInvalid},
		wantErr: vm.ErrReturn,
		wantMsg: "insn 2: bad handler return value: r0 = ReturnForwarded, but the run did not forward the request",
	},
	{
		name:   "forward refused",
		src:    forwards,
		refuse: true,
		want:   vm.Result{R0: -100, Outcome: bytecode.OutcomeError, Code: 100},
		check: func(t *testing.T, _ *vm.Invocation, env testEnv, _ *bytes.Buffer) {
			if len(env.Forwards) != 0 {
				t.Errorf("env.Forwards = %v, want none", env.Forwards)
			}
		},
	},
	{
		name: "forward once",
		src: `
mov %r1, 3
mov %r2, 9
call 7
mov %r1, 4
mov %r2, 10
call 7
jne %r0, -1, bad
lddw %r0, ` + asmForwarded + `
exit
bad:
mov %r0, -2
exit`,
		want: vm.Result{R0: bytecode.ReturnForwarded, Outcome: bytecode.OutcomeForwarded, Forward: &vm.Forward{Node: 3, Handler: 9}},
		check: func(t *testing.T, _ *vm.Invocation, env testEnv, _ *bytes.Buffer) {
			if want := []vm.Forward{{Node: 3, Handler: 9}}; !equalForwards(env.Forwards, want) {
				t.Errorf("env.Forwards = %v, want %v", env.Forwards, want)
			}
		},
	},
	{
		name:    "forward then reply",
		src:     "mov %r1, 3\nmov %r2, 9\ncall 7\nmov %r0, 0\nexit",
		want:    vm.Result{R0: 0, Outcome: bytecode.OutcomeInvalid, Forward: &vm.Forward{Node: 3, Handler: 9}},
		wantErr: vm.ErrReturn,
		wantMsg: "insn 4: bad handler return value: r0 = 0 after a successful forward",
	},
	{
		name:    "forward then fault",
		src:     "mov %r1, 3\nmov %r2, 9\ncall 7\nldxb %r0, [%r0]\nexit",
		want:    vm.Result{Outcome: bytecode.OutcomeInvalid, Forward: &vm.Forward{Node: 3, Handler: 9}},
		wantErr: vm.ErrOutOfBounds,
		wantMsg: "insn 3:",
		// An access through the null segment: a checked run faults, an
		// unchecked one would dereference nil.
		checkedOnly: true,
	},

	// Regions.
	{
		name: "regions read-only and writable",
		src: `
lddw %r2, region[0]
ldxdw %r3, [%r2+0]
add %r3, 1
lddw %r4, region[1]+8
stxdw [%r4], %r3
mov %r0, 0
exit`,
		regions: roRW,
		want:    vm.Result{R0: 0, Outcome: bytecode.OutcomeReply, Reply: []byte{}},
		check: func(t *testing.T, inv *vm.Invocation, _ testEnv, _ *bytes.Buffer) {
			if got := inv.Regions[1].Data; !bytes.Equal(got, le(0, 42)) {
				t.Errorf("region 1 = %x, want %x", got, le(0, 42))
			}
		},
	},
	{
		name:        "read-only region",
		src:         "lddw %r2, region[0]\nstb [%r2+3], 1\nmov %r0, 0\nexit",
		regions:     roRW,
		checkedOnly: true,
		wantErr:     vm.ErrReadOnly,
		wantMsg:     "insn 2: write to read-only memory: 1-byte store at 0x800000003 (region0+3 (length 8))",
	},
	{
		name: "unmapped region",
		src:  "lddw %r2, region[1]\nldxb %r0, [%r2]\nexit",
		regions: func() []vm.RegionMem {
			return []vm.RegionMem{{Data: make([]byte, 8)}, {Data: nil, Writable: true}}
		},
		checkedOnly: true,
		wantErr:     vm.ErrOutOfBounds,
		wantMsg:     "region1+0, not mapped",
	},

	// Helpers.
	{
		name:    "hash",
		src:     hashRequest,
		request: []byte("foobar"),
		want:    vm.Result{R0: 8, Outcome: bytecode.OutcomeReply, Reply: le(0x85944171f73967e8)},
	},
	{
		name: "hash of nothing",
		src:  hashRequest,
		want: vm.Result{R0: 8, Outcome: bytecode.OutcomeReply, Reply: le(0xcbf29ce484222325)},
	},
	{
		name:    "hash past the end",
		src:     "mov %r6, %r1\nldxdw %r1, [%r6+0]\nldxdw %r2, [%r6+8]\nsub %r2, %r1\nadd %r2, 1\ncall 1\nexit",
		request: []byte("foobar"),
		wantErr: vm.ErrOutOfBounds,
		wantMsg: "insn 5: memory access out of bounds: 7-byte helper access at 0x300000000 (request+0 (length 6))",
	},
	{
		name: "copy overlapping forwards",
		src: `
ldxdw %r6, [%r1+16]
lddw %r2, 0x0807060504030201
stxdw [%r6], %r2
mov %r1, %r6
add %r1, 2
mov %r2, %r6
mov %r3, 8
call 2
add %r0, 10
exit`,
		want: vm.Result{R0: 10, Outcome: bytecode.OutcomeReply, Reply: []byte{1, 2, 1, 2, 3, 4, 5, 6, 7, 8}},
	},
	{
		name: "copy overlapping backwards",
		src: `
ldxdw %r6, [%r1+16]
lddw %r2, 0x0807060504030201
stxdw [%r6+2], %r2
mov %r1, %r6
mov %r2, %r6
add %r2, 2
mov %r3, 8
call 2
add %r0, 10
exit`,
		want: vm.Result{R0: 10, Outcome: bytecode.OutcomeReply, Reply: []byte{1, 2, 3, 4, 5, 6, 7, 8, 7, 8}},
	},
	{
		name: "copy request to reply",
		src: `
mov %r6, %r1
ldxdw %r1, [%r6+16]
ldxdw %r2, [%r6+0]
ldxdw %r3, [%r6+8]
sub %r3, %r2
call 2
ldxdw %r0, [%r6+8]
ldxdw %r2, [%r6+0]
sub %r0, %r2
exit`,
		request: []byte("hello"),
		want:    vm.Result{R0: 5, Outcome: bytecode.OutcomeReply, Reply: []byte("hello")},
	},
	{
		name: "copy into the request",
		src: `
mov %r6, %r1
ldxdw %r1, [%r6+0]
ldxdw %r2, [%r6+16]
mov %r3, 5
call 2
exit`,
		request: []byte("hello"),
		wantErr: vm.ErrReadOnly,
		wantMsg: "insn 4: write to read-only memory: 5-byte helper access at 0x300000000 (request+0 (length 5))",
	},
	{
		name: "now",
		src:  "mov %r6, %r1\ncall 3\nldxdw %r2, [%r6+16]\nstxdw [%r2], %r0\nmov %r0, 8\nexit",
		want: vm.Result{R0: 8, Outcome: bytecode.OutcomeReply, Reply: le(testNow)},
	},
	{
		name: "random",
		src:  "mov %r6, %r1\ncall 4\nldxdw %r2, [%r6+16]\nstxdw [%r2], %r0\nmov %r0, 8\nexit",
		want: vm.Result{R0: 8, Outcome: bytecode.OutcomeReply, Reply: le(rand.New(rand.NewPCG(testSeed, 0)).Uint64())},
	},
	{
		name:    "trace",
		src:     "mov %r6, %r1\nldxdw %r1, [%r6+0]\nldxdw %r2, [%r6+8]\nsub %r2, %r1\ncall 5\nexit",
		request: []byte("hello trace\n"),
		want:    vm.Result{R0: 0, Outcome: bytecode.OutcomeReply, Reply: []byte{}},
		check: func(t *testing.T, _ *vm.Invocation, _ testEnv, trace *bytes.Buffer) {
			if trace.String() != "hello trace\n" {
				t.Errorf("trace = %q", trace)
			}
		},
	},
	{
		name: "send",
		src: `
mov %r6, %r1
ldxdw %r3, [%r6+0]
ldxdw %r4, [%r6+8]
sub %r4, %r3
mov %r1, 5
lddw %r2, 0x100000007
call 6
exit`,
		request: []byte("ping"),
		want:    vm.Result{R0: 0, Outcome: bytecode.OutcomeReply, Reply: []byte{}},
		check: func(t *testing.T, inv *vm.Invocation, env testEnv, _ *bytes.Buffer) {
			if len(env.Sent) != 1 || env.Sent[0].Node != 5 || env.Sent[0].Handler != 7 || string(env.Sent[0].Payload) != "ping" {
				t.Fatalf("env.Sent = %+v, want one message {5 7 ping}", env.Sent)
			}
			if &env.Sent[0].Payload[0] == &inv.Request[0] {
				t.Error("the sent payload aliases the request")
			}
		},
	},
	{
		name:    "send refused",
		src:     "mov %r6, %r1\nldxdw %r3, [%r6+0]\nmov %r4, 0\nmov %r1, 5\nmov %r2, 7\ncall 6\nexit",
		refuse:  true,
		want:    vm.Result{R0: -1, Outcome: bytecode.OutcomeError, Code: 1},
		wantErr: nil,
	},
}

func roRW() []vm.RegionMem {
	return []vm.RegionMem{{Data: le(41)}, {Data: make([]byte, 16), Writable: true}}
}

func equalForwards(a, b []vm.Forward) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestInvoke runs each case on a checked and, unless it faults on a direct
// access, an unchecked machine.
func TestInvoke(t *testing.T) {
	for _, tc := range invokeCases {
		t.Run(tc.name, func(t *testing.T) {
			p := load(t, tc.src)
			for _, unchecked := range []bool{false, true} {
				if unchecked && tc.checkedOnly {
					continue
				}
				var trace bytes.Buffer
				env := testEnv{vm.NewLocalEnv(testSeed, &trace)}
				if tc.refuse {
					env.Err = errors.New("refused")
				}
				m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(env), Unchecked: unchecked})
				inv := &vm.Invocation{
					Entry: tc.entry, Handler: testHandler, SrcNode: testSrcNode, Tenant: testTenant, RequestID: testRequestID,
					Request: tc.request,
				}
				switch {
				case tc.noReply:
				case tc.replyLen == 0:
					inv.Reply = make([]byte, 64)
				default:
					inv.Reply = make([]byte, tc.replyLen)
				}
				for i := range inv.Reply {
					inv.Reply[i] = tc.prefill
				}
				if tc.regions != nil {
					inv.Regions = tc.regions()
				}
				got, err := m.Invoke(p, inv)
				checkInvoke(t, unchecked, tc, got, err)
				if tc.check != nil {
					tc.check(t, inv, env, &trace)
				}
			}
		})
	}
}

func checkInvoke(t *testing.T, unchecked bool, tc invokeCase, got vm.Result, err error) {
	t.Helper()
	if tc.wantErr == nil && err != nil {
		t.Fatalf("unchecked=%v: %v", unchecked, err)
	}
	if tc.wantErr != nil {
		var f *vm.Fault
		if !errors.Is(err, tc.wantErr) || !errors.As(err, &f) {
			t.Fatalf("unchecked=%v: err = %v, want a *vm.Fault matching %v", unchecked, err, tc.wantErr)
		}
		if !strings.Contains(err.Error(), tc.wantMsg) {
			t.Fatalf("unchecked=%v: err = %q, want it to contain %q", unchecked, err, tc.wantMsg)
		}
	}
	want := tc.want
	if tc.wantErr != nil {
		want.Outcome = bytecode.OutcomeInvalid
	}
	if got.R0 != want.R0 || got.Outcome != want.Outcome || got.Code != want.Code ||
		!bytes.Equal(got.Reply, want.Reply) || want.Reply == nil && got.Reply != nil {
		t.Errorf("unchecked=%v: got R0 %d, %v, reply %x, code %d; want R0 %d, %v, reply %x, code %d",
			unchecked, got.R0, got.Outcome, got.Reply, got.Code, want.R0, want.Outcome, want.Reply, want.Code)
	}
	if (got.Forward == nil) != (want.Forward == nil) || got.Forward != nil && *got.Forward != *want.Forward {
		t.Errorf("unchecked=%v: Forward = %v, want %v", unchecked, got.Forward, want.Forward)
	}
	if got.Insns == 0 {
		t.Errorf("unchecked=%v: Insns = 0", unchecked)
	}
}

// TestInvokeZeroesReply: one buffer, two runs; the second sees none of the
// first one's reply.
func TestInvokeZeroesReply(t *testing.T) {
	writes := load(t, "ldxdw %r2, [%r1+16]\nstdw [%r2+8], -1\nmov %r0, 16\nexit")
	reads := load(t, readsZeroReply)
	for _, unchecked := range []bool{false, true} {
		m := vm.NewMachine(vm.Options{Unchecked: unchecked})
		inv := &vm.Invocation{Reply: make([]byte, 16)}
		res, err := m.Invoke(writes, inv)
		if err != nil || !bytes.Equal(res.Reply, le(0, ^uint64(0))) {
			t.Fatalf("unchecked=%v: first run: reply %x, err %v", unchecked, res.Reply, err)
		}
		res, err = m.Invoke(reads, inv)
		if err != nil || res.Outcome != bytecode.OutcomeReply {
			t.Fatalf("unchecked=%v: second run: %v (r0 %d), err %v; the reply buffer was not zeroed", unchecked, res.Outcome, res.R0, err)
		}
	}
}

// TestInvokeForwardPerRun: the forward helper's state starts afresh with
// every run.
func TestInvokeForwardPerRun(t *testing.T) {
	fwd := load(t, forwards)
	claims := load(t, "lddw %r0, "+asmForwarded+"\nexit")
	env := vm.NewLocalEnv(0, nil)
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(env)})
	inv := &vm.Invocation{}
	for run := range 2 {
		if res, err := m.Invoke(fwd, inv); err != nil || res.Outcome != bytecode.OutcomeForwarded {
			t.Fatalf("run %d: forward: %v, err %v", run, res.Outcome, err)
		}
		if res, err := m.Invoke(claims, inv); !errors.Is(err, vm.ErrReturn) || res.Forward != nil {
			t.Fatalf("run %d: ReturnForwarded after another run's forward: err = %v, Forward = %v", run, err, res.Forward)
		}
	}
	if len(env.Forwards) != 2 {
		t.Errorf("env.Forwards = %v, want two", env.Forwards)
	}
}

// TestInvokeUnmaps: after Invoke, successful or not, nothing of the
// invocation stays mapped.
func TestInvokeUnmaps(t *testing.T) {
	probe := load(t, "ldxb %r0, [%r1]\nexit")
	for _, src := range []string{"mov %r0, 0\nexit", "mov %r0, 1000\nexit", "ldxb %r0, [%r0]\nexit"} {
		m := vm.NewMachine(vm.Options{})
		inv := &vm.Invocation{Request: []byte{1}, Reply: make([]byte, 8), Regions: roRW()}
		m.Invoke(load(t, src), inv)
		for _, seg := range []vm.Segment{vm.SegContext, vm.SegRequest, vm.SegReply, vm.RegionSegment(0), vm.RegionSegment(1)} {
			if _, err := m.Run(probe, vm.Addr(seg, 0)); !errors.Is(err, vm.ErrOutOfBounds) || !strings.Contains(err.Error(), "not mapped") {
				t.Errorf("%q: %s after Invoke: err = %v, want not mapped", src, seg, err)
			}
		}
	}
}

// TestInvokeRefuses: what cannot be mapped or started is a plain error,
// before the run, and leaves nothing mapped.
func TestInvokeRefuses(t *testing.T) {
	buf := make([]uint64, 4)
	b := unsafe.Slice((*byte)(unsafe.Pointer(&buf[0])), 32)
	ret := "mov %r0, 0\nexit"
	tests := []struct {
		name      string
		src       string
		inv       vm.Invocation
		unchecked bool
		want      string
	}{
		{"too many regions", ret, vm.Invocation{Regions: make([]vm.RegionMem, vm.MaxRegions+1)}, false, "249 regions, at most 248"},
		{"unaligned writable region", ret, vm.Invocation{Regions: []vm.RegionMem{{Data: b[:8]}, {Data: b[1:9], Writable: true}}}, false, "writable segment region1 must start on an 8-byte boundary"},
		{"unaligned reply", ret, vm.Invocation{Reply: b[4:12]}, false, "writable segment reply must start on an 8-byte boundary"},
		{"bad entry", ret, vm.Invocation{Entry: 5}, false, "entry point 5 is not an instruction"},
		{"unchecked, region not mapped", "lddw %r2, region[1]\nmov %r0, 0\nexit", vm.Invocation{Regions: []vm.RegionMem{{Data: b[:8]}}}, true, "region 1, which is not mapped"},
	}
	probe := load(t, "ldxb %r0, [%r1]\nexit")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := vm.NewMachine(vm.Options{Unchecked: tt.unchecked})
			res, err := m.Invoke(load(t, tt.src), &tt.inv)
			var f *vm.Fault
			if err == nil || errors.As(err, &f) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want a plain error containing %q", err, tt.want)
			}
			if res.Outcome != bytecode.OutcomeInvalid || res.Insns != 0 {
				t.Errorf("result = %+v, want OutcomeInvalid and no instructions", res)
			}
			// (An unchecked machine would dereference the unmapped segment.)
			if _, err := m.Run(probe, vm.Addr(vm.RegionSegment(0), 0)); !tt.unchecked && err == nil {
				t.Error("region 0 is still mapped")
			}
		})
	}
}

// TestInvokeNoAllocs: a handler without helper calls runs without
// allocating, in both modes.
func TestInvokeNoAllocs(t *testing.T) {
	p := load(t, `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+16]
ldxb %r4, [%r2]
stxb [%r3], %r4
lddw %r5, region[0]
ldxdw %r4, [%r5]
stxdw [%r3+8], %r4
mov %r0, 16
exit`)
	for _, unchecked := range []bool{false, true} {
		m := vm.NewMachine(vm.Options{Unchecked: unchecked})
		inv := &vm.Invocation{Request: []byte("x"), Reply: make([]byte, 16), Regions: []vm.RegionMem{{Data: le(7)}}}
		allocs := testing.AllocsPerRun(100, func() {
			if res, err := m.Invoke(p, inv); err != nil || res.R0 != 16 {
				t.Fatalf("r0 = %d, err = %v", res.R0, err)
			}
		})
		if allocs != 0 {
			t.Fatalf("unchecked=%v: %.1f allocations per Invoke, want 0", unchecked, allocs)
		}
	}
}

func TestFNV1a(t *testing.T) {
	tests := []struct {
		have string
		want uint64
	}{
		{"", 0xcbf29ce484222325},
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	}
	for _, tt := range tests {
		if got := vm.FNV1a([]byte(tt.have)); got != tt.want {
			t.Errorf("FNV1a(%q) = %#x, want %#x", tt.have, got, tt.want)
		}
	}
	data := make([]byte, 1000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	h := fnv.New64a()
	h.Write(data)
	if got := vm.FNV1a(data); got != h.Sum64() {
		t.Errorf("FNV1a = %#x, hash/fnv says %#x", got, h.Sum64())
	}
}

func TestLocalEnv(t *testing.T) {
	a, b, c := vm.NewLocalEnv(7, nil), vm.NewLocalEnv(7, nil), vm.NewLocalEnv(8, nil)
	for range 3 {
		if x, y := a.Random(), b.Random(); x != y {
			t.Fatalf("seed 7 gave %#x and %#x", x, y)
		}
	}
	if a.Random() == c.Random() {
		t.Error("seeds 7 and 8 gave the same number")
	}
	if t0, t1 := a.Now(), a.Now(); t1 < t0 {
		t.Errorf("clock went back: %d then %d", t0, t1)
	}
	a.Trace([]byte("dropped")) // no writer
	payload := []byte("abc")
	if err := a.Send(1, 2, payload); err != nil {
		t.Fatal(err)
	}
	payload[0] = 'x'
	if string(a.Sent[0].Payload) != "abc" {
		t.Errorf("Send kept the caller's buffer: %q", a.Sent[0].Payload)
	}
	a.Err = errors.New("down")
	if a.Send(1, 2, nil) == nil || a.Forward(1, 2) == nil || len(a.Sent) != 1 || len(a.Forwards) != 0 {
		t.Errorf("with Err set: Sent %v, Forwards %v", a.Sent, a.Forwards)
	}
}
