package verifygen

import (
	"math/bits"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// imm is an instruction's immediate as an ALU64 operand: sign-extended.
func imm(ins *asm.Instruction) uint64 { return uint64(int64(int32(ins.Constant))) }

// EvalALU is the result of ALU or ALU32 instruction ins (not lddw) on dst
// and, for the register form, src, as RFC 9669 defines it: division by zero
// gives 0, modulo by zero leaves dst (zero-extended in ALU32), shift counts
// are masked, 32-bit results are zero-extended.
func EvalALU(ins *asm.Instruction, dst, src uint64) uint64 {
	op := bytecode.RawOpcode(ins)
	reg := op&0x08 != 0
	aop := ins.OpCode.ALUOp()
	if aop == asm.Swap {
		reg = false // the source bit selects big-endian
	}
	s := imm(ins)
	if reg {
		s = src
	}
	return evalALU(op, aop, ins.Constant, dst, s)
}

// evalALU is EvalALU on a decoded instruction; src is the operand (the
// register's value or the sign-extended imm), k the swap width.
func evalALU(op byte, aop asm.ALUOp, k int64, dst, src uint64) uint64 {
	if aop == asm.Swap {
		alu64 := op&7 == byte(asm.ALU64Class)
		if alu64 || op&0x08 != 0 {
			switch k {
			case 16:
				return uint64(bits.ReverseBytes16(uint16(dst)))
			case 32:
				return uint64(bits.ReverseBytes32(uint32(dst)))
			}
			return bits.ReverseBytes64(dst)
		}
		switch k {
		case 16:
			return uint64(uint16(dst))
		case 32:
			return uint64(uint32(dst))
		}
		return dst
	}
	if op&7 == byte(asm.ALU64Class) {
		return eval64(aop, dst, src)
	}
	return eval32(aop, uint32(dst), uint32(src))
}

func eval64(aop asm.ALUOp, d, s uint64) uint64 {
	switch aop {
	case asm.Add:
		return d + s
	case asm.Sub:
		return d - s
	case asm.Mul:
		return d * s
	case asm.Div:
		if s == 0 {
			return 0
		}
		return d / s
	case asm.SDiv:
		if s == 0 {
			return 0
		}
		return uint64(int64(d) / int64(s))
	case asm.Mod:
		if s == 0 {
			return d
		}
		return d % s
	case asm.SMod:
		if s == 0 {
			return d
		}
		return uint64(int64(d) % int64(s))
	case asm.Or:
		return d | s
	case asm.And:
		return d & s
	case asm.LSh:
		return d << (s & 63)
	case asm.RSh:
		return d >> (s & 63)
	case asm.ArSh:
		return uint64(int64(d) >> (s & 63))
	case asm.Xor:
		return d ^ s
	case asm.Mov:
		return s
	case asm.Neg:
		return -d
	case asm.MovSX8:
		return uint64(int64(int8(s)))
	case asm.MovSX16:
		return uint64(int64(int16(s)))
	case asm.MovSX32:
		return uint64(int64(int32(s)))
	}
	return 0
}

func eval32(aop asm.ALUOp, d, s uint32) uint64 {
	switch aop {
	case asm.Add:
		return uint64(d + s)
	case asm.Sub:
		return uint64(d - s)
	case asm.Mul:
		return uint64(d * s)
	case asm.Div:
		if s == 0 {
			return 0
		}
		return uint64(d / s)
	case asm.SDiv:
		if s == 0 {
			return 0
		}
		return uint64(uint32(int32(d) / int32(s)))
	case asm.Mod:
		if s == 0 {
			return uint64(d)
		}
		return uint64(d % s)
	case asm.SMod:
		if s == 0 {
			return uint64(d)
		}
		return uint64(uint32(int32(d) % int32(s)))
	case asm.Or:
		return uint64(d | s)
	case asm.And:
		return uint64(d & s)
	case asm.LSh:
		return uint64(d << (s & 31))
	case asm.RSh:
		return uint64(d >> (s & 31))
	case asm.ArSh:
		return uint64(uint32(int32(d) >> (s & 31)))
	case asm.Xor:
		return uint64(d ^ s)
	case asm.Mov:
		return uint64(s)
	case asm.Neg:
		return uint64(-d)
	case asm.MovSX8:
		return uint64(uint32(int32(int8(s))))
	case asm.MovSX16:
		return uint64(uint32(int32(int16(s))))
	}
	return 0
}

// EvalCond reports whether conditional jump ins is taken for dst and, in
// the register form, src.
func EvalCond(ins *asm.Instruction, dst, src uint64) bool {
	op := bytecode.RawOpcode(ins)
	jmp32 := op&7 == byte(asm.Jump32Class)
	b := imm(ins)
	if op&0x08 != 0 {
		b = src
	}
	return evalCond(ins.OpCode.JumpOp(), jmp32, dst, b)
}

func evalCond(jop asm.JumpOp, jmp32 bool, a, b uint64) bool {
	if jmp32 {
		a, b = uint64(uint32(a)), uint64(uint32(b))
	}
	sa, sb := int64(a), int64(b)
	if jmp32 {
		sa, sb = int64(int32(a)), int64(int32(b))
	}
	switch jop {
	case asm.JEq:
		return a == b
	case asm.JNE:
		return a != b
	case asm.JGT:
		return a > b
	case asm.JGE:
		return a >= b
	case asm.JLT:
		return a < b
	case asm.JLE:
		return a <= b
	case asm.JSGT:
		return sa > sb
	case asm.JSGE:
		return sa >= sb
	case asm.JSLT:
		return sa < sb
	case asm.JSLE:
		return sa <= sb
	case asm.JSet:
		return a&b != 0
	}
	return false
}

// storeImm is *(size *)(dst + off) = value, for every size: cilium/ebpf's
// asm.StoreImm refuses DWord, which RFC 9669 defines (the imm is
// sign-extended).
func storeImm(dst asm.Register, off int16, value int64, size asm.Size) asm.Instruction {
	return asm.Instruction{OpCode: asm.StoreImmOp(size), Dst: dst, Offset: off, Constant: int64(int32(value))}
}
