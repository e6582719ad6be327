package scalar

import (
	"fmt"
	"math/bits"
)

// Op is an ALU operation of RFC 9669.
type Op uint8

const (
	Add Op = iota
	Sub
	Mul
	Div // unsigned; x/0 = 0
	SDiv
	Mod // unsigned; x%0 = x
	SMod
	Or
	And
	Lsh
	Rsh
	Arsh
	Xor
	Mov
	Neg
	MovSX8
	MovSX16
	MovSX32
	Le16
	Le32
	Le64
	Be16
	Be32
	Be64
	Bswap16
	Bswap32
	Bswap64
	numOps
)

var opNames = [...]string{
	"add", "sub", "mul", "div", "sdiv", "mod", "smod", "or", "and", "lsh", "rsh", "arsh", "xor",
	"mov", "neg", "movsx8", "movsx16", "movsx32", "le16", "le32", "le64",
	"be16", "be32", "be64", "bswap16", "bswap32", "bswap64",
}

func (op Op) String() string {
	if op < numOps {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// isSwap reports the byte-order ops, whose width is part of the op: the
// alu64 flag does not change what they compute.
func (op Op) isSwap() bool { return op >= Le16 && op <= Bswap64 }

// eval is the concrete semantics, used to fold constants exactly.
func eval(op Op, alu64 bool, d, s uint64) uint64 {
	if alu64 || op.isSwap() {
		return eval64(op, d, s)
	}
	d32, s32 := uint32(d), uint32(s)
	switch op {
	case Add:
		return uint64(d32 + s32)
	case Sub:
		return uint64(d32 - s32)
	case Mul:
		return uint64(d32 * s32)
	case Div:
		if s32 == 0 {
			return 0
		}
		return uint64(d32 / s32)
	case SDiv:
		if s32 == 0 {
			return 0
		}
		return uint64(uint32(int32(d32) / int32(s32)))
	case Mod:
		if s32 == 0 {
			return uint64(d32)
		}
		return uint64(d32 % s32)
	case SMod:
		if s32 == 0 {
			return uint64(d32)
		}
		return uint64(uint32(int32(d32) % int32(s32)))
	case Or:
		return uint64(d32 | s32)
	case And:
		return uint64(d32 & s32)
	case Lsh:
		return uint64(d32 << (s32 & 31))
	case Rsh:
		return uint64(d32 >> (s32 & 31))
	case Arsh:
		return uint64(uint32(int32(d32) >> (s32 & 31)))
	case Xor:
		return uint64(d32 ^ s32)
	case Mov, MovSX32:
		return uint64(s32)
	case Neg:
		return uint64(-d32)
	case MovSX8:
		return uint64(uint32(int8(s32)))
	case MovSX16:
		return uint64(uint32(int16(s32)))
	}
	return 0
}

func eval64(op Op, d, s uint64) uint64 {
	switch op {
	case Add:
		return d + s
	case Sub:
		return d - s
	case Mul:
		return d * s
	case Div:
		if s == 0 {
			return 0
		}
		return d / s
	case SDiv:
		if s == 0 {
			return 0
		}
		return uint64(int64(d) / int64(s)) // Go defines MinInt64 / -1 = MinInt64
	case Mod:
		if s == 0 {
			return d
		}
		return d % s
	case SMod:
		if s == 0 {
			return d
		}
		return uint64(int64(d) % int64(s)) // and MinInt64 % -1 = 0
	case Or:
		return d | s
	case And:
		return d & s
	case Lsh:
		return d << (s & 63)
	case Rsh:
		return d >> (s & 63)
	case Arsh:
		return uint64(int64(d) >> (s & 63))
	case Xor:
		return d ^ s
	case Mov:
		return s
	case Neg:
		return -d
	case MovSX8:
		return uint64(int8(s))
	case MovSX16:
		return uint64(int16(s))
	case MovSX32:
		return uint64(int32(s))
	case Le16:
		return uint64(uint16(d))
	case Le32:
		return uint64(uint32(d))
	case Le64:
		return d
	case Be16, Bswap16:
		return uint64(bits.ReverseBytes16(uint16(d)))
	case Be32, Bswap32:
		return uint64(bits.ReverseBytes32(uint32(d)))
	case Be64, Bswap64:
		return bits.ReverseBytes64(d)
	}
	return 0
}
