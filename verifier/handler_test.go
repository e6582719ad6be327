package verifier

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
)

// TestHandlerABI checks the handler-mode rules of spec/abi.md: typed
// context loads, data_end checks, the reply, regions and helper signatures.
func TestHandlerABI(t *testing.T) {
	regions := []Region{{Name: "table", Size: 4096, Writable: true}, {Name: "config", Size: 64}}
	tests := []struct {
		name     string
		src      string
		wantCode Code   // "" accepts
		wantMsg  string // substring of the message
	}{
		{"request read after data_end check", `
ldxdw %r2, [%r1+0]   # data
ldxdw %r3, [%r1+8]   # data_end
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
ldxdw %r0, [%r2]
exit
out:
mov %r0, -1
exit`, "", ""},
		// A pointer with a variable offset, checked, then carried over a
		// merge where the loop's first run (offset constant 0) meets the
		// later ones: the fold keeps the bytes from the pointer on.
		{"variable request pointer keeps its check across a merge", `
ldxdw %r6, [%r1+0]
ldxdw %r7, [%r1+8]
mov %r8, 0
mov %r0, 0
loop:
mov %r2, %r8
lsh %r2, 2
mov %r3, %r6
add %r3, %r2
mov %r4, %r3
add %r4, 4
jgt %r4, %r7, out
jeq %r8, 7, skip     # a merge between the check and the read
add %r0, 1
skip:
ldxw %r5, [%r3]
add %r0, %r5
add %r8, 1
jlt %r8, 4, loop
exit
out:
mov %r0, -1
exit`, "", ""},
		{"variable request pointer read past its check across a merge", `
ldxdw %r6, [%r1+0]
ldxdw %r7, [%r1+8]
mov %r8, 0
mov %r0, 0
loop:
mov %r2, %r8
lsh %r2, 2
mov %r3, %r6
add %r3, %r2
mov %r4, %r3
add %r4, 4
jgt %r4, %r7, out
jeq %r8, 7, skip
add %r0, 1
skip:
ldxw %r5, [%r3+1]    # one byte past what the check proved
add %r0, %r5
add %r8, 1
jlt %r8, 4, loop
exit
out:
mov %r0, -1
exit`, CodeOutOfBounds, "proved"},
		{"request read without a check", `
ldxdw %r2, [%r1+0]
ldxdw %r0, [%r2]
exit`, CodeOutOfBounds, "before any check against data_end"},
		{"request read one byte past the check", `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
ldxdw %r0, [%r2+1]
exit
out:
mov %r0, -1
exit`, CodeOutOfBounds, "only 8 bytes are proved"},
		{"reversed comparison", `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
mov %r4, %r2
add %r4, 4
jlt %r3, %r4, out
ldxw %r0, [%r2]
exit
out:
mov %r0, -1
exit`, "", ""},
		{"request is read-only", `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
stdw [%r2], 1
out:
mov %r0, 0
exit`, CodeReadOnly, "request"},
		{"reply write after reply_end check", `
ldxdw %r2, [%r1+16]
ldxdw %r3, [%r1+24]
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
stdw [%r2], 42
mov %r0, 8
exit
out:
mov %r0, -1
exit`, "", ""},
		{"context is read-only", "stdw [%r1+32], 0\nmov %r0, 0\nexit", CodeReadOnly, "context"},
		{"context field must be whole", "ldxw %r0, [%r1+32]\nexit", CodeContextAccess, "whole 8-byte fields"},
		{"context scalar field", "ldxdw %r0, [%r1+40]\nexit", "", ""},
		{"context pointer with a variable offset", "ldxdw %r2, [%r1+32]\nand %r2, 8\nadd %r1, %r2\nldxdw %r0, [%r1]\nexit", CodePointerArith, "arithmetic on the context pointer"},
		{"pointer leak into the reply", `
ldxdw %r2, [%r1+16]
ldxdw %r3, [%r1+24]
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, out
stxdw [%r2], %r2
out:
mov %r0, 0
exit`, CodePointerLeak, "reply"},
		{"returning data_end", "ldxdw %r0, [%r1+8]\nexit", CodePointerLeak, "returns a pointer"},
		{"region read and write", `
lddw %r2, region[0]+0
ldxdw %r3, [%r1+40]
and %r3, 511
lsh %r3, 3
add %r2, %r3
ldxdw %r0, [%r2]
stxdw [%r2], %r0
exit`, "", ""},
		{"region index masked one bit too wide", `
lddw %r2, region[0]+0
ldxdw %r3, [%r1+40]
and %r3, 1023
lsh %r3, 3
add %r2, %r3
ldxdw %r0, [%r2]
exit`, CodeOutOfBounds, "region 0 \"table\""},
		{"read-only region", "lddw %r2, region[1]+0\nstdw [%r2], 1\nmov %r0, 0\nexit", CodeReadOnly, "config"},
		{"region that does not exist", "lddw %r2, region[2]+0\nmov %r0, 0\nexit", CodeOutOfBounds, "region 2 does not exist"},
		{"hash of initialised stack", `
stdw [%r10-16], 1
stdw [%r10-8], 2
mov %r1, %r10
add %r1, -16
mov %r2, 16
call 1
exit`, "", ""},
		{"hash of uninitialised stack", `
stdw [%r10-8], 2
mov %r1, %r10
add %r1, -16
mov %r2, 16
call 1
exit`, CodeUninitStack, "hash(ptr, len)"},
		{"hash length unbounded", `
stdw [%r10-8], 2
ldxdw %r2, [%r1+40]
mov %r1, %r10
add %r1, -8
call 1
exit`, CodeHelperArg, "len"},
		{"send of a spilled pointer", `
stxdw [%r10-8], %r1
mov %r3, %r10
add %r3, -8
mov %r4, 8
mov %r1, 2
mov %r2, 7
call 6
exit`, CodePointerLeak, "would expose"},
		{"scalar argument given a pointer", "mov %r2, 1\ncall 7\nexit", CodeHelperArg, "must be a number"},
		{"args are clobbered by a call", "call 3\nmov %r0, %r1\nexit", CodeUninitReg, "r1"},
		{"unknown helper", "call 99\nexit", CodeUnknownHelper, "helpers are 1.."},
		{"merged pointers do not share what a comparison proves", `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
ldxdw %r6, [%r1+40]
mov %r4, %r2
mov %r5, %r2
add %r5, 64
jeq %r6, 0, m
mov %r4, %r2
add %r4, 64
mov %r5, %r2
m:
mov %r7, %r4
add %r7, 8
jgt %r7, %r3, out
ldxdw %r0, [%r5]
exit
out:
mov %r0, -1
exit`, CodeOutOfBounds, "pkt"},
		{"an identity made twice by one instruction is not shared", `
ldxdw %r6, [%r1+0]
ldxdw %r9, [%r1+8]
ldxdw %r8, [%r1+40]
mov %r1, %r6
mov %r2, %r8
and %r2, 1
add %r2, 4000
call local f
mov %r7, %r0
mov %r1, %r6
mov %r2, %r8
and %r2, 1
call local f
add %r0, 8
jgt %r0, %r9, out
ldxdw %r0, [%r7]
exit
out:
mov %r0, -1
exit
f:
add %r1, %r2
mov %r0, %r1
exit`, CodeOutOfBounds, "pkt"},
		{"a variable-offset pointer checked through a copy", `
ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
ldxdw %r6, [%r1+40]
and %r6, 15
mov %r4, %r2
add %r4, %r6
mov %r7, %r4
add %r7, 8
jgt %r7, %r3, out
ldxdw %r0, [%r4]
exit
out:
mov %r0, -1
exit`, "", ""},
		{"copy onto itself does not launder a spilled pointer", `
stxdw [%r10-8], %r10
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -8
mov %r3, 8
call 2
ldxdw %r0, [%r10-8]
exit`, CodePointerLeak, "src"},
		{"hash of a spilled pointer's byte", `
stxdw [%r10-8], %r10
mov %r1, %r10
add %r1, -7
mov %r2, 1
call 1
exit`, CodePointerLeak, "hash"},
		{"copy onto itself does not launder uninitialised bytes", `
mov %r1, %r10
add %r1, -8
mov %r2, %r10
add %r2, -8
mov %r3, 8
call 2
ldxdw %r0, [%r10-8]
exit`, CodeUninitStack, "src"},
		{"copy into the reply", `
ldxdw %r6, [%r1+16]
ldxdw %r3, [%r1+24]
mov %r4, %r6
add %r4, 16
jgt %r4, %r3, out
stdw [%r10-16], 1
stdw [%r10-8], 2
mov %r1, %r6
mov %r2, %r10
add %r2, -16
mov %r3, 16
call 2
mov %r0, 16
exit
out:
mov %r0, -1
exit`, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			insns, err := bytecode.Assemble(tc.src)
			if err != nil {
				t.Fatalf("assemble: %+v", err)
			}
			_, err = Verify(insns, Config{Regions: regions})
			if tc.wantCode == "" {
				if err != nil {
					t.Fatalf("rejected: %+v", err)
				}
				return
			}
			var verr *Error
			if !errors.As(err, &verr) {
				t.Fatalf("accepted, want %s", tc.wantCode)
			}
			if verr.Code != tc.wantCode || !strings.Contains(verr.Msg, tc.wantMsg) {
				t.Fatalf("got %+v\nwant code %s, message containing %q", verr, tc.wantCode, tc.wantMsg)
			}
		})
	}
}

