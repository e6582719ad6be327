package verifier

import (
	"fmt"
	"math"
	"math/bits"
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
	cs, err := c.costs(ctx)
	if err != nil {
		return 0, err
	}
	n, _ := c.longest(c.ctxs[ctx].fn, cs.cost, cs.rep, func(b, s int) bool { return true })
	return n, nil
}

// ctxCosts is the collapsed graph of one context: the cost of every node
// (a block, or the head of a collapsed loop standing for the whole loop),
// each block's representative, and for collapsed loops the slot to name.
type ctxCosts struct {
	cost  map[int]uint64
	rep   map[int]int
	latch map[int]int // loop head → last slot of its last latch
	calls map[int]uint64
}

func (c *checker) costs(ctx int) (*ctxCosts, *Error) {
	fn := c.ctxs[ctx].fn
	fl, err := c.loopsOf(fn)
	if err != nil {
		return nil, err
	}
	live := func(b int) bool { _, ok := c.states[node{ctx, b}]; return ok }
	cs := &ctxCosts{cost: map[int]uint64{}, rep: map[int]int{}, latch: map[int]int{}, calls: map[int]uint64{}}
	for _, b := range c.funcs[fn].blocks {
		if !live(b) {
			continue
		}
		bl := c.g.blocks[b]
		k := uint64(bl.insns)
		if bl.term == termCall {
			if child, ok := c.ctxKey[[2]int{ctx, b}]; ok {
				sub, err := c.bound(child)
				if err != nil {
					return nil, err
				}
				cs.calls[b] = sub
				k = satAdd(k, sub)
			}
		}
		cs.cost[b] = k
		cs.rep[b] = b
	}
	for _, l := range fl.loops {
		if !live(l.head) {
			continue
		}
		visits, err := c.loopVisits(ctx, l)
		if err != nil {
			return nil, err
		}
		longest, _ := c.longest(l.head, cs.cost, cs.rep, func(b, s int) bool { return l.body[s] && s != l.head && l.body[b] })
		for b := range l.body {
			if _, ok := cs.rep[b]; ok {
				cs.rep[b] = l.head
			}
		}
		cs.cost[l.head] = satMul(visits, longest)
		cs.latch[l.head] = c.g.blocks[l.latches[len(l.latches)-1]].last
	}
	return cs, nil
}

// longest is the costliest path from start over the collapsed graph, and
// the path: nodes are representatives, an edge b→s counts when keep(b, s)
// and it joins two different representatives.
func (c *checker) longest(start int, cost map[int]uint64, rep map[int]int, keep func(b, s int) bool) (uint64, []int) {
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
	for _, s := range succs {
		sort.Ints(s)
	}
	memo := map[int]uint64{}
	next := map[int]int{}
	var walk func(n int) uint64
	walk = func(n int) uint64 {
		if v, ok := memo[n]; ok {
			return v
		}
		memo[n] = saturated // a cycle left here would be a bug; saturate
		best, arg := uint64(0), -1
		for _, s := range succs[n] {
			if v := walk(s); v > best || arg < 0 {
				best, arg = v, s
			}
		}
		memo[n] = satAdd(cost[n], best)
		next[n] = arg
		return memo[n]
	}
	total := walk(rep[start])
	var path []int
	for n := rep[start]; n >= 0 && len(path) <= len(rep); n = next[n] {
		path = append(path, n)
	}
	return total, path
}

// crossing names the instruction at which the costliest path of the root
// context passes budget: a plain instruction, the call whose callee does,
// or the latch of a loop whose iterations do.
func (c *checker) crossing(budget uint64) int {
	cs, err := c.costs(0)
	if err != nil {
		return c.g.blocks[c.ctxs[0].fn].start
	}
	_, path := c.longest(c.ctxs[0].fn, cs.cost, cs.rep, func(b, s int) bool { return true })
	var sum uint64
	for _, n := range path {
		if slot, ok := cs.latch[n]; ok {
			if sum = satAdd(sum, cs.cost[n]); sum > budget {
				return slot
			}
			continue
		}
		bl := c.g.blocks[n]
		for s := bl.start; s <= bl.last; s++ {
			if c.p.insnAt[s] < 0 {
				continue
			}
			sum++
			if s == bl.last {
				sum = satAdd(sum, cs.calls[n])
			}
			if sum > budget {
				return s
			}
		}
	}
	return c.g.blocks[c.ctxs[0].fn].start
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
		dmin, dmax, w32, shr, ok := c.stepOf(l, r)
		if !ok || (dmin <= 0 && dmax >= 0) {
			continue
		}
		a, b := v.off.Umin, v.off.Umax
		if shr {
			// Shifted right by at least dmin bits each way around and never
			// below a >= 1 at the head: v_n <= b >> (n*dmin) and >= a, so
			// n*dmin <= log2(b) - log2(a).
			if a == 0 || v.kind != kScalar {
				continue
			}
			best = min(best, uint64(bits.Len64(b)-bits.Len64(a))/uint64(dmin)+1)
			continue
		}
		if w32 {
			// A 32-bit step zero-extends: the counter lives in 0..2^32-1 and
			// wraps there.
			if b > math.MaxUint32 {
				continue
			}
			if n, ok := visitsFor(a, b, dmin, dmax, math.MaxUint32); ok {
				best = min(best, n)
			}
			continue
		}
		if n, ok := visitsFor(a, b, dmin, dmax, math.MaxUint64); ok {
			best = min(best, n)
		}
		sa, sb := v.off.Smin, v.off.Smax
		if n, ok := visitsFor(uint64(sa)^(1<<63), uint64(sb)^(1<<63), dmin, dmax, math.MaxUint64); ok { // signed order as unsigned
			best = min(best, n)
		}
	}
	if best == math.MaxUint64 {
		latch := c.g.blocks[l.latches[0]].last
		return 0, c.fail(latch, CodeUnboundedLoop, head, nil,
			"the loop at insn %d has no provable bound: no register moves by a constant step (or halves by a constant shift) on every way around it while its range at the loop head is bounded",
			c.g.blocks[l.head].start)
	}
	return best, nil
}

