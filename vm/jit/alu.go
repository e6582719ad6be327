package jit

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
)

// emitALU translates an ALU or ALU64 instruction with the semantics of
// spec/vm.md: 32-bit results zero-extended, shift counts masked (Wasm masks
// them the same way), division by zero 0, modulo by zero dst unchanged,
// INT_MIN / -1 = INT_MIN and INT_MIN % -1 = 0.
func (t *translator) emitALU(ins *asm.Instruction, slot int, raw byte, alu64 bool) error {
	c := &t.c
	d := reg(ins.Dst)
	regSrc := raw&0x08 != 0
	imm := ins.Constant
	// src pushes the source operand at the operation's width.
	src := func() {
		switch {
		case regSrc && alu64:
			c.get(reg(ins.Src))
		case regSrc:
			c.get(reg(ins.Src))
			c.op(opI32WrapI64)
		case alu64:
			c.i64(imm)
		default:
			c.i32(int32(imm))
		}
	}
	// dst pushes dst at the operation's width.
	dst := func() {
		c.get(d)
		if !alu64 {
			c.op(opI32WrapI64)
		}
	}
	// store writes the result back, zero-extending a 32-bit one.
	store := func() {
		if !alu64 {
			c.op(opI64ExtendI32U)
		}
		c.set(d)
	}
	w := func(op64, op32 byte) byte {
		if alu64 {
			return op64
		}
		return op32
	}
	binary := func(op64, op32 byte) {
		dst()
		src()
		c.op(w(op64, op32))
		store()
	}
	// srcIsZero pushes src == 0 (register forms only).
	srcIs := func(v int64) {
		src()
		if alu64 {
			c.i64(v)
			c.op(opI64Eq)
		} else {
			c.i32(int32(v))
			c.op(opI32Eq)
		}
	}
	resultType := w(blockTypeI64, wI32)
	switch ins.OpCode.ALUOp() {
	case asm.Add:
		binary(opI64Add, opI32Add)
	case asm.Sub:
		binary(opI64Sub, opI32Sub)
	case asm.Mul:
		binary(opI64Mul, opI32Mul)
	case asm.Or:
		binary(opI64Or, opI32Or)
	case asm.And:
		binary(opI64And, opI32And)
	case asm.Xor:
		binary(opI64Xor, opI32Xor)
	case asm.LSh:
		binary(opI64Shl, opI32Shl)
	case asm.RSh:
		binary(opI64ShrU, opI32ShrU)
	case asm.ArSh:
		binary(opI64ShrS, opI32ShrS)
	case asm.Mov:
		src()
		store()
	case asm.Neg:
		if alu64 {
			c.i64(0)
		} else {
			c.i32(0)
		}
		dst()
		c.op(w(opI64Sub, opI32Sub))
		store()
	case asm.Div, asm.SDiv:
		signed := ins.OpCode.ALUOp() == asm.SDiv
		div := w(opI64DivU, opI32DivU)
		if signed {
			div = w(opI64DivS, opI32DivS)
		}
		negate := func() {
			if alu64 {
				c.i64(0)
			} else {
				c.i32(0)
			}
			dst()
			c.op(w(opI64Sub, opI32Sub))
		}
		if !regSrc {
			switch {
			case alu64 && imm == 0, !alu64 && int32(imm) == 0:
				c.i64(0)
				c.set(d)
			case signed && (alu64 && imm == -1 || !alu64 && int32(imm) == -1):
				negate()
				store()
			default:
				binary(div, div)
			}
			return nil
		}
		// src == 0 ? 0 : (signed && src == -1 ? -dst : dst / src)
		srcIs(0)
		c.op(opIf, resultType)
		if alu64 {
			c.i64(0)
		} else {
			c.i32(0)
		}
		c.op(opElse)
		if signed {
			srcIs(-1)
			c.op(opIf, resultType)
			negate()
			c.op(opElse)
			dst()
			src()
			c.op(div)
			c.op(opEnd)
		} else {
			dst()
			src()
			c.op(div)
		}
		c.op(opEnd)
		store()
	case asm.Mod, asm.SMod:
		rem := w(opI64RemU, opI32RemU)
		if ins.OpCode.ALUOp() == asm.SMod {
			rem = w(opI64RemS, opI32RemS) // Wasm's rem_s of INT_MIN by -1 is 0
		}
		if !regSrc {
			if alu64 && imm == 0 || !alu64 && int32(imm) == 0 {
				if !alu64 { // dst unchanged, upper half zeroed
					dst()
					store()
				}
				return nil
			}
			binary(rem, rem)
			return nil
		}
		srcIs(0)
		c.op(opIf, resultType)
		dst()
		c.op(opElse)
		dst()
		src()
		c.op(rem)
		c.op(opEnd)
		store()
	case asm.MovSX8, asm.MovSX16, asm.MovSX32:
		c.get(reg(ins.Src))
		switch op := ins.OpCode.ALUOp(); {
		case op == asm.MovSX32 && alu64:
			c.op(opI64Extend32S)
		case op == asm.MovSX32:
			return &bytecode.InsnError{Insn: slot, Msg: "jit: movsx32 needs ALU64"}
		case alu64 && op == asm.MovSX8:
			c.op(opI64Extend8S)
		case alu64:
			c.op(opI64Extend16S)
		case op == asm.MovSX8:
			c.op(opI32WrapI64, opI32Extend8S)
		default:
			c.op(opI32WrapI64, opI32Extend16S)
		}
		store()
	case asm.Swap:
		return t.emitSwap(ins, slot, raw, alu64)
	default:
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: unsupported ALU operation %#x", uint32(ins.OpCode.ALUOp()))}
	}
	return nil
}