// TestErrorFormat pins the message shape tools rely on.
func TestErrorFormat(t *testing.T) {
	insns, err := bytecode.Assemble("mov %r0, 0\nldxdw %r0, [%r1+60]\nexit")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Verify(insns, Config{Raw: true, MemSize: 64, Position: func(slot int) string { return "p.s:" + string(rune('1'+slot)) }})
	var verr *Error
	if !errors.As(err, &verr) {
		t.Fatalf("accepted")
	}
	if got, want := verr.Error(), "insn 1 (p.s:2): read of 8 bytes at offset 60 is outside the memory (64 bytes) [out-of-bounds]"; got != want {
		t.Errorf("Error() = %q\nwant      %q", got, want)
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(strings.ReplaceAll(fmtPlus(verr), "\t", "")))
	if !strings.Contains(b.String(), "r1: mem(off=0)") {
		t.Errorf("%%+v lacks the register state:\n%s", b.String())
	}
}

func fmtPlus(e *Error) string {
	var b strings.Builder
	e.Format(&fmtState{&b}, 'v')
	return b.String()
}

// fmtState is a minimal fmt.State with the + flag set.
type fmtState struct{ b *strings.Builder }

func (s *fmtState) Write(p []byte) (int, error) { return s.b.Write(p) }
func (s *fmtState) Width() (int, bool)          { return 0, false }
func (s *fmtState) Precision() (int, bool)      { return 0, false }
func (s *fmtState) Flag(c int) bool             { return c == '+' }

