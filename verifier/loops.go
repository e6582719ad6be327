package verifier

import (
	"fmt"
	"math"
	"sort"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// loop is a natural loop: a head and the blocks of its body (head included).
type loop struct {
	head    int
	body    map[int]bool
	latches []int // blocks with an edge back to head
	depth   int   // nesting depth: how many loops contain it
}

// funcLoops is the loop structure of one function, innermost loops first.
type funcLoops struct {
	loops []*loop
}

// loopsOf finds the natural loops of function fn and rejects irreducible
// control flow (a cycle entered other than through a dominating head).
func (c *checker) loopsOf(fn int) (*funcLoops, *Error) {
	if fl, ok := c.loops[fn]; ok {
		return fl, nil
	}
	f := c.funcs[fn]
	in := map[int]bool{}
	for _, b := range f.blocks {
		in[b] = true
	}
	dom := dominators(c.g, fn, f.blocks)
	// Retreating edges from a depth-first walk of the function.
	state := map[int]int{} // 1 on stack, 2 done
	heads := map[int]*loop{}
	var irreducible *Error
	var dfs func(b int)
	dfs = func(b int) {
		state[b] = 1
		for _, s := range c.g.blocks[b].succs {
			switch state[s] {
			case 0:
				dfs(s)
			case 1:
				if !dom[b][s] {
					if irreducible == nil {
						irreducible = &Error{Insn: c.g.blocks[b].last, Code: CodeUnboundedLoop,
							Msg: fmt.Sprintf("irreducible control flow: this jump enters a cycle at insn %d that has no single entry", c.g.blocks[s].start)}
					}
					continue
				}
				l := heads[s]
				if l == nil {
					l = &loop{head: s, body: map[int]bool{s: true}}
					heads[s] = l
				}
				l.latches = append(l.latches, b)
				// The body: everything that reaches the latch without the head.
				stack := []int{b}
				for len(stack) > 0 {
					x := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					if l.body[x] {
						continue
					}
					l.body[x] = true
					for _, p := range c.preds(x, in) {
						stack = append(stack, p)
					}
				}
			}
		}
		state[b] = 2
	}
	dfs(fn)
	if irreducible != nil {
		return nil, withPos(irreducible, c.cfg)
	}
	fl := &funcLoops{}
	for _, l := range heads {
		fl.loops = append(fl.loops, l)
	}
	for _, l := range fl.loops {
		for _, o := range fl.loops {
			if o != l && o.body[l.head] {
				l.depth++
			}
		}
	}
	// Innermost first; ties by head for determinism.
	sort.Slice(fl.loops, func(i, j int) bool {
		if fl.loops[i].depth != fl.loops[j].depth {
			return fl.loops[i].depth > fl.loops[j].depth
		}
		return fl.loops[i].head < fl.loops[j].head
	})
	c.loops[fn] = fl
	return fl, nil
}

// preds returns the predecessors of block b inside the set in.
func (c *checker) preds(b int, in map[int]bool) []int {
	var out []int
	for x := range in {
		for _, s := range c.g.blocks[x].succs {
			if s == b {
				out = append(out, x)
			}
		}
	}
	sort.Ints(out)
	return out
}

// dominators computes, for each block of the function, the set of blocks
// that dominate it (the simple iterative algorithm; functions are small).
func dominators(g *cfg, entry int, blocks []int) map[int]map[int]bool {
	in := map[int]bool{}
	for _, b := range blocks {
		in[b] = true
	}
	preds := map[int][]int{}
	for _, b := range blocks {
		for _, s := range g.blocks[b].succs {
			if in[s] {
				preds[s] = append(preds[s], b)
			}
		}
	}
	dom := map[int]map[int]bool{}
	all := func() map[int]bool {
		m := map[int]bool{}
		for _, b := range blocks {
			m[b] = true
		}
		return m
	}
	for _, b := range blocks {
		dom[b] = all()
	}
	dom[entry] = map[int]bool{entry: true}
	for changed := true; changed; {
		changed = false
		for _, b := range blocks {
			if b == entry {
				continue
			}
			var nd map[int]bool
			for _, p := range preds[b] {
				if nd == nil {
					nd = map[int]bool{}
					for x := range dom[p] {
						nd[x] = true
					}
					continue
				}
				for x := range nd {
					if !dom[p][x] {
						delete(nd, x)
					}
				}
			}
			if nd == nil {
				nd = map[int]bool{}
			}
			nd[b] = true
			if len(nd) != len(dom[b]) {
				dom[b] = nd
				changed = true
			}
		}
	}
	return dom
}

// satAdd and satMul saturate at half the range, far above any budget.
const saturated = math.MaxUint64 / 4

func satAdd(a, b uint64) uint64 {
	if a > saturated-b {
		return saturated
	}
	return a + b
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > saturated/a {
		return saturated
	}
	return a * b
}

// bound is the worst-case instruction count of a run of context ctx's
// function, from its entry to its exit, callees included.
func (c *checker) bound(ctx int) (uint64, *Error) {
	fn := c.ctxs[ctx].fn
	fl, err := c.loopsOf(fn)
	if err != nil {
		return 0, err
	}
	live := func(b int) bool { _, ok := c.states[node{ctx, b}]; return ok }
	cost := map[int]uint64{} // node (block, or the head of a collapsed loop) → cost
	for _, b := range c.funcs[fn].blocks {
		if !live(b) {
			continue
		}
		bl := c.g.blocks[b]
		k := uint64(bl.insns)
		if bl.term == termCall {
			child, ok := c.ctxKey[[2]int{ctx, b}]
			if ok {
				sub, err := c.bound(child)
				if err != nil {
					return 0, err
				}
				k = satAdd(k, sub)
			}
		}
		cost[b] = k
	}
	rep := map[int]int{}
	for b := range cost {
		rep[b] = b
	}
	for _, l := range fl.loops {
		if !live(l.head) {
			continue
		}
		visits, err := c.loopVisits(ctx, l)
		if err != nil {
			return 0, err
		}
		longest := c.longest(l.head, cost, rep, func(b, s int) bool { return l.body[s] && s != l.head && l.body[b] })
		total := satMul(visits, longest)
		for b := range l.body {
			if _, ok := rep[b]; ok {
				rep[b] = l.head
			}
		}
		cost[l.head] = total
	}
	return c.longest(fn, cost, rep, func(b, s int) bool { return true }), nil
}

// longest is the costliest path from start over the collapsed graph: nodes
// are representatives, an edge b→s counts when keep(b, s) and it joins two
// different representatives.
func (c *checker) longest(start int, cost map[int]uint64, rep map[int]int, keep func(b, s int) bool) uint64 {
	// Successors of each representative.
	succs := map[int][]int{}
	for b, r := range rep {
		for _, s := range c.g.blocks[b].succs {
			rs, ok := rep[s]
			if !ok || rs == r || !keep(b, s) {
				continue
			}
			succs[r] = append(succs[r], rs)
		}
	}
	memo := map[int]uint64{}
	var walk func(n int) uint64
	walk = func(n int) uint64 {
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = saturated // a cycle left here would be a bug; saturate
		best := uint64(0)
		for _, s := range succs[n] {
			best = max(best, walk(s))
		}
		memo[n] = satAdd(cost[n], best)
		return memo[n]
	}
	return walk(rep[start])
}

// loopVisits bounds how many times the head of loop l runs per entry into
// the loop: some register must move by a constant step in the same
// direction on every way around the loop while its range at the head is
// bounded.
func (c *checker) loopVisits(ctx int, l *loop) (uint64, *Error) {
	head := c.states[node{ctx, l.head}]
	best := uint64(math.MaxUint64)
	for r := asm.R0; r <= asm.R9; r++ {
		v := head.regs[r]
		if v.kind != kScalar && v.kind != kStack && v.kind != kMem && v.kind != kRegion {
			continue
		}
		dmin, dmax, ok := c.stepOf(l, r)
		if !ok || (dmin <= 0 && dmax >= 0) {
			continue
		}
		a, b := v.off.Umin, v.off.Umax
		if n, ok := visitsFor(a, b, dmin, dmax); ok {
			best = min(best, n)
		}
		sa, sb := v.off.Smin, v.off.Smax
		if n, ok := visitsFor(uint64(sa)^(1<<63), uint64(sb)^(1<<63), dmin, dmax); ok { // signed order as unsigned
			best = min(best, n)
		}
	}
	if best == math.MaxUint64 {
		latch := c.g.blocks[l.latches[0]].last
		return 0, c.fail(latch, CodeUnboundedLoop, head, nil,
			"the loop at insn %d has no provable bound: no register moves by a constant step on every way around it while its range at the loop head is bounded",
			c.g.blocks[l.head].start)
	}
	return best, nil
}

// visitsFor bounds visits of a head where the counter lies in [a, b]
// (unsigned) and changes by a step in [dmin, dmax] per way around, all of
// one sign. A wrapped value would land outside [a, b], which the fixpoint
// says cannot happen, when the conditions below hold.
func visitsFor(a, b uint64, dmin, dmax int64) (uint64, bool) {
	if dmin > 0 {
		// Increasing: a wrapped value is below dmax; it is outside [a, b]
		// if a >= dmax, and a wrap is impossible if b+dmax fits.
		if !(a >= uint64(dmax) || b <= math.MaxUint64-uint64(dmax)) {
			return 0, false
		}
		return (b-a)/uint64(dmin) + 1, true
	}
	// Decreasing by at least -dmax.
	if !(b < -uint64(-dmin) || a >= uint64(-dmin)) {
		return 0, false
	}
	return (b-a)/uint64(-dmax) + 1, true
}

// stepOf returns the range of the net constant change of register r from
// the loop head back to it, over every path; ok is false if r is written
// by anything but adding or subtracting a constant (64-bit), or the
// change is not bounded.
func (c *checker) stepOf(l *loop, r asm.Register) (dmin, dmax int64, ok bool) {
	in := map[int]delta{l.head: {set: true}}
	out := map[int]delta{}
	blocks := make([]int, 0, len(l.body))
	for b := range l.body {
		blocks = append(blocks, b)
	}
	sort.Ints(blocks)
	const limit = 1 << 40
	for round := 0; round < 2*len(blocks)+4; round++ {
		changed := false
		for _, b := range blocks {
			d := in[b]
			if !d.set {
				continue
			}
			d = c.blockDelta(b, r, d)
			if d.lo < -limit || d.hi > limit {
				d.top = true
			}
			if o := out[b]; o != d {
				out[b] = d
				changed = true
			}
			for _, s := range c.g.blocks[b].succs {
				if !l.body[s] || s == l.head {
					continue
				}
				old := in[s]
				nw := d
				if old.set {
					nw = delta{min(old.lo, d.lo), max(old.hi, d.hi), old.top || d.top, true}
				}
				if nw != old {
					in[s] = nw
					changed = true
				}
			}
		}
		if !changed {
			first := true
			for _, lt := range l.latches {
				d := out[lt]
				if !d.set {
					continue
				}
				if d.top {
					return 0, 0, false
				}
				if first {
					dmin, dmax, first = d.lo, d.hi, false
				} else {
					dmin, dmax = min(dmin, d.lo), max(dmax, d.hi)
				}
			}
			return dmin, dmax, !first
		}
	}
	return 0, 0, false // an inner loop keeps changing r
}

// delta is the net change of a register since the loop head: a range of
// constants, or top when something else wrote it; set marks a block reached.
type delta struct {
	lo, hi int64
	top    bool
	set    bool
}

// blockDelta applies block b's writes of r to the change d.
func (c *checker) blockDelta(b int, r asm.Register, d delta) delta {
	bl := c.g.blocks[b]
	for s := bl.start; s <= bl.last; s++ {
		if c.p.insnAt[s] < 0 {
			continue
		}
		ins := c.p.at(s)
		if !writes(ins, r) {
			continue
		}
		switch op := bytecode.RawOpcode(ins); op {
		case 0x07: // add64 imm
			d.lo, d.hi = d.lo+ins.Constant, d.hi+ins.Constant
		case 0x17: // sub64 imm
			d.lo, d.hi = d.lo-ins.Constant, d.hi-ins.Constant
		default:
			d.top = true
		}
	}
	if bl.term == termCall && r <= asm.R5 {
		d.top = true
	}
	return d
}

// writes reports whether ins may change register r.
func writes(ins *asm.Instruction, r asm.Register) bool {
	op := bytecode.RawOpcode(ins)
	switch asm.Class(op & 7) {
	case asm.ALUClass, asm.ALU64Class, asm.LdClass, asm.LdXClass:
		return ins.Dst == r
	case asm.StXClass:
		if op&0xe0 == 0xc0 {
			switch ins.OpCode.AtomicOp() {
			case asm.CmpXchg:
				return r == asm.R0
			case asm.FetchAdd, asm.FetchOr, asm.FetchAnd, asm.FetchXor, asm.Xchg:
				return ins.Src == r
			}
		}
	case asm.JumpClass:
		if op&0xf0 == 0x80 { // helper call: r0–r5
			return r <= asm.R5
		}
	}
	return false
}
