package verifygen

import (
	"errors"
	"slices"
	"testing"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// TestGenerateDeterministic: the same seed and options give the same
// bytes, and every program is valid bytecode with one origin per
// instruction.
func TestGenerateDeterministic(t *testing.T) {
	for _, opts := range []Options{{}, {Kernel: true}} {
		for seed := range uint64(300) {
			p, q := Generate(seed, opts), Generate(seed, opts)
			a, err := bytecode.Encode(p.Insns)
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			b, _ := bytecode.Encode(q.Insns)
			if !slices.Equal(a, b) || p.MemSize != q.MemSize || !slices.Equal(p.Defects, q.Defects) {
				t.Fatalf("seed %d (kernel %v): two programs from one seed differ", seed, opts.Kernel)
			}
			if err := bytecode.Validate(p.Insns); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			if len(p.Origin) != len(p.Insns) || len(p.Proven) != len(p.Insns) {
				t.Fatalf("seed %d: %d instructions, %d origins, %d proven flags", seed, len(p.Insns), len(p.Origin), len(p.Proven))
			}
			for _, h := range p.Hints {
				for _, v := range h.Values {
					if h.Off < 0 || h.Off+len(v) > int(p.MemSize) {
						t.Fatalf("seed %d: hint at %d of %d bytes outside memory %d", seed, h.Off, len(v), p.MemSize)
					}
				}
			}
		}
	}
}

// TestEvalALU checks the evaluator on the edges RFC 9669 defines.
func TestEvalALU(t *testing.T) {
	for _, tc := range []struct {
		name     string
		ins      asm.Instruction
		dst, src uint64
		want     uint64
	}{
		{"div by zero", asm.Div.Reg(asm.R1, asm.R2), 7, 0, 0},
		{"mod by zero keeps dst", asm.Mod.Reg(asm.R1, asm.R2), 7, 0, 7},
		{"mod32 by zero zero-extends", asm.Mod.Reg32(asm.R1, asm.R2), 1<<32 | 7, 0, 7},
		{"sdiv min by -1", asm.SDiv.Imm(asm.R1, -1), 1 << 63, 0, 1 << 63},
		{"smod min by -1", asm.SMod.Imm(asm.R1, -1), 1 << 63, 0, 0},
		{"imm sign-extends", asm.Add.Imm(asm.R1, -1), 1, 0, 0},
		{"alu32 truncates", asm.Add.Imm32(asm.R1, 1), 0xffffffff, 0, 0},
		{"shift count masked", asm.LSh.Reg(asm.R1, asm.R2), 1, 65, 2},
		{"arsh32", asm.ArSh.Imm32(asm.R1, 4), 0x80000000, 0, 0xf8000000},
		{"movsx8", asm.MovSX8.Reg(asm.R1, asm.R2), 0, 0x80, 0xffffffffffffff80},
		{"movsx16 in 32 bits", asm.MovSX16.Reg32(asm.R1, asm.R2), 0, 0x8000, 0xffff8000},
		{"be16", asm.HostTo(asm.BE, asm.R1, asm.Half), 0x11223344, 0, 0x4433},
		{"le32 truncates", asm.HostTo(asm.LE, asm.R1, asm.Word), 0x1122334455667788, 0, 0x55667788},
		{"bswap64", asm.BSwap(asm.R1, asm.DWord), 0x0102030405060708, 0, 0x0807060504030201},
		{"neg32", asm.Neg.Imm32(asm.R1, 0), 1, 0, 0xffffffff},
	} {
		if have := EvalALU(&tc.ins, tc.dst, tc.src); have != tc.want {
			t.Errorf("%s: have %#x, want %#x", tc.name, have, tc.want)
		}
	}
}

// TestCheck: the reference interpreter accepts clean runs and names the
// rule each broken one breaks.
func TestCheck(t *testing.T) {
	ldx := func(dst, src asm.Register, off int16, size asm.Size) asm.Instruction {
		return asm.LoadMem(dst, src, off, size)
	}
	exit0 := []asm.Instruction{asm.Mov.Imm(asm.R0, 0), asm.Return()}
	for _, tc := range []struct {
		name  string
		insns asm.Instructions
		want  string // rule, or "" for a clean run
	}{
		{"clean", append(asm.Instructions{ldx(asm.R0, asm.R1, 7, asm.Byte)}, asm.Return()), ""},
		{"past the end", append(asm.Instructions{ldx(asm.R0, asm.R1, 7, asm.Half)}, asm.Return()), "out-of-bounds"},
		{"below the frame", append(asm.Instructions{storeImm(asm.R10, -513, 0, asm.Byte)}, exit0...), "out-of-bounds"},
		{"uninit stack", append(asm.Instructions{ldx(asm.R0, asm.R10, -8, asm.Byte)}, asm.Return()), "uninit-stack"},
		{"uninit reg", asm.Instructions{asm.Mov.Reg(asm.R0, asm.R3), asm.Return()}, "uninit-reg"},
		{"pointer to memory", append(asm.Instructions{asm.StoreMem(asm.R1, 0, asm.R10, asm.DWord)}, exit0...), "pointer-leak"},
		{"pointer returned", asm.Instructions{asm.Mov.Reg(asm.R0, asm.R1), asm.Return()}, "pointer-leak"},
		{"spill and refill", asm.Instructions{
			asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord), ldx(asm.R2, asm.R10, -8, asm.DWord),
			ldx(asm.R0, asm.R2, 0, asm.Byte), asm.Return()}, ""},
		{"half a spill", asm.Instructions{
			asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord), ldx(asm.R0, asm.R10, -8, asm.Word), asm.Return()}, "pointer-leak"},
		{"rest of a spill", asm.Instructions{
			asm.StoreMem(asm.R10, -8, asm.R1, asm.DWord), storeImm(asm.R10, -8, 0, asm.Byte),
			ldx(asm.R0, asm.R10, -7, asm.Byte), asm.Return()}, "pointer-leak"},
		{"pointer or", append(asm.Instructions{asm.Or.Imm(asm.R1, 0)}, exit0...), "pointer-arith"},
		{"pointer vs number", asm.Instructions{asm.JEq.Imm(asm.R1, 0, ""), asm.Mov.Imm(asm.R0, 0), asm.Return()}, "pointer-compare"},
		{"misaligned atomic", append(asm.Instructions{asm.Mov.Imm(asm.R2, 1), asm.AddAtomic.Mem(asm.R1, asm.R2, asm.Word, 2)}, exit0...), "misaligned"},
		{"budget", asm.Instructions{asm.Ja.Label(""), asm.Return()}, "budget"},
	} {
		insns := slices.Clone(tc.insns)
		for i := range insns {
			if ref := insns[i].Reference(); ref == "" && isBranch(&insns[i]) {
				insns[i].Offset = -1 // the "budget" case jumps to itself
				if tc.name != "budget" {
					insns[i].Offset = 0
				}
			}
		}
		_, _, err := Check(insns, make([]byte, 8), 100)
		var v *Violation
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && !errors.As(err, &v):
			t.Errorf("%s: have %v, want a %s violation", tc.name, err, tc.want)
		case tc.want != "" && v.Rule != tc.want:
			t.Errorf("%s: have %v, want rule %s", tc.name, err, tc.want)
		}
	}
}
