package vm

// opcode is the interpreter's dense instruction numbering, so that the main
// switch compiles to a jump table. K forms take the immediate, X forms the
// source register; each X form is its K form plus one.
//
// program.go computes opcodes by arithmetic on this order, so it must not
// change without it: X = K+1 for every pair; the ALU32 group is the ALU64
// group shifted by opAdd32K-opAddK, in the same order; the conditional jumps
// follow jumpIndex's order, the JMP32 group shifted by opJeq32K-opJeqK; and
// each 64-bit atomic is its 32-bit one plus opAtomAddDW-opAtomAddW.
type opcode uint8

const (
	opInvalid opcode = iota // the second slot of lddw; never executed
	opFellOff               // sentinel after the last slot

	// ALU64, in K/X pairs.
	opAddK
	opAddX
	opSubK
	opSubX
	opMulK
	opMulX
	opDivK
	opDivX
	opSDivK
	opSDivX
	opOrK
	opOrX
	opAndK
	opAndX
	opLshK
	opLshX
	opRshK
	opRshX
	opModK
	opModX
	opSModK
	opSModX
	opXorK
	opXorX
	opMovK
	opMovX
	opArshK
	opArshX

	// ALU32, same order.
	opAdd32K
	opAdd32X
	opSub32K
	opSub32X
	opMul32K
	opMul32X
	opDiv32K
	opDiv32X
	opSDiv32K
	opSDiv32X
	opOr32K
	opOr32X
	opAnd32K
	opAnd32X
	opLsh32K
	opLsh32X
	opRsh32K
	opRsh32X
	opMod32K
	opMod32X
	opSMod32K
	opSMod32X
	opXor32K
	opXor32X
	opMov32K
	opMov32X
	opArsh32K
	opArsh32X

	opNeg64
	opNeg32
	opMovSX8_64
	opMovSX16_64
	opMovSX32_64
	opMovSX8_32
	opMovSX16_32
	opZext16 // le16
	opZext32 // le32, and mod32 by an immediate zero
	opNop    // le64, and mod64 by an immediate zero
	opBswap16
	opBswap32
	opBswap64

	// Conditional jumps, K/X pairs, 64-bit then 32-bit.
	opJeqK
	opJeqX
	opJgtK
	opJgtX
	opJgeK
	opJgeX
	opJsetK
	opJsetX
	opJneK
	opJneX
	opJsgtK
	opJsgtX
	opJsgeK
	opJsgeX
	opJltK
	opJltX
	opJleK
	opJleX
	opJsltK
	opJsltX
	opJsleK
	opJsleX
	opJeq32K
	opJeq32X
	opJgt32K
	opJgt32X
	opJge32K
	opJge32X
	opJset32K
	opJset32X
	opJne32K
	opJne32X
	opJsgt32K
	opJsgt32X
	opJsge32K
	opJsge32X
	opJlt32K
	opJlt32X
	opJle32K
	opJle32X
	opJslt32K
	opJslt32X
	opJsle32K
	opJsle32X

	opJa
	opCall      // helper, number in imm
	opCallX     // helper, number in dst register
	opCallLocal // bpf-to-bpf call, target in off
	opExit
	opLdImm // lddw (region addresses resolved at load time)

	opLdxB
	opLdxH
	opLdxW
	opLdxDW
	opLdxSB
	opLdxSH
	opLdxSW
	opStB
	opStH
	opStW
	opStDW
	opStxB
	opStxH
	opStxW
	opStxDW

	opAtomAddW
	opAtomOrW
	opAtomAndW
	opAtomXorW
	opAtomFetchAddW
	opAtomFetchOrW
	opAtomFetchAndW
	opAtomFetchXorW
	opAtomXchgW
	opAtomCmpXchgW
	opAtomAddDW
	opAtomOrDW
	opAtomAndDW
	opAtomXorDW
	opAtomFetchAddDW
	opAtomFetchOrDW
	opAtomFetchAndDW
	opAtomFetchXorDW
	opAtomXchgDW
	opAtomCmpXchgDW

	numOpcodes
)

// The group shapes described at opcode; if one breaks, this does not compile
// (an index other than 0 is out of range, a negative one overflows opcode).
var (
	_ = [1]struct{}{}[(opArsh32X-opAdd32K)-(opArshX-opAddK)]
	_ = [1]struct{}{}[(opJsle32X-opJeq32K)-(opJsleX-opJeqK)]
	_ = [1]struct{}{}[(opJeq32K-opJeqK)-(opJsleX-opJeqK+1)]
	_ = [1]struct{}{}[(opAtomCmpXchgDW-opAtomAddDW)-(opAtomCmpXchgW-opAtomAddW)]
	_ = [1]struct{}{}[(opAtomAddDW-opAtomAddW)-(opAtomCmpXchgW-opAtomAddW+1)]
)
