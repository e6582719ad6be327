package verifier

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// abiCase is a handler-mode program, what the verifier must say of it,
// and what the checked VM does with it on requests of 0, 8 and 64 bytes:
// an accepted program must run without a fault (and, with wantR0Len,
// return the request's length); a rejected one marked vmFaults faults,
// which is why it must be rejected.
type abiCase struct {
	name      string
	src       string
	wantCode  Code   // "" accepts
	wantMsg   string // substring of the message
	vmFaults  bool
	wantR0Len bool
}

// abiRegions are the regions of every abiCase: region 0 writable, region
// 1 read-only.
var abiRegions = []Region{{Name: "table", Size: 4096, Writable: true}, {Name: "config", Size: 64}}

func runABICases(t *testing.T, cases []abiCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tc.src)
			if err != nil {
				t.Fatalf("assemble: %+v", err)
			}
			for _, lim := range []Limits{{}, {CallStrings: -1}} {
				_, err = Verify(insns, Config{Regions: abiRegions, Limits: lim})
				var verr *Error
				switch {
				case tc.wantCode == "" && err != nil:
					t.Fatalf("rejected: %+v", err)
				case tc.wantCode != "" && !errors.As(err, &verr):
					t.Fatalf("accepted, want %s", tc.wantCode)
				case tc.wantCode != "" && (verr.Code != tc.wantCode || !strings.Contains(verr.Msg, tc.wantMsg)):
					t.Fatalf("got %+v\nwant code %s, message containing %q", verr, tc.wantCode, tc.wantMsg)
				}
			}
			if tc.wantCode != "" && !tc.vmFaults {
				return
			}
			prog, err := vm.Load(insns)
			if err != nil {
				t.Fatal(err)
			}
			faulted := false
			for _, n := range []int{0, 8, 64} {
				req := make([]byte, n)
				for i := range req {
					req[i] = byte(i + 1)
				}
				m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(vm.NewLocalEnv(1, io.Discard))})
				res, err := m.Invoke(prog, &vm.Invocation{Request: req, Reply: make([]byte, 64),
					Regions: []vm.RegionMem{{Data: make([]byte, 4096), Writable: true}, {Data: make([]byte, 64)}}})
				var f *vm.Fault
				switch {
				case errors.As(err, &f):
					if tc.wantCode == "" {
						t.Fatalf("accepted, but faults on a %d-byte request: %v", n, err)
					}
					faulted = true
				case err != nil:
					t.Fatalf("%d-byte request: %v", n, err)
				case tc.wantR0Len && res.R0 != int64(n):
					t.Errorf("%d-byte request: r0 = %d, want the length", n, res.R0)
				}
			}
			if tc.vmFaults && !faulted {
				t.Errorf("the checked VM runs it without a fault; the case means to show one")
			}
		})
	}
}

