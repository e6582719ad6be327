package bytecode

import (
	"errors"

	"github.com/cilium/ebpf/asm"
)

// Validate checks that insns is a well-formed instruction stream under RFC
// 9669: every opcode is defined, register numbers are r0–r10, reserved fields
// are zero, r10 is never written, and every jump and local-call target lies
// inside the program and not on the second slot of lddw. Immediates other
// than lddw's must fit in 32 bits, and jumps and calls must be numeric: an
// instruction that still carries a symbolic reference (a cilium/ebpf label,
// which only Encode resolves) is rejected. It does not check types, memory
// safety or termination: that is the verifier's job.
//
// The first problem found is returned as an *InsnError naming the slot.
func Validate(insns asm.Instructions) error {
	if len(insns) == 0 {
		return errors.New("empty program")
	}
	if errs := validateAll(insns, 1); len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// validateAll returns up to limit problems in slot order, at most one per
// instruction (the assembler reports them all at once).
func validateAll(insns asm.Instructions, limit int) []error {
	offsets, total := Slots(insns)
	wide := make(map[int]bool) // slots that hold the second half of lddw
	for i := range insns {
		if insns[i].Width() == 2 {
			wide[offsets[i]+1] = true
		}
	}
	target := func(slot, t int, what string) error {
		if t < 0 || t >= total {
			return insnErrorf(slot, "%s target %d is outside the program (0..%d)", what, t, total-1)
		}
		if wide[t] {
			return insnErrorf(slot, "%s target %d is the second slot of lddw", what, t)
		}
		return nil
	}
	var errs []error
	for i := range insns {
		ins := &insns[i]
		slot := offsets[i]
		err := validateOne(ins, slot)
		if err == nil {
			switch op := RawOpcode(ins); {
			case op == OpJa32:
				err = target(slot, slot+1+int(ins.Constant), "jump")
			case op == OpCall && ins.Src == PseudoCall:
				err = target(slot, slot+1+int(ins.Constant), "call")
			case isJump(op):
				err = target(slot, slot+1+int(ins.Offset), "jump")
			}
		}
		if err != nil {
			if errs = append(errs, err); len(errs) >= limit {
				break
			}
		}
	}
	return errs
}

// isJump reports whether op is ja or a conditional jump (it has an offset target).
func isJump(op byte) bool {
	class := op & 7
	if class != 5 && class != 6 {
		return false
	}
	switch op & 0xf0 {
	case 0x80, 0x90, 0xe0: // call, exit, may_goto
		return false
	case 0x00:
		return op == OpJa
	}
	return true
}

func validateOne(ins *asm.Instruction, slot int) error {
	op := RawOpcode(ins)
	// A symbolic jump or call (asm.JEq.Imm(r, 0, "out")) keeps a placeholder
	// offset until Encode marshals it; run as is, it would jump to itself.
	if ref := ins.Reference(); ref != "" {
		return insnErrorf(slot, "unresolved reference to %q (encode with bytecode.Encode, which resolves labels)", ref)
	}
	if !immFits(ins) {
		return insnErrorf(slot, "immediate %d does not fit in 32 bits", ins.Constant)
	}
	if ins.Dst > MaxRegister {
		return insnErrorf(slot, "invalid destination register r%d", ins.Dst)
	}
	if ins.Src > MaxRegister {
		return insnErrorf(slot, "invalid source register r%d", ins.Src)
	}
	switch asm.Class(op & 7) {
	case asm.ALUClass, asm.ALU64Class:
		return validateALU(ins, slot, op)
	case asm.JumpClass, asm.Jump32Class:
		return validateJump(ins, slot, op)
	case asm.LdClass:
		if op != OpLdDW {
			if op&0xe0 == 0x20 || op&0xe0 == 0x40 {
				return insnErrorf(slot, "legacy packet access (ld abs/ind, opcode %#02x) is not supported", op)
			}
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
		if ins.Src != 0 && ins.Src != PseudoMapValue {
			return insnErrorf(slot, "lddw with pseudo source %d is not supported (only 0 and %d, a region address)", ins.Src, PseudoMapValue)
		}
		if ins.Offset != 0 {
			return insnErrorf(slot, "lddw has a non-zero offset %d", ins.Offset)
		}
		return writesDst(ins, slot)
	case asm.LdXClass:
		switch op & 0xe0 {
		case 0x60: // mem
		case 0x80: // memsx
			if op&0x18 == 0x18 {
				return insnErrorf(slot, "unknown opcode %#02x (no sign-extending 64-bit load)", op)
			}
		default:
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
		if ins.Constant != 0 {
			return insnErrorf(slot, "load has a non-zero immediate %d", ins.Constant)
		}
		return writesDst(ins, slot)
	case asm.StClass:
		if op&0xe0 != 0x60 {
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
		if ins.Src != 0 {
			return insnErrorf(slot, "store of an immediate has a source register r%d", ins.Src)
		}
	case asm.StXClass:
		switch op & 0xe0 {
		case 0x60:
			if ins.Constant != 0 {
				return insnErrorf(slot, "store has a non-zero immediate %d", ins.Constant)
			}
		case 0xc0:
			if op != OpAtomW && op != OpAtomDW {
				return insnErrorf(slot, "atomic operation of size %d bytes is not defined (only 4 and 8)", asm.Size(op&0x18).Sizeof())
			}
			atomic := ins.OpCode.AtomicOp()
			switch atomic {
			case asm.AddAtomic, asm.OrAtomic, asm.AndAtomic, asm.XorAtomic, asm.CmpXchg:
			case asm.FetchAdd, asm.FetchOr, asm.FetchAnd, asm.FetchXor, asm.Xchg:
				if ins.Src == asm.R10 {
					return insnErrorf(slot, "r10 is read-only (atomic fetch writes its source register)")
				}
			default:
				return insnErrorf(slot, "unknown atomic operation imm=%#x", uint32(ins.Constant))
			}
			// The operation lives in the opcode (cilium/ebpf folds the low 9
			// bits of imm into it); Decode keeps the raw imm in Constant and
			// builders leave 0. Other bits would be dropped by Encode.
			if ins.Constant != 0 && ins.Constant != int64(atomic>>8) {
				return insnErrorf(slot, "unknown atomic operation imm=%#x", uint32(ins.Constant))
			}
		default:
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
	}
	return nil
}

// immFits reports whether ins's immediate fits its encoding: only lddw has
// 64 bits, every other instruction 32 (cilium/ebpf keeps atomic operations
// and helper numbers in Constant too; theirs fit). A wider Constant would be
// truncated by cilium/ebpf's Marshal, so the instruction would run
// differently before and after encoding.
func immFits(ins *asm.Instruction) bool {
	return RawOpcode(ins) == OpLdDW || ins.Constant == int64(int32(ins.Constant))
}

func writesDst(ins *asm.Instruction, slot int) error {
	if ins.Dst == asm.R10 {
		return insnErrorf(slot, "r10 is read-only")
	}
	return nil
}

func validateALU(ins *asm.Instruction, slot int, op byte) error {
	alu64 := op&7 == byte(asm.ALU64Class)
	reg := op&0x08 != 0
	code := op & 0xf0
	switch code {
	case 0x00, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x90, 0xa0, 0xb0, 0xc0:
	case 0x80: // neg
		if reg {
			return insnErrorf(slot, "neg takes no source operand (opcode %#02x)", op)
		}
		if ins.Constant != 0 || ins.Src != 0 {
			return insnErrorf(slot, "neg has a non-zero immediate or source register")
		}
	case 0xd0: // byte swaps
		if alu64 && reg {
			return insnErrorf(slot, "unknown opcode %#02x (bswap has no register form)", op)
		}
		if c := ins.Constant; c != 16 && c != 32 && c != 64 {
			return insnErrorf(slot, "byte swap width must be 16, 32 or 64 (have %d)", c)
		}
		if ins.Src != 0 || ins.Offset != 0 {
			return insnErrorf(slot, "byte swap has a non-zero source register or offset")
		}
		return writesDst(ins, slot)
	default:
		return insnErrorf(slot, "unknown opcode %#02x", op)
	}
	// cilium/ebpf folds the defined offsets (sdiv, smod, movsx) into the
	// opcode; what is left in Offset is undefined.
	if ins.Offset != 0 {
		switch code {
		case 0x30, 0x90:
			return insnErrorf(slot, "offset of div/mod must be 0 (unsigned) or 1 (signed), have %d", ins.Offset)
		case 0xb0:
			return insnErrorf(slot, "offset of mov must be 0, 8, 16 or 32 (sign extension), have %d", ins.Offset)
		}
		return insnErrorf(slot, "reserved offset field is %d, must be 0", ins.Offset)
	}
	switch ins.OpCode.ALUOp() {
	case asm.MovSX8, asm.MovSX16, asm.MovSX32:
		if !reg {
			return insnErrorf(slot, "movsx takes a register source")
		}
		if !alu64 && ins.OpCode.ALUOp() == asm.MovSX32 {
			return insnErrorf(slot, "32-bit movsx from 32 bits is not defined (offset 32 needs ALU64)")
		}
	}
	if reg && ins.Constant != 0 {
		return insnErrorf(slot, "register-source ALU instruction has a non-zero immediate %d", ins.Constant)
	}
	if !reg && ins.Src != 0 {
		return insnErrorf(slot, "immediate-source ALU instruction has a source register r%d", ins.Src)
	}
	return writesDst(ins, slot)
}

func validateJump(ins *asm.Instruction, slot int, op byte) error {
	jmp32 := op&7 == byte(asm.Jump32Class)
	reg := op&0x08 != 0
	switch code := op & 0xf0; code {
	case 0x00: // ja / gotol
		if reg {
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
		if ins.Dst != 0 || ins.Src != 0 {
			return insnErrorf(slot, "ja has non-zero register fields")
		}
		if jmp32 && ins.Offset != 0 {
			return insnErrorf(slot, "gotol has a non-zero offset field (its target is in imm)")
		}
		if !jmp32 && ins.Constant != 0 {
			return insnErrorf(slot, "ja has a non-zero immediate (use gotol for 32-bit offsets)")
		}
		return nil
	case 0x80: // call
		if jmp32 {
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
		if reg { // callx: helper number in dst
			if ins.Src != 0 || ins.Constant != 0 || ins.Offset != 0 {
				return insnErrorf(slot, "callx has non-zero src, imm or offset")
			}
			return nil
		}
		if ins.Dst != 0 || ins.Offset != 0 {
			return insnErrorf(slot, "call has non-zero dst or offset")
		}
		switch ins.Src {
		case 0:
			// cilium/ebpf cannot encode negative helper numbers or ones
			// with its platform tag bits (28 and up) set.
			if ins.Constant < 0 || ins.Constant > maxHelper {
				return insnErrorf(slot, "helper number %d out of range (0..%d)", ins.Constant, maxHelper)
			}
			return nil
		case PseudoCall:
			return nil
		}
		return insnErrorf(slot, "call with src=%d (kernel function calls) is not supported", ins.Src)
	case 0x90: // exit
		if jmp32 || reg {
			return insnErrorf(slot, "unknown opcode %#02x", op)
		}
		if ins.Dst != 0 || ins.Src != 0 || ins.Offset != 0 || ins.Constant != 0 {
			return insnErrorf(slot, "exit has non-zero fields")
		}
		return nil
	case 0xe0, 0xf0:
		return insnErrorf(slot, "unknown opcode %#02x", op)
	}
	if reg && ins.Constant != 0 {
		return insnErrorf(slot, "register-source jump has a non-zero immediate %d", ins.Constant)
	}
	if !reg && ins.Src != 0 {
		return insnErrorf(slot, "immediate-source jump has a source register r%d", ins.Src)
	}
	return nil
}
