package bytecode

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cilium/ebpf/asm"
)

func TestDecodeStreamErrors(t *testing.T) {
	tests := []struct {
		name      string
		have      string
		want      string
		truncated bool
	}{
		{"empty", "", "empty program", false},
		{"not whole slots", "b7 00 00 00 01 00 00 00 95 00 00 00", "truncated instruction stream: 12 bytes is not a multiple of 8", true},
		{"lddw without second slot", hexExit + "18 00 00 00 01 00 00 00", "insn 1: lddw is missing its second slot", true},
		{"lddw second slot with opcode", "18 00 00 00 01 00 00 00 18 00 00 00 00 00 00 00 " + hexExit, "insn 1: second slot of lddw must have zero opcode", false},
		{"lddw second slot with registers", "18 00 00 00 01 00 00 00 00 10 00 00 00 00 00 00 " + hexExit, "insn 1: second slot of lddw", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(hexBytes(t, tt.have))
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("got %v, want %s", err, tt.want)
			}
			if got := errors.Is(err, ErrTruncated); got != tt.truncated {
				t.Errorf("errors.Is(err, ErrTruncated) = %v, want %v", got, tt.truncated)
			}
		})
	}
}

// cilium/ebpf v0.22.0 marshals builder-made atomics without their operation
// bits; Encode must write them.
func TestEncodeAtomicBuilders(t *testing.T) {
	insns := asm.Instructions{
		asm.FetchAdd.Mem(asm.R1, asm.R2, asm.DWord, 0),
		asm.FetchOr.Mem(asm.R1, asm.R2, asm.Word, 0),
		asm.Xchg.Mem(asm.R1, asm.R2, asm.DWord, 0),
		asm.CmpXchg.Mem(asm.R1, asm.R2, asm.Word, 0),
		asm.Return(),
	}
	before := slices.Clone(insns)
	raw, err := Encode(insns)
	if err != nil {
		t.Fatal(err)
	}
	equalBytes(t, raw, assembleBytes(t, "lock fetch add [%r1], %r2\nlock fetch or32 [%r1], %r2\n"+
		"lock xchg [%r1], %r2\nlock cmpxchg32 [%r1], %r2\nexit\n"))
	if !reflect.DeepEqual(insns, before) {
		t.Error("Encode modified its argument")
	}
}

func TestEncodeRejects(t *testing.T) {
	tests := []struct {
		name  string
		insns asm.Instructions
		want  string
	}{
		{"mov 1<<40", asm.Instructions{
			asm.LoadImm(asm.R1, 1<<40, asm.DWord), // lddw's 64 bits are fine
			{OpCode: asm.Mov.Op(asm.ImmSource), Dst: asm.R0, Constant: 1 << 40},
			asm.Return(),
		}, "insn 2: immediate 1099511627776 does not fit in 32 bits"},
		{"jump imm -1<<32", asm.Instructions{
			{OpCode: asm.JEq.Op(asm.ImmSource), Dst: asm.R0, Constant: -1 << 32},
			asm.Return(),
		}, "insn 0: immediate -4294967296 does not fit in 32 bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Encode(tt.insns); err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %s", err, tt.want)
			}
		})
	}
}