// TestHelperMemoryArguments: a helper's memory argument is checked for
// its kind, its rights and its bounds even when its length is provably
// 0, and the context pointer is never one.
func TestHelperMemoryArguments(t *testing.T) {
	runABICases(t, []abiCase{
		{name: "copy to a number, length 0", src: `
mov %r1, 4096
mov %r2, %r10
add %r2, -8
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "holds a number", vmFaults: true},
		{name: "copy from a number, length 0", src: `
mov %r1, %r10
add %r1, -8
lddw %r2, 0x100000000000
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "argument src (r2)", vmFaults: true},
		{name: "hash of a number, length 0", src: `
lddw %r1, 0x100000000000
mov %r2, 0
call 1
exit`, wantCode: CodeHelperArg, wantMsg: "holds a number", vmFaults: true},
		{name: "trace of a number, length 0", src: `
lddw %r1, 0x100000000000
mov %r2, 0
call 5
mov %r0, 0
exit`, wantCode: CodeHelperArg, wantMsg: "holds a number", vmFaults: true},
		{name: "send of a number, length 0", src: `
mov %r1, 2
mov %r2, 7
lddw %r3, 0x100000000000
mov %r4, 0
call 6
exit`, wantCode: CodeHelperArg, wantMsg: "holds a number", vmFaults: true},
		{name: "copy into the request, length 0", src: `
ldxdw %r1, [%r1+0]
mov %r2, %r10
add %r2, -8
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "read-only", vmFaults: true},
		{name: "copy into a read-only region, length 0", src: `
lddw %r1, region[1]+0
mov %r2, %r10
add %r2, -8
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "read-only", vmFaults: true},
		{name: "copy to data_end, length 0", src: `
ldxdw %r1, [%r1+8]
mov %r2, %r10
add %r2, -8
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "past the end"},
		{name: "copy past the stack frame, length 0", src: `
mov %r1, %r10
add %r1, 8
mov %r2, %r10
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "outside the stack frame"},
		{name: "copy past a region's end, length 0", src: `
lddw %r1, region[0]+4097
mov %r2, %r10
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "outside region 0", vmFaults: true},
		{name: "hash of the context, 8 bytes", src: `
mov %r2, 8
call 1
exit`, wantCode: CodeHelperArg, wantMsg: "context pointer"},
		{name: "hash of the context, length 0", src: `
mov %r2, 0
call 1
exit`, wantCode: CodeHelperArg, wantMsg: "context pointer"},
		{name: "copy from the context", src: `
mov %r2, %r1
mov %r1, %r10
add %r1, -8
mov %r3, 8
call 2
ldxdw %r0, [%r10-8]
exit`, wantCode: CodeHelperArg, wantMsg: "argument src (r2) is the context pointer"},
		{name: "copy into the context, length 0", src: `
mov %r2, %r10
mov %r3, 0
call 2
exit`, wantCode: CodeHelperArg, wantMsg: "argument dst (r1) is the context pointer"},
		{name: "send of the context", src: `
mov %r3, %r1
mov %r1, 2
mov %r2, 7
mov %r4, 16
call 6
exit`, wantCode: CodeHelperArg, wantMsg: "context pointer"},
		{name: "trace of the context via a spill", src: `
stxdw [%r10-8], %r1
ldxdw %r1, [%r10-8]
mov %r2, 8
call 5
mov %r0, 0
exit`, wantCode: CodeHelperArg, wantMsg: "context pointer"},
		// The safe twins.
		{name: "copy to the stack, length 0", src: `
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -16
mov %r3, 0
call 2
exit`},
		{name: "copy to the frame's end, length 0", src: `
mov %r1, %r10
mov %r2, %r10
mov %r3, 0
call 2
exit`},
		{name: "copy into the reply without a check, length 0", src: `
ldxdw %r1, [%r1+16]
mov %r2, %r10
mov %r3, 0
call 2
exit`},
		{name: "hash of the request without a check, length 0", src: `
ldxdw %r1, [%r1+0]
mov %r2, 0
call 1
mov %r0, 0
exit`},
		{name: "send of the stack, length 0", src: `
mov %r1, 2
mov %r2, 7
mov %r3, %r10
mov %r4, 0
call 6
mov %r0, 0
exit`},
		{name: "copy at a region's end, length 0", src: `
lddw %r1, region[0]+4096
lddw %r2, region[1]+64
mov %r3, 0
call 2
exit`},
		{name: "copy from the request into the stack after a check", src: `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
mov %r1, %r10
add %r1, -8
mov %r3, 8
call 2
ldxdw %r0, [%r10-8]
mov %r0, 0
exit
out:
mov %r0, 0
exit`},
		{name: "hash of a context field copied to the stack", src: `
ldxdw %r2, [%r1+40]
stxdw [%r10-8], %r2
mov %r1, %r10
add %r1, -8
mov %r2, 8
call 1
mov %r0, 0
exit`},
	})
}

// TestContextArithmetic: the context pointer takes no arithmetic at all
// (spec/abi.md); it may be copied, spilled and compared with itself, and
// its fields are read at their offsets from it.
func TestContextArithmetic(t *testing.T) {
	runABICases(t, []abiCase{
		{name: "ctx + 8, then a load", src: "add %r1, 8\nldxdw %r0, [%r1+32]\nexit", wantCode: CodePointerArith, wantMsg: "context pointer"},
		{name: "ctx + 0", src: "add %r1, 0\nldxdw %r0, [%r1+40]\nexit", wantCode: CodePointerArith, wantMsg: "context pointer"},
		{name: "ctx - 8", src: "sub %r1, 8\nldxdw %r0, [%r1+48]\nexit", wantCode: CodePointerArith, wantMsg: "context pointer"},
		{name: "number + ctx", src: "mov %r2, 8\nadd %r2, %r1\nldxdw %r0, [%r2+32]\nexit", wantCode: CodePointerArith, wantMsg: "context pointer"},
		{name: "ctx + a variable", src: "ldxdw %r2, [%r1+40]\nand %r2, 8\nadd %r1, %r2\nldxdw %r0, [%r1]\nexit", wantCode: CodePointerArith, wantMsg: "context pointer"},
		{name: "ctx - ctx", src: "mov %r2, %r1\nsub %r2, %r1\nmov %r0, %r2\nexit", wantCode: CodePointerArith, wantMsg: "context pointer"},
		{name: "32-bit move of ctx", src: "mov32 %r2, %r1\nmov %r0, 0\nexit", wantCode: CodePointerArith, wantMsg: "32-bit"},
		{name: "ctx field at its offset", src: "ldxdw %r0, [%r1+40]\nexit"},
		{name: "ctx copied, spilled and reloaded", src: `
mov %r6, %r1
stxdw [%r10-8], %r6
ldxdw %r2, [%r10-8]
ldxdw %r0, [%r2+48]
exit`},
		{name: "ctx compared with its copy", src: `
mov %r2, %r1
mov %r0, 0
jne %r2, %r1, out
mov %r0, 1
out:
exit`},
	})
}

// TestPacketLength: data_end - data (and reply_end - reply) is a number,
// the bytes from the pointer to the end: at least what a check against
// the end proved, at most a segment's size.
func TestPacketLength(t *testing.T) {
	const load = "ldxdw %r2, [%r1+0]\nldxdw %r3, [%r1+8]\n"
	runABICases(t, []abiCase{
		{name: "data_end - data is the length", src: load + "sub %r3, %r2\nmov %r0, %r3\nexit", wantR0Len: true},
		{name: "data - data_end is its negation", src: load + "sub %r2, %r3\nneg %r2\nmov %r0, %r2\nexit", wantR0Len: true},
		{name: "data_end - (data + 4)", src: load + "add %r2, 4\nsub %r3, %r2\nadd %r3, 4\nmov %r0, %r3\nexit", wantR0Len: true},
		{name: "data_end - data_end", src: load + "sub %r3, %r3\nmov %r0, %r3\nexit"},
		{name: "reply_end - reply", src: "ldxdw %r2, [%r1+16]\nldxdw %r3, [%r1+24]\nsub %r3, %r2\nmov %r0, 0\nexit"},
		{name: "data_end - a variable request pointer", src: load + `
ldxdw %r4, [%r1+40]
and %r4, 7
add %r2, %r4
sub %r3, %r2
mov %r0, 0
exit`},
		{name: "a checked length is at least the check", src: load + `
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
mov %r5, %r3
sub %r5, %r2
jge %r5, 8, ok
mov %r0, %r2     # dead: the length is at least 8
exit
ok:
mov %r0, 0
exit
out:
mov %r0, -1
exit`},
		{name: "an unchecked length may be below 8", src: load + `
mov %r5, %r3
sub %r5, %r2
jge %r5, 8, ok
mov %r0, %r2
exit
ok:
mov %r0, 0
exit`, wantCode: CodePointerLeak, wantMsg: "returns a pointer"},
		{name: "a length is at most a segment", src: load + `
sub %r3, %r2
jle %r3, 0xffffffff, ok
mov %r0, %r2     # dead
exit
ok:
mov %r0, 0
exit`},
		{name: "data_end - reply", src: "ldxdw %r2, [%r1+16]\nldxdw %r3, [%r1+8]\nsub %r3, %r2\nmov %r0, 0\nexit", wantCode: CodePointerArith, wantMsg: "different objects"},
		{name: "32-bit data_end - data", src: load + "sub32 %r3, %r2\nmov %r0, 0\nexit", wantCode: CodePointerArith, wantMsg: "32-bit"},
		{name: "data_end + 1", src: load + "add %r3, 1\nmov %r0, 0\nexit", wantCode: CodePointerArith, wantMsg: "pkt_end"},
	})
}
