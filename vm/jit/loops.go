package jit

import (
	"sort"

	"github.com/naam-project/naam/bytecode"
)

// Structured loops. A backward jump from block j to block i (i <= j)
// makes blocks i…j a loop candidate with header i; candidates that share
// a header merge (the latest jump ends the loop). A candidate becomes a
// Wasm loop around its blocks, whose back edges are plain branches to the
// loop, when
//
//   - it nests within or is disjoint from the loops accepted before it
//     (in order of header, longest first),
//   - no jump from outside it lands after its header (one entry), and
//   - no block after its header is reached through the dispatch loop (an
//     entry, a local call's target or return point, the header of a
//     rejected loop): br_table reaches only the outermost level.
//
// Rejecting a loop makes its header a dispatch target, which may reject
// the loop around it, so the last rule runs to a fixpoint. The back
// edges of rejected loops go through the dispatch loop.

// loop is a structured loop over blocks header…end.
type loop struct{ header, end int }

// item is one unit of a region: a block, or a loop with the items of its
// blocks.
type item struct {
	block int    // the block, or the loop's header
	inner []item // a loop's items (nil for a block)
}

// findLoops returns the accepted loops by header, and the dispatch
// targets (slots) the program needs given them: base (entries, local
// calls) and the headers of rejected loops.
func (t *translator) findLoops(base []int) (map[int]loop, []int) {
	ends := map[int]int{} // header → last block jumping back to it
	var jumps [][2]int    // (from block, to block) of every jump
	for slot, ins := range t.insns {
		if ins == nil || bytecode.RawOpcode(ins) == bytecode.OpCall {
			continue // a local call enters a frame through dispatch
		}
		target, ok := jumpTarget(ins, slot)
		if !ok {
			continue
		}
		from, to := t.blockOf(slot), t.index[target]
		jumps = append(jumps, [2]int{from, to})
		if to <= from {
			ends[to] = max(ends[to], from)
		}
	}
	var cands []loop
	for h, e := range ends {
		cands = append(cands, loop{h, e})
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].header < cands[b].header })
	accepted := map[int]loop{}
	var open []loop // accepted loops enclosing the candidate, innermost last
	for _, l := range cands {
		for len(open) > 0 && open[len(open)-1].end < l.header {
			open = open[:len(open)-1]
		}
		if len(open) > 0 && l.end > open[len(open)-1].end {
			continue // overlaps the loop around it without nesting
		}
		oneEntry := true
		for _, j := range jumps {
			if (j[0] < l.header || j[0] > l.end) && j[1] > l.header && j[1] <= l.end {
				oneEntry = false
				break
			}
		}
		if oneEntry {
			accepted[l.header] = l
			open = append(open, l)
		}
	}
	for {
		targets := map[int]bool{}
		for _, s := range base {
			targets[t.index[s]] = true
		}
		for h := range ends {
			if _, ok := accepted[h]; !ok {
				targets[h] = true
			}
		}
		changed := false
		for h, l := range accepted {
			for b := range targets {
				if b > l.header && b <= l.end {
					delete(accepted, h)
					changed = true
					break
				}
			}
		}
		if !changed {
			var slots []int
			for _, s := range base {
				slots = append(slots, s)
			}
			var hs []int
			for h := range targets {
				hs = append(hs, h)
			}
			sort.Ints(hs)
			for _, h := range hs {
				slots = append(slots, t.blocks[h])
			}
			return accepted, slots
		}
	}
}

// region returns the items of blocks lo…hi, the loop headed by self (if
// any) being the one they make up.
func (t *translator) region(lo, hi, self int) []item {
	var items []item
	for b := lo; b <= hi; {
		if l, ok := t.loops[b]; ok && b != self {
			items = append(items, item{block: b, inner: t.region(b, l.end, b)})
			b = l.end + 1
			continue
		}
		items = append(items, item{block: b})
		b++
	}
	return items
}

// blockOf returns the block holding slot.
func (t *translator) blockOf(slot int) int {
	return sort.SearchInts(t.blocks, slot+1) - 1
}
