package xdp

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// Translation of a verified handler for the kernel (spec/xdp.md, The
// translation). The handler's code is the object's own bytecode: what
// the kernel needs changed is only how it reaches the outside.
//
//   - The context is a 64-byte block on the calling program's stack, laid
//     out as spec/abi.md says, holding real pointers (the request and the
//     reply buffer in the per-CPU scratch), so ctx loads stay as they are.
//   - lddw region[IDX]+OFF becomes a BPF_PSEUDO_MAP_VALUE load of the
//     region's array map: the region's bytes, shared with the host.
//   - Helpers become kernel helpers or subprograms of the tier: hash and
//     copy (fnHash, fnCopy), now (bpf_ktime_get_ns less the node's clock
//     base), random (fnRandom). trace, send and forward have no kernel
//     equivalent: such handlers are not translated.
//   - Local calls and exits stay: the handler is a bpf-to-bpf subprogram
//     of its program, entered with r1 = the context.
//
// Only the code reachable from the handler's entry is taken, each local
// function once, in slot order, so the kernel sees no unreachable
// instruction.

// Subprograms translated helpers call.
const (
	fnHash   = "naam_hash"
	fnCopy   = "naam_copy"
	fnRandom = "naam_random"
)

// translation is one handler's code for the kernel.
type translation struct {
	entry   string           // symbol of the handler's first instruction
	insns   asm.Instructions // its functions, entry first
	regions []int            // object regions the code addresses
	helpers map[uint32]bool  // helpers the code may call
}

// untranslatable says why a handler cannot be translated.
type untranslatable struct{ reason string }

func (u *untranslatable) Error() string { return u.reason }

func notTranslatable(format string, args ...any) error {
	return &untranslatable{reason: fmt.Sprintf(format, args...)}
}

// regionMap names the map of object region idx within a handler program.
func regionMap(idx int) string { return fmt.Sprintf("naam_region%d", idx) }

