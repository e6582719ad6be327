package bytecode

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/cilium/ebpf/asm"
)

// DisassembleOptions changes how DisassembleTo prints. The zero value prints
// what Disassemble prints.
type DisassembleOptions struct {
	// Labels prints jump and local-call targets as labels named after the
	// target slot (L12), each defined on its own line before the target,
	// instead of relative offsets. Targets outside the program stay numeric.
	Labels bool
}

// Disassemble prints insns in the syntax Assemble reads, one instruction per
// line, with relative jump targets (+N/-N), so that Assemble of the result
// encodes to the same bytes as insns.
//
// Immediates of 32 bits print in decimal when negative or below 0x10000, in
// hex (0x…) otherwise; lddw always prints its 64-bit value in hex, or
// region[IDX]+OFF when its source is PseudoMapValue (+OFF only when OFF is
// not 0). Memory offsets and helper numbers print in decimal.
//
// An instruction that Validate would reject makes Disassemble fail with an
// *InsnError naming its slot; jump targets are not checked.
func Disassemble(insns asm.Instructions) (string, error) {
	var b strings.Builder
	if err := DisassembleTo(&b, insns, DisassembleOptions{}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// DisassembleTo writes the listing of insns to w; see Disassemble.
func DisassembleTo(w io.Writer, insns asm.Instructions, opts DisassembleOptions) error {
	offsets, total := Slots(insns)
	labels := make(map[int]bool)
	if opts.Labels {
		labels = targetSlots(insns, offsets, total)
	}
	target := func(slot int, delta int64) string {
		if t := int64(slot) + 1 + delta; labels[int(t)] && t >= 0 && t < int64(total) {
			return "L" + strconv.FormatInt(t, 10)
		}
		return fmt.Sprintf("%+d", delta)
	}
	bw := bufio.NewWriter(w)
	for i := range insns {
		line, err := formatInsn(&insns[i], offsets[i], target)
		if err != nil {
			return err
		}
		if labels[offsets[i]] {
			fmt.Fprintf(bw, "L%d:\n", offsets[i])
		}
		bw.WriteString(line)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// targetSlots returns the slots that a jump or local call lands on, leaving
// out targets outside the program or inside lddw.
func targetSlots(insns asm.Instructions, offsets []int, total int) map[int]bool {
	starts := make(map[int]bool, len(insns))
	for _, off := range offsets {
		starts[off] = true
	}
	targets := make(map[int]bool)
	for i := range insns {
		ins := &insns[i]
		var delta int64
		switch op := RawOpcode(ins); {
		case op == OpJa32, op == OpCall && ins.Src == PseudoCall:
			delta = ins.Constant
		case isJump(op):
			delta = int64(ins.Offset)
		default:
			continue
		}
		if t := int64(offsets[i]) + 1 + delta; t >= 0 && t < int64(total) && starts[int(t)] {
			targets[int(t)] = true
		}
	}
	return targets
}

// formatInsn prints one instruction; target prints a jump or call offset.
func formatInsn(ins *asm.Instruction, slot int, target func(slot int, delta int64) string) (string, error) {
	if err := validateOne(ins, slot); err != nil {
		return "", err
	}
	m, ok := lookupOp(ins)
	if !ok {
		return "", insnErrorf(slot, "no mnemonic for opcode %#02x", RawOpcode(ins))
	}
	reg := ins.OpCode&sourceBit != 0
	second := func() string { // register or immediate operand
		if reg {
			return formatReg(ins.Src)
		}
		return formatImm(ins.Constant)
	}
	dst := formatReg(ins.Dst)
	switch m.form {
	case formALU:
		return m.name + " " + dst + ", " + second(), nil
	case formNeg, formEndian:
		return m.name + " " + dst, nil
	case formMovSX:
		return m.name + " " + dst + ", " + formatReg(ins.Src), nil
	case formLoadImm64:
		if ins.Src == PseudoMapValue {
			s := fmt.Sprintf("lddw %s, region[%d]", dst, uint32(ins.Constant))
			if off := uint32(uint64(ins.Constant) >> 32); off != 0 {
				s += fmt.Sprintf("+%d", off)
			}
			return s, nil
		}
		return fmt.Sprintf("lddw %s, %#x", dst, uint64(ins.Constant)), nil
	case formLoad:
		return m.name + " " + dst + ", " + formatMem(ins.Src, ins.Offset), nil
	case formStoreImm:
		return m.name + " " + formatMem(ins.Dst, ins.Offset) + ", " + formatImm(ins.Constant), nil
	case formStore, formAtomic:
		return m.name + " " + formatMem(ins.Dst, ins.Offset) + ", " + formatReg(ins.Src), nil
	case formJumpCond:
		return m.name + " " + dst + ", " + second() + ", " + target(slot, int64(ins.Offset)), nil
	case formJa:
		return "ja " + target(slot, int64(ins.Offset)), nil
	case formJa32:
		return "ja32 " + target(slot, ins.Constant), nil
	case formCall:
		switch {
		case reg:
			return "call " + dst, nil
		case ins.Src == PseudoCall:
			return "call local " + target(slot, ins.Constant), nil
		}
		return "call " + strconv.FormatInt(ins.Constant, 10), nil
	case formExit:
		return "exit", nil
	}
	return "", insnErrorf(slot, "no syntax for opcode %#02x", RawOpcode(ins))
}

func formatReg(r asm.Register) string { return "%r" + strconv.Itoa(int(r)) }

// formatImm prints a 32-bit immediate (sign-extended in Constant): decimal
// when negative or below 0x10000, hex above, as the suite mostly writes it.
func formatImm(v int64) string {
	if v < 0x10000 {
		return strconv.FormatInt(v, 10)
	}
	return "0x" + strconv.FormatInt(v, 16)
}

func formatMem(r asm.Register, off int16) string {
	switch {
	case off > 0:
		return fmt.Sprintf("[%s+%d]", formatReg(r), off)
	case off < 0:
		return fmt.Sprintf("[%s%d]", formatReg(r), off)
	}
	return "[" + formatReg(r) + "]"
}
