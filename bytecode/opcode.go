package bytecode

import "github.com/cilium/ebpf/asm"

// SlotSize is the size in bytes of one raw instruction slot.
const SlotSize = asm.InstructionSize

// Pseudo source registers of lddw and call (the kernel's BPF_PSEUDO_* values).
const (
	// PseudoCall in the src field of a call marks a local (bpf-to-bpf) call
	// whose imm is the callee's offset relative to the next slot.
	PseudoCall asm.Register = 1
	// PseudoMapValue in the src field of lddw loads the address of a
	// region: imm is the region's index in the object's region table and the
	// second slot's imm is the offset inside it.
	PseudoMapValue asm.Register = 2
)

// MaxRegister is the highest register number; r10 is the read-only frame pointer.
const MaxRegister = asm.R10

// maxHelper is the largest helper number: cilium/ebpf keeps bits 28 and up
// of a helper call's imm for a platform tag and refuses to encode them.
const maxHelper = 1<<28 - 1

// Opcodes the interpreter and the verifier switch on, as raw bytes.
const (
	OpLdDW   = 0x18 // lddw dst, imm64 (two slots)
	OpCall   = 0x85 // call imm (helper) or call local (src = PseudoCall)
	OpCallX  = 0x8d // call dst: helper whose number is in a register (ubpf extension)
	OpExit   = 0x95
	OpJa     = 0x05
	OpJa32   = 0x06 // gotol: 32-bit offset in imm
	OpAtomW  = 0xc3
	OpAtomDW = 0xdb
)

// Slots returns the slot index of every instruction in insns and the total
// number of slots. lddw takes two slots, everything else one.
func Slots(insns asm.Instructions) (offsets []int, total int) {
	offsets = make([]int, len(insns))
	for i := range insns {
		offsets[i] = total
		total += int(insns[i].Width())
	}
	return offsets, total
}

// RawOpcode returns the opcode byte as it appears on the wire (cilium/ebpf
// folds some offset and imm bits into asm.OpCode; this undoes that).
func RawOpcode(ins *asm.Instruction) byte {
	return byte(ins.OpCode & 0xff)
}
