package bytecode

import (
	"errors"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
)

const (
	hexExit = "95 00 00 00 00 00 00 00"
	hexLdDW = "18 00 00 00 01 00 00 00 00 00 00 00 00 00 00 00" // lddw %r0, 1
)

// Bad raw programs through Decode (which validates): every error names the
// slot of the offending instruction.
func TestDecodeRejectsInvalid(t *testing.T) {
	tests := []struct {
		name string
		have string // raw slots in hex
		slot int
		msg  string
	}{
		{"unknown opcode", "b7 00 00 00 00 00 00 00 ff 00 00 00 00 00 00 00 " + hexExit, 1, "unknown opcode 0xff"},
		{"unknown opcode after lddw", hexLdDW + "e7 00 00 00 00 00 00 00 " + hexExit, 2, "unknown opcode 0xe7"},
		{"may_goto", "e5 00 00 00 00 00 00 00 " + hexExit, 0, "unknown opcode 0xe5"},
		{"call in jmp32", "86 00 00 00 01 00 00 00 " + hexExit, 0, "unknown opcode 0x86"},
		{"legacy packet load", "20 00 00 00 00 00 00 00 " + hexExit, 0, "legacy packet access"},
		{"sign-extending 64-bit load", "99 10 00 00 00 00 00 00 " + hexExit, 0, "no sign-extending 64-bit load"},
		{"bad destination register", "b7 0b 00 00 00 00 00 00 " + hexExit, 0, "invalid destination register r11"},
		{"bad source register", "bf c1 00 00 00 00 00 00 " + hexExit, 0, "invalid source register r12"},
		{"jump into lddw", "05 00 01 00 00 00 00 00 " + hexLdDW + hexExit, 0, "jump target 2 is the second slot of lddw"},
		{"jump past the end", "15 01 05 00 00 00 00 00 " + hexExit, 0, "jump target 6 is outside the program (0..1)"},
		{"jump before the start", hexExit + "05 00 fd ff 00 00 00 00", 1, "jump target -1 is outside the program"},
		{"gotol past the end", "06 00 00 00 09 00 00 00 " + hexExit, 0, "jump target 10 is outside the program"},
		{"local call into lddw", "85 10 00 00 01 00 00 00 " + hexLdDW + hexExit, 0, "call target 2 is the second slot of lddw"},
		{"mov to r10", "b7 0a 00 00 01 00 00 00 " + hexExit, 0, "r10 is read-only"},
		{"load into r10", "79 1a 00 00 00 00 00 00 " + hexExit, 0, "r10 is read-only"},
		{"lddw into r10", "18 0a 00 00 01 00 00 00 00 00 00 00 00 00 00 00 " + hexExit, 0, "r10 is read-only"},
		{"byte swap of r10", "dc 0a 00 00 10 00 00 00 " + hexExit, 0, "r10 is read-only"},
		{"atomic fetch into r10", "db a1 00 00 01 00 00 00 " + hexExit, 0, "r10 is read-only (atomic fetch"},
		{"bad byte-swap width", "dc 01 00 00 08 00 00 00 " + hexExit, 0, "byte swap width must be 16, 32 or 64 (have 8)"},
		{"bswap with register bit", "df 01 00 00 10 00 00 00 " + hexExit, 0, "bswap has no register form"},
		{"byte swap with offset", "d4 01 01 00 10 00 00 00 " + hexExit, 0, "byte swap has a non-zero source register or offset"},
		{"unknown atomic operation", "db 21 00 00 02 00 00 00 " + hexExit, 0, "unknown atomic operation imm=0x2"},
		{"atomic imm with stray bits", "db 21 00 00 01 02 00 00 " + hexExit, 0, "unknown atomic operation imm=0x201"},
		{"atomic imm with high bits", "c3 21 00 00 01 00 01 00 " + hexExit, 0, "unknown atomic operation imm=0x10001"},
		{"load-acquire", "db 21 00 00 00 01 00 00 " + hexExit, 0, "unknown atomic operation imm=0x100"},
		{"byte-sized atomic", "d3 21 00 00 00 00 00 00 " + hexExit, 0, "atomic operation of size 1 bytes is not defined"},
		{"negative helper", "85 00 00 00 ff ff ff ff " + hexExit, 0, "helper number -1 out of range"},
		{"helper with platform bits", "85 00 00 00 00 00 00 10 " + hexExit, 0, "helper number 268435456 out of range"},
		{"kfunc call", "85 20 00 00 01 00 00 00 " + hexExit, 0, "call with src=2"},
		{"callx with imm", "8d 02 00 00 01 00 00 00 " + hexExit, 0, "callx has non-zero src, imm or offset"},
		{"exit with fields", "95 01 00 00 00 00 00 00", 0, "exit has non-zero fields"},
		{"ja with imm", "05 00 00 00 01 00 00 00 " + hexExit, 0, "ja has a non-zero immediate"},
		{"gotol with offset", "06 00 01 00 00 00 00 00 " + hexExit, 0, "gotol has a non-zero offset"},
		{"ja with register bit", "0d 00 00 00 00 00 00 00 " + hexExit, 0, "unknown opcode 0x0d"},
		{"sdiv offset 2", "3f 21 02 00 00 00 00 00 " + hexExit, 0, "offset of div/mod must be 0 (unsigned) or 1 (signed), have 2"},
		{"mov offset 4", "bf 21 04 00 00 00 00 00 " + hexExit, 0, "offset of mov must be 0, 8, 16 or 32"},
		{"add with offset", "07 01 01 00 00 00 00 00 " + hexExit, 0, "reserved offset field is 1"},
		{"movsx32 in ALU32", "bc 21 20 00 00 00 00 00 " + hexExit, 0, "32-bit movsx from 32 bits is not defined"},
		{"movsx from imm", "b7 01 08 00 00 00 00 00 " + hexExit, 0, "movsx takes a register source"},
		{"neg with register bit", "8f 21 00 00 00 00 00 00 " + hexExit, 0, "neg takes no source operand"},
		{"neg with imm", "87 01 00 00 01 00 00 00 " + hexExit, 0, "neg has a non-zero immediate"},
		{"register ALU with imm", "0f 21 00 00 01 00 00 00 " + hexExit, 0, "register-source ALU instruction has a non-zero immediate 1"},
		{"imm ALU with src", "07 21 00 00 01 00 00 00 " + hexExit, 0, "immediate-source ALU instruction has a source register r2"},
		{"register jump with imm", "1d 21 00 00 01 00 00 00 " + hexExit, 0, "register-source jump has a non-zero immediate"},
		{"imm jump with src", "15 21 00 00 01 00 00 00 " + hexExit, 0, "immediate-source jump has a source register"},
		{"lddw of a map fd", "18 11 00 00 01 00 00 00 00 00 00 00 00 00 00 00 " + hexExit, 0, "lddw with pseudo source 1 is not supported"},
		{"lddw with offset", "18 01 01 00 01 00 00 00 00 00 00 00 00 00 00 00 " + hexExit, 0, "lddw has a non-zero offset"},
		{"load with imm", "79 10 00 00 01 00 00 00 " + hexExit, 0, "load has a non-zero immediate 1"},
		{"store imm with src", "62 21 00 00 01 00 00 00 " + hexExit, 0, "store of an immediate has a source register"},
		{"store with imm", "63 21 00 00 01 00 00 00 " + hexExit, 0, "store has a non-zero immediate"},
		{"store in atomic-less mode", "42 01 00 00 00 00 00 00 " + hexExit, 0, "unknown opcode 0x42"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(hexBytes(t, tt.have))
			var ie *InsnError
			if !errors.As(err, &ie) || ie.Insn != tt.slot || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %v, want insn %d: ...%s...", err, tt.slot, tt.msg)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		insns asm.Instructions
		want  string // "" for valid
	}{
		{"empty", nil, "empty program"},
		{"builder atomics leave imm 0", asm.Instructions{
			asm.FetchAdd.Mem(asm.R1, asm.R2, asm.DWord, 0),
			asm.Xchg.Mem(asm.R1, asm.R2, asm.Word, 0),
			asm.CmpXchg.Mem(asm.R1, asm.R2, asm.DWord, 0),
			asm.Return(),
		}, ""},
		{"atomic imm disagrees with opcode", asm.Instructions{
			{OpCode: asm.AddAtomic.OpCode(asm.DWord), Dst: asm.R1, Src: asm.R2, Constant: 1},
			asm.Return(),
		}, "insn 0: unknown atomic operation imm=0x1"},
		{"first problem in slot order", asm.Instructions{
			asm.LoadImm(asm.R1, 1, asm.DWord),
			asm.Mov.Imm(asm.R10, 0),
			{OpCode: 0xff},
		}, "insn 2: r10 is read-only"},
		{"local call to itself", asm.Instructions{
			{OpCode: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call), Src: asm.PseudoCall, Constant: -1},
			asm.Return(),
		}, ""},
		{"largest helper", asm.Instructions{asm.BuiltinFunc(maxHelper).Call(), asm.Return()}, ""},
		{"div32 by 1<<32 (would divide by zero)", asm.Instructions{
			{OpCode: asm.Div.Op32(asm.ImmSource), Dst: asm.R0, Constant: 1 << 32},
			asm.Return(),
		}, "insn 0: immediate 4294967296 does not fit in 32 bits"},
		{"mov 1<<40 (Encode would truncate)", asm.Instructions{
			asm.LoadImm(asm.R1, 1<<40, asm.DWord),
			{OpCode: asm.Mov.Op(asm.ImmSource), Dst: asm.R0, Constant: 1 << 40},
			asm.Return(),
		}, "insn 2: immediate 1099511627776 does not fit in 32 bits"},
		{"jump imm below int32", asm.Instructions{
			{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R0, Constant: -1<<31 - 1},
			asm.Return(),
		}, "insn 0: immediate -2147483649 does not fit in 32 bits"},
		{"32-bit extremes fit", asm.Instructions{
			asm.Mov.Imm(asm.R0, -1<<31),
			asm.Mov.Imm(asm.R1, 1<<31-1),
			asm.Return(),
		}, ""},
		{"decoded atomic imm fits", asm.Instructions{
			{OpCode: asm.CmpXchg.OpCode(asm.DWord), Dst: asm.R1, Src: asm.R2, Constant: int64(asm.CmpXchg >> 8)},
			asm.Return(),
		}, ""},
		{"unresolved jump", asm.Instructions{
			asm.Mov.Imm(asm.R0, 0),
			asm.JEq.Imm(asm.R0, 0, "out"),
			asm.Mov.Imm(asm.R0, 1),
			asm.Return().WithSymbol("out"),
		}, `insn 1: unresolved reference to "out" (encode with bytecode.Encode, which resolves labels)`},
		{"unresolved local call", asm.Instructions{
			asm.Call.Label("f"),
			asm.Return(),
			asm.Mov.Imm(asm.R0, 0).WithSymbol("f"),
			asm.Return(),
		}, `insn 0: unresolved reference to "f"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.insns)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}
