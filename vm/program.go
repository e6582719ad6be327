package vm

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
)

// Program is bytecode translated for the interpreter. It is immutable after
// Load and may be run by many Machines at once.
type Program struct {
	code    []insn // one entry per slot, plus a trailing fell-off sentinel
	slots   int
	regions int // regions the program addresses (highest index + 1)
	insns   asm.Instructions
}

// insn is the interpreter's form of one slot: 16 bytes, with the jump
// target made absolute and the 64-bit immediate pre-sign-extended.
type insn struct {
	imm uint64 // immediate, sign-extended; lddw's full value
	off int32  // memory offset, or absolute target of a jump or local call
	op  opcode
	dst uint8
	src uint8
}

// Slots returns the program's length in instruction slots.
func (p *Program) Slots() int { return p.slots }

// Insns returns the instructions the program was loaded from (another
// engine, vm/jit, compiles them); the caller must not modify them.
func (p *Program) Insns() asm.Instructions { return p.insns }

// Regions returns how many region segments the program addresses.
func (p *Program) Regions() int { return p.regions }

// LoadRaw decodes raw little-endian instruction slots and loads them.
func LoadRaw(raw []byte) (*Program, error) {
	insns, err := bytecode.Decode(raw)
	if err != nil {
		return nil, err
	}
	return Load(insns)
}

// Load validates insns and translates them for the interpreter.
func Load(insns asm.Instructions) (*Program, error) {
	if err := bytecode.Validate(insns); err != nil {
		return nil, err
	}
	offsets, total := bytecode.Slots(insns)
	p := &Program{code: make([]insn, total+1), slots: total, insns: insns}
	for i := range insns {
		slot := offsets[i]
		if err := p.translate(&insns[i], slot); err != nil {
			return nil, err
		}
	}
	p.code[total] = insn{op: opFellOff}
	return p, nil
}

func (p *Program) translate(ins *asm.Instruction, slot int) error {
	out := &p.code[slot]
	out.dst, out.src = uint8(ins.Dst), uint8(ins.Src)
	out.imm = uint64(ins.Constant)
	out.off = int32(ins.Offset)
	raw := bytecode.RawOpcode(ins)
	class := asm.Class(raw & 7)
	reg := raw&0x08 != 0
	switch class {
	case asm.ALU64Class, asm.ALUClass:
		op, imm, err := aluOp(ins, class == asm.ALU64Class, reg)
		if err != nil {
			return &bytecode.InsnError{Insn: slot, Msg: err.Error()}
		}
		out.op, out.imm = op, imm
	case asm.JumpClass, asm.Jump32Class:
		return p.translateJump(ins, out, slot, raw, class == asm.Jump32Class, reg)
	case asm.LdClass: // lddw; Validate admitted only plain and region forms
		out.op = opLdImm
		if ins.Src == bytecode.PseudoMapValue {
			idx, off := uint32(ins.Constant), uint32(uint64(ins.Constant)>>32)
			if int(idx) >= MaxRegions {
				return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("region index %d out of range (at most %d regions)", idx, MaxRegions)}
			}
			p.regions = max(p.regions, int(idx)+1)
			out.imm = Addr(RegionSegment(int(idx)), off)
		}
		p.code[slot+1] = insn{op: opInvalid}
	case asm.LdXClass:
		sx := raw&0xe0 == 0x80
		out.op = [2][4]opcode{{opLdxW, opLdxH, opLdxB, opLdxDW}, {opLdxSW, opLdxSH, opLdxSB, opInvalid}}[b2i(sx)][(raw>>3)&3]
	case asm.StClass:
		out.op = [4]opcode{opStW, opStH, opStB, opStDW}[(raw>>3)&3]
	case asm.StXClass:
		if raw&0xe0 == 0x60 {
			out.op = [4]opcode{opStxW, opStxH, opStxB, opStxDW}[(raw>>3)&3]
			break
		}
		out.op = atomicOp(ins.OpCode.AtomicOp(), raw == bytecode.OpAtomDW)
	}
	if out.op == opInvalid {
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("unsupported opcode %#02x", raw)}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (p *Program) translateJump(ins *asm.Instruction, out *insn, slot int, raw byte, jmp32, reg bool) error {
	target := int32(slot + 1 + int(ins.Offset))
	switch raw {
	case bytecode.OpJa:
		out.op, out.off = opJa, target
		return nil
	case bytecode.OpJa32:
		out.op, out.off = opJa, int32(slot+1+int(ins.Constant))
		return nil
	case bytecode.OpExit:
		out.op = opExit
		return nil
	case bytecode.OpCallX:
		out.op = opCallX
		return nil
	case bytecode.OpCall:
		if ins.Src == bytecode.PseudoCall {
			out.op, out.off = opCallLocal, int32(slot+1+int(ins.Constant))
		} else {
			out.op, out.imm = opCall, uint64(uint32(ins.Constant))
		}
		return nil
	}
	idx := jumpIndex[raw>>4]
	if idx < 0 {
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("unsupported jump opcode %#02x", raw)}
	}
	op := opJeqK + opcode(idx)*2
	if reg {
		op++
	}
	if jmp32 {
		op += opJeq32K - opJeqK
		out.imm = uint64(uint32(ins.Constant))
	}
	out.op, out.off = op, target
	return nil
}