// VerifyObject takes the entries, regions and positions from the object.
func TestVerifyObject(t *testing.T) {
	insns, err := bytecode.Assemble("mov %r0, 0\nexit\nlddw %r2, region[0]+8\nldxdw %r0, [%r2]\nexit")
	if err != nil {
		t.Fatal(err)
	}
	code, err := bytecode.Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	obj := &bytecode.Object{Magic: bytecode.ObjectMagic, Version: bytecode.ObjectVersion, Code: code,
		Handlers: []bytecode.Handler{{Name: "a", Entry: 0}, {Name: "b", ID: 1, Entry: 2}},
		Regions:  []bytecode.Region{{Name: "r", Size: 16}},
		Lines:    []bytecode.Line{{Insn: 0, File: "x.naam", Line: 1}, {Insn: 2, File: "x.naam", Line: 7}}}
	rep, err := VerifyObject(obj, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Entries) != 2 || rep.Entries[1].Name != "b" || len(rep.RegionsRead) != 1 {
		t.Errorf("report %+v", rep)
	}
	// Each entry reports what its own runs touch.
	if a, b := rep.Entries[0], rep.Entries[1]; len(a.RegionsRead) != 0 || len(b.RegionsRead) != 1 || b.RegionsRead[0] != 0 || len(a.Helpers)+len(b.Helpers) != 0 {
		t.Errorf("entries %+v", rep.Entries)
	}
	obj.Regions[0].Size = 12 // the load at offset 8 now runs past the end
	_, err = VerifyObject(obj, Config{})
	var verr *Error
	if !errors.As(err, &verr) || verr.Code != CodeOutOfBounds || verr.Pos != "x.naam:7" {
		t.Errorf("got %v, want an out-of-bounds rejection at x.naam:7", err)
	}
}

// TestCodesDocumented: every rejection code is in the codes table of
// spec/verifier.md.
func TestCodesDocumented(t *testing.T) {
	src, err := os.ReadFile("errors.go")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := os.ReadFile("../spec/verifier.md")
	if err != nil {
		t.Fatal(err)
	}
	codes := regexp.MustCompile(`Code += "([a-z-]+)"`).FindAllStringSubmatch(string(src), -1)
	if len(codes) < 20 {
		t.Fatalf("found %d codes in errors.go", len(codes))
	}
	for _, c := range codes {
		if !strings.Contains(string(spec), "| `"+c[1]+"` |") {
			t.Errorf("code %s is not in the table of spec/verifier.md", c[1])
		}
	}
}
