package bytecode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"
)

// ErrTruncated reports a stream whose length is not a whole number of slots.
var ErrTruncated = errors.New("truncated instruction stream")

// InsnError is an error about one instruction, named by its slot index.
type InsnError struct {
	Insn int    // slot index
	Msg  string // what is wrong, for a reader
	Err  error  // underlying error, if any
}

func (e *InsnError) Error() string {
	if e.Err != nil && e.Msg == "" {
		return fmt.Sprintf("insn %d: %v", e.Insn, e.Err)
	}
	return fmt.Sprintf("insn %d: %s", e.Insn, e.Msg)
}

func (e *InsnError) Unwrap() error { return e.Err }

func insnErrorf(insn int, format string, args ...any) *InsnError {
	return &InsnError{Insn: insn, Msg: fmt.Sprintf(format, args...)}
}

// Decode turns raw little-endian instruction slots into instructions and
// validates them (see Validate). The result keeps the raw jump offsets.
func Decode(raw []byte) (asm.Instructions, error) {
	if len(raw)%SlotSize != 0 {
		return nil, fmt.Errorf("%w: %d bytes is not a multiple of %d", ErrTruncated, len(raw), SlotSize)
	}
	if len(raw) == 0 {
		return nil, errors.New("empty program")
	}
	insns := make(asm.Instructions, 0, len(raw)/SlotSize)
	r := bytes.NewReader(raw)
	for slot := 0; r.Len() > 0; {
		var ins asm.Instruction
		if err := ins.Unmarshal(r, binary.LittleEndian, "linux"); err != nil {
			return nil, decodeError(slot, raw[slot*SlotSize:], err)
		}
		insns = append(insns, ins)
		slot += int(ins.Width())
	}
	if err := Validate(insns); err != nil {
		return nil, err
	}
	return insns, nil
}

// decodeError rewords cilium/ebpf's messages so that they name the field.
func decodeError(slot int, rest []byte, err error) error {
	op := rest[0]
	switch {
	case op == OpLdDW && len(rest) < 2*SlotSize:
		return &InsnError{Insn: slot, Msg: "lddw is missing its second slot", Err: ErrTruncated}
	case op == OpLdDW:
		return insnErrorf(slot+1, "second slot of lddw must have zero opcode, registers and offset (have % x)", rest[SlotSize:SlotSize+4])
	case op == OpCall:
		return insnErrorf(slot, "helper number %d out of range", binary.LittleEndian.Uint32(rest[4:8]))
	}
	return &InsnError{Insn: slot, Err: err}
}

// Encode turns instructions into raw little-endian slots. Jump and call
// offsets must already be numeric; symbolic references are resolved too. An
// immediate that does not fit in 32 bits (lddw's aside) is an error, where
// cilium/ebpf would silently keep its low half.
func Encode(insns asm.Instructions) ([]byte, error) {
	offsets, _ := Slots(insns)
	for i := range insns {
		if !immFits(&insns[i]) {
			return nil, insnErrorf(offsets[i], "immediate %d does not fit in 32 bits", insns[i].Constant)
		}
	}
	insns = withAtomicImms(insns)
	var buf bytes.Buffer
	buf.Grow(len(insns) * SlotSize)
	if err := insns.Marshal(&buf, binary.LittleEndian); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// withAtomicImms works around cilium/ebpf v0.22.0, whose Instruction.Marshal
// takes the imm of an atomic from Constant before it derives it from the
// opcode: asm.FetchAdd.Mem(...) (Constant 0) would encode as a plain add and
// asm.CmpXchg.Mem(...) as an add too. Decode leaves the raw imm in Constant,
// which is already right. insns is copied only when something needs fixing.
func withAtomicImms(insns asm.Instructions) asm.Instructions {
	copied := false
	for i := range insns {
		op := insns[i].OpCode.AtomicOp()
		if op == asm.InvalidAtomic || insns[i].Constant == int64(op>>8) {
			continue
		}
		if !copied {
			insns = slices.Clone(insns)
			copied = true
		}
		insns[i].Constant = int64(op >> 8)
	}
	return insns
}