// translate turns the handler whose entry is slot entry into kernel code.
// prefix keeps its labels apart from the program's own.
func translate(insns asm.Instructions, entry int, prefix string) (*translation, error) {
	offsets, total := bytecode.Slots(insns)
	at := make([]int, total)
	for i := range at {
		at[i] = -1
	}
	for i, s := range offsets {
		at[s] = i
	}
	insn := func(slot int) (*asm.Instruction, bool) {
		if slot < 0 || slot >= total || at[slot] < 0 {
			return nil, false
		}
		return &insns[at[slot]], true
	}
	if _, ok := insn(entry); !ok {
		return nil, fmt.Errorf("xdp: handler entry %d is not an instruction", entry)
	}
	tr := &translation{entry: fmt.Sprintf("%s.f%d", prefix, entry), helpers: map[uint32]bool{}}
	regions := map[int]bool{}
	funcs := []int{entry}
	seen := map[int]bool{entry: true}
	for fi := 0; fi < len(funcs); fi++ {
		start := funcs[fi]
		// The slots reachable from start without entering a callee.
		reach := map[int]bool{}
		targets := map[int]bool{}
		work := []int{start}
		for len(work) > 0 {
			s := work[len(work)-1]
			work = work[:len(work)-1]
			if reach[s] {
				continue
			}
			ins, ok := insn(s)
			if !ok {
				return nil, fmt.Errorf("xdp: slot %d, reached from slot %d, is not an instruction", s, start)
			}
			reach[s] = true
			next := s + int(ins.Width())
			op := bytecode.RawOpcode(ins)
			class := asm.Class(op & 7)
			jump := class == asm.JumpClass || class == asm.Jump32Class
			switch {
			case !jump:
				if ins.IsLoadFromMap() && ins.Src == bytecode.PseudoMapValue {
					regions[int(uint32(ins.Constant))] = true
				}
				work = append(work, next)
			case op == bytecode.OpExit:
			case op == bytecode.OpCall && ins.Src == bytecode.PseudoCall:
				callee := s + 1 + int(ins.Constant)
				if _, ok := insn(callee); !ok {
					return nil, fmt.Errorf("xdp: local call at slot %d to %d, not an instruction", s, callee)
				}
				if !seen[callee] {
					seen[callee] = true
					funcs = append(funcs, callee)
				}
				work = append(work, next)
			case op == bytecode.OpCall:
				id := uint32(ins.Constant)
				switch id {
				case bytecode.HelperHash, bytecode.HelperCopy, bytecode.HelperNow, bytecode.HelperRandom:
				default:
					name := fmt.Sprintf("helper %d", id)
					if h, ok := bytecode.Helper(id); ok {
						name = h.Name
					}
					return nil, notTranslatable("calls %s, which XDP cannot do (slot %d)", name, s)
				}
				tr.helpers[id] = true
				work = append(work, next)
			case op == bytecode.OpJa || op == bytecode.OpJa32:
				t := jumpTarget(ins, s)
				targets[t] = true
				work = append(work, t)
			default: // conditional
				t := jumpTarget(ins, s)
				targets[t] = true
				work = append(work, t, next)
			}
		}
		slots := make([]int, 0, len(reach))
		for s := range reach {
			slots = append(slots, s)
		}
		sort.Ints(slots)
		fname := fmt.Sprintf("%s.f%d", prefix, start)
		label := func(s int) string {
			if s == start {
				return fname
			}
			return fmt.Sprintf("%s.L%d", fname, s)
		}
		// A target that is not start needs its own label; start keeps the
		// function's.
		for i, s := range slots {
			orig, _ := insn(s)
			out := asm.Instruction{OpCode: orig.OpCode, Dst: orig.Dst, Src: orig.Src, Offset: orig.Offset, Constant: orig.Constant}
			op := bytecode.RawOpcode(orig)
			class := asm.Class(op & 7)
			jump := class == asm.JumpClass || class == asm.Jump32Class
			var emitted []asm.Instruction
			switch {
			case out.IsLoadFromMap() && orig.Src == bytecode.PseudoMapValue:
				idx := int(uint32(orig.Constant))
				off := uint32(uint64(orig.Constant) >> 32)
				emitted = []asm.Instruction{mapValue(orig.Dst, regionMap(idx), off)}
			case jump && op == bytecode.OpCall && orig.Src == bytecode.PseudoCall:
				emitted = []asm.Instruction{asm.Call.Label(fmt.Sprintf("%s.f%d", prefix, s+1+int(orig.Constant)))}
			case jump && op == bytecode.OpCall:
				emitted = helperCall(uint32(orig.Constant))
			case jump && op != bytecode.OpExit:
				// cilium/ebpf resolves a reference only where the offset is
				// -1 (gotol: the constant): the code around may have grown.
				if op == bytecode.OpJa32 {
					out.Constant = -1
				} else {
					out.Offset = -1
				}
				emitted = []asm.Instruction{out.WithReference(label(jumpTarget(orig, s)))}
			default:
				emitted = []asm.Instruction{out}
			}
			if s == start || targets[s] {
				emitted[0] = emitted[0].WithSymbol(label(s))
			}
			// A function whose last instruction falls through would run
			// into the next function: the kernel refuses that, and so
			// does the project's verifier; say so clearly all the same.
			if i == len(slots)-1 && !(jump && (op == bytecode.OpExit || op == bytecode.OpJa || op == bytecode.OpJa32)) {
				return nil, fmt.Errorf("xdp: function at slot %d ends at slot %d without exit or jump", start, s)
			}
			tr.insns = append(tr.insns, emitted...)
		}
	}
	for idx := range regions {
		tr.regions = append(tr.regions, idx)
	}
	sort.Ints(tr.regions)
	return tr, nil
}

func jumpTarget(ins *asm.Instruction, slot int) int {
	if bytecode.RawOpcode(ins) == bytecode.OpJa32 {
		return slot + 1 + int(ins.Constant)
	}
	return slot + 1 + int(ins.Offset)
}

