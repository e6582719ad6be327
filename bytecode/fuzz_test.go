package bytecode

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/conformance"
)

// fuzzSources seeds both fuzz targets: the conformance programs when the
// suite is there, and a few programs that reach the corners of the syntax.
func fuzzSources() []string {
	srcs := []string{
		"mov %r0, 1\nexit\n",
		"lddw %r1, region[2]+16\nlddw %r2, -1\nlock fetch add [%r1-8], %r2\nja32 L\nL: call local +0\nexit\n",
		"sdiv32 %r1, -3\nmovsx3264 %r1, %r2\nbe16 %r1\nswap32 %r1\ncall %r2\ncall 5\njsle32 %r1, 0xffffffff, exit\nexit\n",
		"stdw [%r10-8], 0x7fffffff\nldxsw %r0, [%r10-8]\nlock cmpxchg32 [%r10-8], %r0\njne %r0, %r1, -4\nexit\n",
	}
	if dir, err := conformance.Dir(); err == nil {
		progs, _ := conformance.LoadAll(dir)
		for _, p := range progs {
			srcs = append(srcs, p.Asm)
		}
	}
	return srcs
}

// FuzzDecode: Decode never panics; whatever it accepts encodes back to the
// same bytes and survives Disassemble → Assemble unchanged.
func FuzzDecode(f *testing.F) {
	for _, src := range fuzzSources() {
		if insns, err := Assemble(src); err == nil {
			f.Add(must(Encode(insns)))
		}
	}
	f.Add([]byte{0x18, 0, 0, 0, 1, 0, 0, 0})
	f.Add([]byte{0xdb, 0x21, 0, 0, 0x01, 0x02, 0, 0, 0x95, 0, 0, 0, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		insns, err := Decode(raw)
		if err != nil {
			return
		}
		enc, err := Encode(insns)
		if err != nil {
			t.Fatalf("Encode of a decoded program: %v\n%v", err, insns)
		}
		if !bytes.Equal(enc, raw) {
			t.Fatalf("Encode(Decode(b)) != b:\n% x\n% x", enc, raw)
		}
		again, err := Decode(enc)
		if err != nil || !reflect.DeepEqual(again, insns) {
			t.Fatalf("decoding again: %v\n%v\n%v", err, again, insns)
		}
		for _, opts := range []DisassembleOptions{{}, {Labels: true}} {
			var text strings.Builder
			if err := DisassembleTo(&text, insns, opts); err != nil {
				t.Fatalf("Disassemble(%+v) of a valid program: %v", opts, err)
			}
			re, err := Assemble(text.String())
			if err != nil {
				t.Fatalf("Assemble of disassembly:\n%+v\n%s", err, text.String())
			}
			if got := must(Encode(re)); !bytes.Equal(got, raw) {
				t.Fatalf("round trip through text changed the bytes:\n%s\n% x\n% x", text.String(), got, raw)
			}
		}
	})
}

// FuzzAssemble: Assemble never panics and reports positioned errors; what it
// accepts is valid and survives Disassemble → Assemble unchanged.
func FuzzAssemble(f *testing.F) {
	for _, src := range fuzzSources() {
		f.Add(src)
	}
	f.Add("ja +1\nlddw %r0, 1\nexit\n")
	f.Add("L1:\nL1: mov %r10, 0x100000000 # bad\naddd\n")
	f.Fuzz(func(t *testing.T, src string) {
		insns, err := Assemble(src)
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 || len(list) > maxErrors {
				t.Fatalf("error is not a non-empty ErrorList of at most %d: %#v", maxErrors, err)
			}
			lines := strings.Count(src, "\n") + 1
			for _, e := range list {
				if e.Line < 1 || e.Line > lines || e.Col < 1 || e.Msg == "" {
					t.Fatalf("bad position or message in %q", e.Error())
				}
			}
			return
		}
		if err := Validate(insns); err != nil {
			t.Fatalf("Assemble output fails Validate: %v", err)
		}
		raw, err := Encode(insns)
		if err != nil {
			t.Fatalf("Encode: %v", err)
		}
		decoded, err := Decode(raw)
		if err != nil || !reflect.DeepEqual(decoded, insns) {
			t.Fatalf("Decode(Encode(x)) != x: %v\n%v\n%v", err, decoded, insns)
		}
		text, err := Disassemble(insns)
		if err != nil {
			t.Fatalf("Disassemble: %v", err)
		}
		re, err := Assemble(text)
		if err != nil {
			t.Fatalf("Assemble of disassembly:\n%+v\n%s", err, text)
		}
		if got := must(Encode(re)); !bytes.Equal(got, raw) {
			t.Fatalf("round trip through text changed the bytes:\n%s\n% x\n% x", text, got, raw)
		}
	})
}
