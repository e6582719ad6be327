package xdp

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// emitter builds a stream of instructions with labels: jumps name their
// target, and a label given while another is still waiting for its
// instruction becomes an alias of it (an instruction has one symbol).
// Everything it emits is deterministic.
type emitter struct {
	insns   asm.Instructions
	pending string            // label of the next instruction
	alias   map[string]string // label → the label its instruction carries
	next    int               // counter for fresh labels
	prefix  string            // keeps the labels of one function apart from another's
}

func newEmitter(prefix string) *emitter {
	return &emitter{alias: map[string]string{}, prefix: prefix}
}

// fresh returns a new label unique within the emitter.
func (e *emitter) fresh(what string) string {
	e.next++
	return fmt.Sprintf("%s.%s.%d", e.prefix, what, e.next)
}

// label names the next instruction.
func (e *emitter) label(name string) {
	if e.pending != "" {
		e.alias[name] = e.pending
		return
	}
	e.pending = name
}

func (e *emitter) add(insns ...asm.Instruction) {
	for _, ins := range insns {
		if e.pending != "" {
			ins = ins.WithSymbol(e.pending)
			e.pending = ""
		}
		e.insns = append(e.insns, ins)
	}
}

// finish resolves the aliases and returns the instructions. A label left
// waiting at the end (nothing after it) is a bug in the generator.
func (e *emitter) finish() (asm.Instructions, error) {
	if e.pending != "" {
		return nil, fmt.Errorf("xdp: internal error: label %q names no instruction", e.pending)
	}
	for i := range e.insns {
		ref := e.insns[i].Reference()
		if ref == "" {
			continue
		}
		for {
			to, ok := e.alias[ref]
			if !ok {
				break
			}
			ref = to
		}
		e.insns[i] = e.insns[i].WithReference(ref)
	}
	return e.insns, nil
}

// atomicInsn returns the atomic instruction op at [dst+off] with src, its imm
// set from the opcode (cilium/ebpf v0.22.0 would otherwise encode the imm
// from Constant, 0: a plain add).
func atomicInsn(op asm.AtomicOp, dst, src asm.Register, size asm.Size, off int16) asm.Instruction {
	ins := op.Mem(dst, src, size, off)
	ins.Constant = int64(op >> 8)
	return ins
}

// mapValue loads the address of byte off of the single value of the named
// array map (BPF_PSEUDO_MAP_VALUE); bind associates the name with the map.
func mapValue(dst asm.Register, name string, off uint32) asm.Instruction {
	return asm.LoadMapValue(dst, 0, off).WithReference(name)
}

// mapPtr loads the named map's pointer, for helpers.
func mapPtr(dst asm.Register, name string) asm.Instruction {
	return asm.LoadMapPtr(dst, 0).WithReference(name)
}

// lookup emits r0 = bpf_map_lookup_elem(map, &key) for a u32 key held in
// reg, through the stack slot at off (below r10), and jumps to onNull
// when the element does not exist. r1–r5 are clobbered.
func (e *emitter) lookup(name string, reg asm.Register, slot int16, onNull string) {
	e.add(
		asm.StoreMem(asm.R10, slot, reg, asm.Word),
		mapPtr(asm.R1, name),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, int32(slot)),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, onNull),
	)
}

// rotl emits x = x <<< b (0 < b < 64) with tmp as scratch.
func (e *emitter) rotl(x, tmp asm.Register, b int32) {
	e.add(
		asm.Mov.Reg(tmp, x),
		asm.RSh.Imm(tmp, 64-b),
		asm.LSh.Imm(x, b),
		asm.Or.Reg(x, tmp),
	)
}

// u32imm is the imm32 whose bits are v.
func u32imm(v uint32) int32 { return int32(v) }

// u64imm is the lddw imm whose bits are v.
func u64imm(v uint64) int64 { return int64(v) }

// storeImm64 emits *(u64 *)(dst + off) = imm (sign-extended from 32
// bits), which asm.StoreImm does not build.
func storeImm64(dst asm.Register, off int16, imm int32) asm.Instruction {
	return asm.Instruction{OpCode: asm.OpCode(asm.StClass).SetMode(asm.MemMode).SetSize(asm.DWord), Dst: dst, Offset: off, Constant: int64(imm)}
}