// jumpIndex orders the conditional jumps as the op table does.
var jumpIndex = [16]int{
	0x1: 0, 0x2: 1, 0x3: 2, 0x4: 3, 0x5: 4, 0x6: 5, 0x7: 6, 0xa: 7, 0xb: 8, 0xc: 9, 0xd: 10,
	0x0: -1, 0x8: -1, 0x9: -1, 0xe: -1, 0xf: -1,
}

// aluOp picks the interpreter op for an ALU instruction and pre-computes its
// immediate: shift counts are masked as RFC 9669 says, and division or
// modulo by an immediate zero becomes the defined result (0, or dst kept).
func aluOp(ins *asm.Instruction, alu64, reg bool) (opcode, uint64, error) {
	imm := uint64(ins.Constant)
	width := uint64(31)
	if alu64 {
		width = 63
	}
	var base opcode
	switch ins.OpCode.ALUOp() {
	case asm.Add:
		base = opAddK
	case asm.Sub:
		base = opSubK
	case asm.Mul:
		base = opMulK
	case asm.Div, asm.SDiv:
		if !reg && imm == 0 { // dst = 0
			return pick(alu64, opMovK, opMov32K), 0, nil
		}
		base = opDivK
		if ins.OpCode.ALUOp() == asm.SDiv {
			base = opSDivK
		}
	case asm.Mod, asm.SMod:
		if !reg && imm == 0 { // dst unchanged (ALU32: upper half zeroed)
			return pick(alu64, opNop, opZext32), 0, nil
		}
		base = opModK
		if ins.OpCode.ALUOp() == asm.SMod {
			base = opSModK
		}
	case asm.Or:
		base = opOrK
	case asm.And:
		base = opAndK
	case asm.LSh:
		base, imm = opLshK, imm&width
	case asm.RSh:
		base, imm = opRshK, imm&width
	case asm.ArSh:
		base, imm = opArshK, imm&width
	case asm.Xor:
		base = opXorK
	case asm.Mov:
		base = opMovK
	case asm.Neg:
		return pick(alu64, opNeg64, opNeg32), 0, nil
	case asm.MovSX8:
		return pick(alu64, opMovSX8_64, opMovSX8_32), 0, nil
	case asm.MovSX16:
		return pick(alu64, opMovSX16_64, opMovSX16_32), 0, nil
	case asm.MovSX32:
		if !alu64 {
			return 0, 0, fmt.Errorf("movsx32 needs ALU64")
		}
		return opMovSX32_64, 0, nil
	case asm.Swap:
		return swapOp(ins, alu64)
	default:
		return 0, 0, fmt.Errorf("unsupported ALU operation %#x", uint32(ins.OpCode.ALUOp()))
	}
	op := base
	if reg {
		op++
	}
	if !alu64 {
		op += opAdd32K - opAddK
	}
	return op, imm, nil
}

func pick(alu64 bool, a, b opcode) opcode {
	if alu64 {
		return a
	}
	return b
}

func swapOp(ins *asm.Instruction, alu64 bool) (opcode, uint64, error) {
	var ops [3]opcode
	switch {
	case alu64: // bswap: unconditional
		ops = [3]opcode{opBswap16, opBswap32, opBswap64}
	case bytecode.RawOpcode(ins)&0x08 != 0: // be, on a little-endian model
		ops = [3]opcode{opBswap16, opBswap32, opBswap64}
	default: // le: truncate only
		ops = [3]opcode{opZext16, opZext32, opNop}
	}
	switch ins.Constant {
	case 16:
		return ops[0], 0, nil
	case 32:
		return ops[1], 0, nil
	case 64:
		return ops[2], 0, nil
	}
	return 0, 0, fmt.Errorf("byte swap width %d", ins.Constant)
}

func atomicOp(op asm.AtomicOp, dw bool) opcode {
	var o opcode
	switch op {
	case asm.AddAtomic:
		o = opAtomAddW
	case asm.OrAtomic:
		o = opAtomOrW
	case asm.AndAtomic:
		o = opAtomAndW
	case asm.XorAtomic:
		o = opAtomXorW
	case asm.FetchAdd:
		o = opAtomFetchAddW
	case asm.FetchOr:
		o = opAtomFetchOrW
	case asm.FetchAnd:
		o = opAtomFetchAndW
	case asm.FetchXor:
		o = opAtomFetchXorW
	case asm.Xchg:
		o = opAtomXchgW
	case asm.CmpXchg:
		o = opAtomCmpXchgW
	default:
		return opInvalid
	}
	if dw {
		o += opAtomAddDW - opAtomAddW
	}
	return o
}