// emitSwap translates le (truncate), be (byte swap on a little-endian
// model) and bswap (ALU64, unconditional).
func (t *translator) emitSwap(ins *asm.Instruction, slot int, raw byte, alu64 bool) error {
	c := &t.c
	d := reg(ins.Dst)
	swap := alu64 || raw&0x08 != 0
	width := ins.Constant
	if width != 16 && width != 32 && width != 64 {
		return &bytecode.InsnError{Insn: slot, Msg: fmt.Sprintf("jit: byte swap width %d", width)}
	}
	if !swap {
		if width < 64 {
			c.get(d)
			c.i64(int64(uint64(1)<<width - 1))
			c.op(opI64And)
			c.set(d)
		}
		return nil
	}
	switch width {
	case 16: // (x & 0xff) << 8 | (x >> 8) & 0xff
		c.get(d)
		c.i64(0xff)
		c.op(opI64And)
		c.i64(8)
		c.op(opI64Shl)
		c.get(d)
		c.i64(8)
		c.op(opI64ShrU)
		c.i64(0xff)
		c.op(opI64And)
		c.op(opI64Or)
		c.set(d)
	case 32:
		c.get(d)
		c.op(opI32WrapI64)
		bswap32(c)
		c.op(opI64ExtendI32U)
		c.set(d)
	case 64: // two 32-bit swaps, halves exchanged
		c.get(d)
		c.op(opI32WrapI64)
		bswap32(c)
		c.op(opI64ExtendI32U)
		c.i64(32)
		c.op(opI64Shl)
		c.get(d)
		c.i64(32)
		c.op(opI64ShrU)
		c.op(opI32WrapI64)
		bswap32(c)
		c.op(opI64ExtendI32U)
		c.op(opI64Or)
		c.set(d)
	}
	return nil
}

// bswap32 swaps the bytes of the i32 on the stack, through lH:
// rotl(x, 8) & 0x00ff00ff | rotr(x, 8) & 0xff00ff00.
func bswap32(c *code) {
	c.tee(lH)
	c.i32(8)
	c.op(opI32Rotl)
	c.i32(0x00ff00ff)
	c.op(opI32And)
	c.get(lH)
	c.i32(8)
	c.op(opI32Rotr)
	c.i32(-0x00ff0100) // 0xff00ff00
	c.op(opI32And)
	c.op(opI32Or)
}