// visitsFor bounds visits of a head where the counter lies in [a, b]
// (unsigned, at most top, where arithmetic wraps) and changes by a step in
// [dmin, dmax] per way around, all of one sign. A wrapped value would land
// outside [a, b], which the fixpoint says cannot happen, when the
// conditions below hold; then each visit sees a strictly larger (smaller)
// counter than the last.
func visitsFor(a, b uint64, dmin, dmax int64, top uint64) (uint64, bool) {
	// A step as large as the modulus is no step at all (2^32 is 0 for a
	// 32-bit counter): refuse it before the arithmetic below can wrap.
	if dmax > 0 && uint64(dmax) > top || dmin < 0 && uint64(-dmin) > top {
		return 0, false
	}
	if dmin > 0 {
		// Increasing: a wrapped value is below dmax; it is outside [a, b]
		// if a >= dmax, and a wrap is impossible if b+dmax fits.
		if !(a >= uint64(dmax) || b <= top-uint64(dmax)) {
			return 0, false
		}
		return (b-a)/uint64(dmin) + 1, true
	}
	// Decreasing by at least -dmax: a wrapped value is above
	// top+1-(-dmin); it is outside [a, b] if b is below that, and a wrap is
	// impossible if a >= -dmin.
	if !(b <= top-uint64(-dmin) || a >= uint64(-dmin)) {
		return 0, false
	}
	return (b-a)/uint64(-dmax) + 1, true
}

// stepOf returns the range of the net constant change of register r from
// the loop head back to it, over every path; ok is false if r is written
// by anything but adding or subtracting a constant (64-bit), or the
// change is not bounded.
func (c *checker) stepOf(l *loop, r asm.Register) (dmin, dmax int64, w32, shr bool, ok bool) {
	var w64 bool
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
					nw = delta{lo: min(old.lo, d.lo), hi: max(old.hi, d.hi), top: old.top || d.top, set: true}
				}
				nw.w32, nw.w64, nw.shr = old.w32 || d.w32, old.w64 || d.w64, old.shr || d.shr
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
				if d.top || (d.w32 && d.w64) || (d.shr && (d.w32 || d.w64)) {
					return 0, 0, false, false, false
				}
				if first {
					dmin, dmax, first = d.lo, d.hi, false
				} else {
					dmin, dmax = min(dmin, d.lo), max(dmax, d.hi)
				}
				w32, w64, shr = w32 || d.w32, w64 || d.w64, shr || d.shr
			}
			// Every way around must move the counter the same way: adds of
			// one width, or shifts.
			if (w32 && w64) || (shr && (w32 || w64)) {
				return 0, 0, false, false, false
			}
			return dmin, dmax, w32, shr, !first
		}
	}
	return 0, 0, false, false, false // an inner loop keeps changing r
}

// delta is the net change of a register since the loop head: a range of
// constants, or top when something else wrote it; set marks a block reached.
type delta struct {
	lo, hi   int64
	top, set bool
	w32, w64 bool // steps of 32-bit (add32/sub32) or 64-bit instructions were seen
	shr      bool // the steps are right shifts (lo, hi: total shift count)
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
		case 0x77: // rsh64 imm: a halving counter, if nothing else moves it
			if d.w32 || d.w64 || ins.Constant&63 == 0 {
				d.top = true
				continue
			}
			d.shr = true
			d.lo, d.hi = d.lo+ins.Constant&63, d.hi+ins.Constant&63
		case 0x07, 0x04: // add64, add32 imm
			if d.shr {
				d.top = true
				continue
			}
			d.lo, d.hi = d.lo+ins.Constant, d.hi+ins.Constant
			d.w64, d.w32 = d.w64 || op == 0x07, d.w32 || op == 0x04
		case 0x17, 0x14: // sub64, sub32 imm
			if d.shr {
				d.top = true
				continue
			}
			d.lo, d.hi = d.lo-ins.Constant, d.hi-ins.Constant
			d.w64, d.w32 = d.w64 || op == 0x17, d.w32 || op == 0x14
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