// helperCall is the kernel code of a call to a NAAM helper: the
// arguments are in r1–r5 already, the result goes to r0, r1–r5 are
// clobbered, as for a kernel helper.
func helperCall(id uint32) []asm.Instruction {
	switch id {
	case bytecode.HelperHash:
		return []asm.Instruction{asm.Call.Label(fnHash)}
	case bytecode.HelperCopy:
		return []asm.Instruction{asm.Call.Label(fnCopy)}
	case bytecode.HelperRandom:
		return []asm.Instruction{asm.Call.Label(fnRandom)}
	case bytecode.HelperNow:
		return []asm.Instruction{
			asm.FnKtimeGetNs.Call(),
			mapValue(asm.R1, mapConfig, cfgClockBase),
			asm.LoadMem(asm.R1, asm.R1, 0, asm.DWord),
			asm.Sub.Reg(asm.R0, asm.R1),
		}
	}
	panic(fmt.Sprintf("xdp: helper %d has no translation", id)) // translate refused it
}

// emitHash appends fnHash: FNV-1a 64 of r2 bytes at r1 (spec/abi.md), a
// byte at a time, so that the kernel checks every load against the
// memory r1 points to.
func emitHash(e *emitter) {
	loop, done := e.fresh("hash_loop"), e.fresh("hash_done")
	e.label(fnHash)
	e.add(
		asm.LoadImm(asm.R0, -0x340d631b7bdddcdb, asm.DWord), // 0xcbf29ce484222325
		asm.LoadImm(asm.R4, 0x100000001b3, asm.DWord),
		asm.Mov.Imm(asm.R3, 0),
	)
	e.label(loop)
	e.add(
		asm.JGE.Reg(asm.R3, asm.R2, done),
		asm.Mov.Reg(asm.R5, asm.R1),
		asm.Add.Reg(asm.R5, asm.R3),
		asm.LoadMem(asm.R5, asm.R5, 0, asm.Byte),
		asm.Xor.Reg(asm.R0, asm.R5),
		asm.Mul.Reg(asm.R0, asm.R4),
		asm.Add.Imm(asm.R3, 1),
		asm.Ja.Label(loop),
	)
	e.label(done)
	e.add(asm.Return())
}

// emitCopy appends fnCopy: r3 bytes from r2 to r1, as if through a
// temporary buffer (spec/abi.md). When the destination starts inside the
// source, a backward byte loop; otherwise bpf_probe_read_kernel, which
// copies forwards and which the kernel checks against the destination.
func emitCopy(e *emitter) {
	fwd, back, done := e.fresh("copy_fwd"), e.fresh("copy_back"), e.fresh("copy_done")
	e.label(fnCopy)
	e.add(
		asm.JLE.Reg(asm.R1, asm.R2, fwd),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.JGE.Reg(asm.R1, asm.R4, fwd),
	)
	e.label(back)
	e.add(
		asm.JEq.Imm(asm.R3, 0, done),
		asm.Sub.Imm(asm.R3, 1),
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Add.Reg(asm.R4, asm.R3),
		asm.LoadMem(asm.R4, asm.R4, 0, asm.Byte),
		asm.Mov.Reg(asm.R5, asm.R1),
		asm.Add.Reg(asm.R5, asm.R3),
		asm.StoreMem(asm.R5, 0, asm.R4, asm.Byte),
		asm.Ja.Label(back),
	)
	e.label(fwd)
	e.add(
		asm.Mov.Reg(asm.R4, asm.R2),
		asm.Mov.Reg(asm.R2, asm.R3),
		asm.Mov.Reg(asm.R3, asm.R4),
		asm.FnProbeReadKernel.Call(),
	)
	e.label(done)
	e.add(asm.Mov.Imm(asm.R0, 0), asm.Return())
}

// emitRandom appends fnRandom: 64 bits from two bpf_get_prandom_u32.
func emitRandom(e *emitter) {
	e.label(fnRandom)
	e.add(
		asm.FnGetPrandomU32.Call(),
		asm.Mov.Reg32(asm.R6, asm.R0),
		asm.LSh.Imm(asm.R6, 32),
		asm.FnGetPrandomU32.Call(),
		asm.Mov.Reg32(asm.R0, asm.R0),
		asm.Or.Reg(asm.R0, asm.R6),
		asm.Return(),
	)
}
