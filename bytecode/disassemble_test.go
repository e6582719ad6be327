package bytecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
)

func TestDisassemble(t *testing.T) {
	tests := []struct {
		name string
		have string // raw slots in hex
		want string
	}{
		{"decimal below 0x10000", "b7 01 00 00 ff ff 00 00", "mov %r1, 65535"},
		{"hex from 0x10000", "b7 01 00 00 00 00 01 00", "mov %r1, 0x10000"},
		{"negative in decimal", "b4 01 00 00 ff ff ff ff", "mov32 %r1, -1"},
		{"most negative", "55 01 00 00 00 00 00 80", "jne %r1, -2147483648, +0"},
		{"largest", "57 01 00 00 ff ff ff 7f", "and %r1, 0x7fffffff"},
		{"register source", "1f 21 00 00 00 00 00 00", "sub %r1, %r2"},
		{"sdiv", "3f 21 01 00 00 00 00 00", "sdiv %r1, %r2"},
		{"smod32 imm", "94 01 01 00 03 00 00 00", "smod32 %r1, 3"},
		{"movsx", "bc 12 08 00 00 00 00 00", "movsx832 %r2, %r1"},
		{"neg", "87 03 00 00 00 00 00 00", "neg %r3"},
		{"be16", "dc 01 00 00 10 00 00 00", "be16 %r1"},
		{"le64", "d4 01 00 00 40 00 00 00", "le64 %r1"},
		{"bswap32", "d7 01 00 00 20 00 00 00", "bswap32 %r1"},
		{"lddw in hex", "18 00 00 00 88 77 66 55 00 00 00 00 44 33 22 11", "lddw %r0, 0x1122334455667788"},
		{"lddw small", "18 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00", "lddw %r0, 0x1"},
		{"lddw negative", "18 00 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff", "lddw %r0, 0xffffffffffffffff"},
		{"region", "18 21 00 00 02 00 00 00 00 00 00 00 10 00 00 00", "lddw %r1, region[2]+16"},
		{"region without offset", "18 21 00 00 07 00 00 00 00 00 00 00 00 00 00 00", "lddw %r1, region[7]"},
		{"load no offset", "79 10 00 00 00 00 00 00", "ldxdw %r0, [%r1]"},
		{"load sign-extended", "91 a0 ff ff 00 00 00 00", "ldxsb %r0, [%r10-1]"},
		{"store imm", "62 01 02 00 34 12 00 00", "stw [%r1+2], 4660"},
		{"store reg", "73 2a 00 80 00 00 00 00", "stxb [%r10-32768], %r2"},
		{"atomic", "db 1a f8 ff f1 00 00 00", "lock cmpxchg [%r10-8], %r1"},
		{"atomic fetch 32", "c3 21 00 00 a1 00 00 00", "lock fetch xor32 [%r1], %r2"},
		{"jump back", "95 00 00 00 00 00 00 00 2e 21 fe ff 00 00 00 00", "exit\njgt32 %r1, %r2, -2"},
		{"ja", "05 00 00 00 00 00 00 00", "ja +0"},
		{"gotol", "06 00 00 00 00 00 00 00", "ja32 +0"},
		{"helper", "85 00 00 00 05 00 00 00", "call 5"},
		{"local call", "85 10 00 00 00 00 00 00", "call local +0"},
		{"callx", "8d 02 00 00 00 00 00 00", "call %r2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Append exits so that relative targets land inside the program.
			raw := append(hexBytes(t, tt.have), hexBytes(t, strings.Repeat("95 00 00 00 00 00 00 00", 2))...)
			insns, err := Decode(raw)
			if err != nil {
				t.Fatal(err)
			}
			text, err := Disassemble(insns)
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want + "\nexit\nexit\n"
			if text != want {
				t.Errorf("got:\n%swant:\n%s", text, want)
			}
			equalBytes(t, assembleBytes(t, text), raw)
		})
	}
}

func TestDisassembleLabels(t *testing.T) {
	src := "mov %r0, 0\njeq %r1, 0, +4\nlddw %r2, 1\ncall local +2\nja -5\nexit\nja32 -1\nexit\n"
	insns := must(Assemble(src))
	var b strings.Builder
	if err := DisassembleTo(&b, insns, DisassembleOptions{Labels: true}); err != nil {
		t.Fatal(err)
	}
	want := `mov %r0, 0
L1:
jeq %r1, 0, L6
lddw %r2, 0x1
call local L7
ja L1
L6:
exit
L7:
ja32 L7
exit
`
	if b.String() != want {
		t.Errorf("got:\n%swant:\n%s", b.String(), want)
	}
	equalBytes(t, assembleBytes(t, b.String()), assembleBytes(t, src))
}

// Instructions built with cilium/ebpf's helpers print like decoded ones.
func TestDisassembleBuilders(t *testing.T) {
	insns := asm.Instructions{
		asm.Mov.Imm(asm.R0, 1),
		asm.SDiv.Reg32(asm.R0, asm.R1),
		asm.MovSX16.Reg(asm.R2, asm.R3),
		asm.LoadMapValue(asm.R1, 2, 16),
		asm.FetchAdd.Mem(asm.R1, asm.R2, asm.DWord, -8),
		asm.CmpXchg.Mem(asm.R1, asm.R2, asm.Word, 0),
		asm.HostTo(asm.BE, asm.R4, asm.Half),
		asm.BSwap(asm.R4, asm.DWord),
		asm.LoadMemSX(asm.R0, asm.R1, 2, asm.Half),
		asm.FnMapLookupElem.Call(),
		asm.Return(),
	}
	want := `mov %r0, 1
sdiv32 %r0, %r1
movsx1664 %r2, %r3
lddw %r1, region[2]+16
lock fetch add [%r1-8], %r2
lock cmpxchg32 [%r1], %r2
be16 %r4
bswap64 %r4
ldxsh %r0, [%r1+2]
call 1
exit
`
	text, err := Disassemble(insns)
	if err != nil {
		t.Fatal(err)
	}
	if text != want {
		t.Errorf("got:\n%swant:\n%s", text, want)
	}
	equalBytes(t, assembleBytes(t, text), must(Encode(insns)))
}

func TestDisassembleRejectsInvalid(t *testing.T) {
	tests := []struct {
		name  string
		insns asm.Instructions
		slot  int
		msg   string
	}{
		{"unknown opcode after lddw", asm.Instructions{asm.LoadImm(asm.R0, 1, asm.DWord), {OpCode: 0xff}}, 2, "unknown opcode 0xff"},
		{"write to r10", asm.Instructions{asm.Mov.Imm(asm.R10, 1)}, 0, "r10 is read-only"},
		{"alu with offset", asm.Instructions{{OpCode: asm.Add.Op(asm.ImmSource), Offset: 3}}, 0, "reserved offset field is 3"},
		{"register out of range", asm.Instructions{asm.Mov.Reg(asm.R1, 11)}, 0, "invalid source register r11"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Disassemble(tt.insns)
			var ie *InsnError
			if !errors.As(err, &ie) || ie.Insn != tt.slot || !strings.Contains(ie.Msg, tt.msg) {
				t.Errorf("got %v, want insn %d: %s", err, tt.slot, tt.msg)
			}
		})
	}
}
