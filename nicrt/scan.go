package nicrt

import (
	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// reach is what the code reachable from one entry may use: the regions its
// lddw instructions name and the helpers it calls. The verifier's report
// covers the whole object; a per-entry walk narrows it for objects with
// several handlers. It over-approximates (every path, taken or not), which
// is the safe side for placement.
type reach struct {
	regions []bool // by region index
	helpers []uint32
}

// scanEntry walks the control flow from slot entry (jumps both ways, local
// calls into their callees). insns must have passed the verifier.
func scanEntry(insns asm.Instructions, entry, nregions int) reach {
	offsets, total := bytecode.Slots(insns)
	index := make([]int, total) // slot → instruction, -1 for lddw's second slot
	for i := range index {
		index[i] = -1
	}
	for i, s := range offsets {
		index[s] = i
	}
	r := reach{regions: make([]bool, nregions)}
	seen := make([]bool, total)
	helperSeen := map[uint32]bool{}
	work := []int{entry}
	push := func(slot int) {
		if slot >= 0 && slot < total && !seen[slot] && index[slot] >= 0 {
			work = append(work, slot)
		}
	}
	for len(work) > 0 {
		slot := work[len(work)-1]
		work = work[:len(work)-1]
		if seen[slot] {
			continue
		}
		seen[slot] = true
		ins := &insns[index[slot]]
		next := slot + int(ins.Width())
		op := bytecode.RawOpcode(ins)
		switch class := asm.Class(op & 7); {
		case op == bytecode.OpLdDW:
			if ins.Src == bytecode.PseudoMapValue {
				if idx := int(uint32(ins.Constant)); idx < nregions {
					r.regions[idx] = true
				}
			}
			push(next)
		case op == bytecode.OpExit:
		case op == bytecode.OpJa:
			push(next + int(ins.Offset))
		case op == bytecode.OpJa32:
			push(next + int(ins.Constant))
		case op == bytecode.OpCall && ins.Src == bytecode.PseudoCall:
			push(next + int(ins.Constant))
			push(next)
		case op == bytecode.OpCall:
			id := uint32(ins.Constant)
			if !helperSeen[id] {
				helperSeen[id] = true
				r.helpers = append(r.helpers, id)
			}
			push(next)
		case class == asm.JumpClass || class == asm.Jump32Class:
			push(next + int(ins.Offset))
			push(next)
		default:
			push(next)
		}
	}
	return r
}

// hostOnly reports whether one of the helpers exists only on the host.
func hostOnly(helpers []uint32) bool {
	for _, id := range helpers {
		if h, ok := bytecode.Helper(id); ok && h.HostOnly {
			return true
		}
	}
	return false
}
