package verifier

import (
	"container/heap"
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
	body    map[int]int32 // block → its index in blocks
	blocks  []int         // the body in the function's reverse postorder: the head first
	latches []int         // blocks with an edge back to head
	depth   int           // nesting depth: how many loops contain it
}

func (l *loop) has(b int) bool { _, ok := l.body[b]; return ok }

// funcLoops is the loop structure of one function, innermost loops first.
type funcLoops struct {
	loops []*loop
}

// loopsOf finds the natural loops of function fn and rejects irreducible
// control flow (a cycle entered other than through a dominating head).
// Every pass is linear in the function's blocks and edges, but for the
// loop bodies, whose total size is charged to the meter.
func (c *checker) loopsOf(fn int) (*funcLoops, *Error) {
	if fl, ok := c.loops[fn]; ok {
		return fl, nil
	}
	f := c.funcs[fn]
	slot := c.g.blk(fn).start
	nb := len(f.blocks)
	if err := c.m.grow(0, int64(nb)*40, slot); err != nil {
		return nil, err
	}
	if err := c.m.step(int64(4*nb), slot); err != nil {
		return nil, err
	}
	local := make(map[int]int32, nb) // block → index in f.blocks
	for i, b := range f.blocks {
		local[b] = int32(i)
	}
	// Predecessors inside the function, as offsets into one array.
	start := make([]int32, nb+1)
	for _, b := range f.blocks {
		for _, s := range c.g.blk(b).succs {
			start[local[s]+1]++
		}
	}
	for i := range nb {
		start[i+1] += start[i]
	}
	preds := make([]int32, start[nb])
	fill := slicesClone32(start[:nb])
	for i, b := range f.blocks {
		for _, s := range c.g.blk(b).succs {
			j := local[s]
			preds[fill[j]] = int32(i)
			fill[j]++
		}
	}
	predsOf := func(i int32) []int32 { return preds[start[i]:start[i+1]] }

	// A depth-first walk from the entry, successors in order: the reverse
	// postorder, and the retreating edges in the order the walk meets them.
	const (
		unseen = iota
		onStack
		done
	)
	state := make([]uint8, nb)
	post := make([]int32, 0, nb)
	type edge struct{ from, to int32 }
	var back []edge
	type dfsFrame struct{ b, next int32 }
	stack := []dfsFrame{{local[fn], 0}}
	state[local[fn]] = onStack
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		succs := c.g.blk(f.blocks[top.b]).succs
		if int(top.next) == len(succs) {
			state[top.b] = done
			post = append(post, top.b)
			stack = stack[:len(stack)-1]
			continue
		}
		s := local[succs[top.next]]
		top.next++
		switch state[s] {
		case unseen:
			state[s] = onStack
			stack = append(stack, dfsFrame{s, 0})
		case onStack:
			back = append(back, edge{top.b, s})
		}
	}
	rpo := make([]int32, nb) // local index → position in reverse postorder
	for i, b := range post {
		rpo[b] = int32(len(post) - 1 - i)
	}
	dom, err := c.dominators(post, rpo, predsOf, slot)
	if err != nil {
		return nil, err
	}
	heads := map[int32]*loop{}
	var order []int32          // heads in the order their first back edge was met
	count := make([]int32, nb) // loops whose body holds the block
	var irreducible *Error
	var steps int64
	for _, e := range back {
		if !dom(e.to, e.from) {
			if irreducible == nil {
				irreducible = &Error{Insn: c.g.blk(f.blocks[e.from]).last, Code: CodeUnboundedLoop,
					Msg: fmt.Sprintf("irreducible control flow: this jump enters a cycle at insn %d that has no single entry", c.g.blk(f.blocks[e.to]).start)}
			}
			continue
		}
		head := f.blocks[e.to]
		l := heads[e.to]
		if l == nil {
			l = &loop{head: head, body: map[int]int32{head: 0}}
			heads[e.to] = l
			order = append(order, e.to)
			count[e.to]++
		}
		l.latches = append(l.latches, f.blocks[e.from])
		// The body: everything that reaches the latch without the head.
		work := []int32{e.from}
		for len(work) > 0 {
			x := work[len(work)-1]
			work = work[:len(work)-1]
			if l.has(f.blocks[x]) {
				continue
			}
			l.body[f.blocks[x]] = 0
			count[x]++
			work = append(work, predsOf(x)...)
			steps++
		}
		if steps > 1<<16 {
			if err := c.m.step(steps, slot); err != nil {
				return nil, err
			}
			if err := c.m.grow(0, steps*mapEntry, slot); err != nil {
				return nil, err
			}
			steps = 0
		}
	}
	if err := c.m.step(steps, slot); err != nil {
		return nil, err
	}
	if err := c.m.grow(0, steps*mapEntry, slot); err != nil {
		return nil, err
	}
	if irreducible != nil {
		return nil, withPos(irreducible, c.cfg)
	}
	if err := c.m.grow(0, int64(len(order))*loopCost, slot); err != nil {
		return nil, err
	}
	fl := &funcLoops{}
	for _, h := range order {
		l := heads[h]
		l.depth = int(count[h]) - 1
		l.blocks = make([]int, 0, len(l.body))
		for b := range l.body {
			l.blocks = append(l.blocks, b)
		}
		sort.Slice(l.blocks, func(i, j int) bool { return rpo[local[l.blocks[i]]] < rpo[local[l.blocks[j]]] })
		for i, b := range l.blocks {
			l.body[b] = int32(i)
		}
		fl.loops = append(fl.loops, l)
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

func slicesClone32(s []int32) []int32 { return append([]int32(nil), s...) }

// dominators computes the immediate dominators of a function's blocks
// with the iterative algorithm of Cooper, Harvey and Kennedy over the
// reverse postorder (post is the postorder, rpo a block's position in the
// reverse), and returns the query "a dominates b", answered in constant
// time from a numbering of the dominator tree.
func (c *checker) dominators(post, rpo []int32, predsOf func(int32) []int32, slot int) (func(a, b int32) bool, *Error) {
	n := len(post)
	idom := make([]int32, n)
	for i := range idom {
		idom[i] = -1
	}
	entry := post[n-1]
	idom[entry] = entry
	var steps int64
	intersect := func(a, b int32) int32 {
		for a != b {
			for rpo[a] > rpo[b] {
				a = idom[a]
				steps++
			}
			for rpo[b] > rpo[a] {
				b = idom[b]
				steps++
			}
		}
		return a
	}
	for changed := true; changed; {
		changed = false
		for i := n - 2; i >= 0; i-- {
			b := post[i]
			nd := int32(-1)
			for _, p := range predsOf(b) {
				steps++
				if idom[p] < 0 {
					continue
				}
				if nd < 0 {
					nd = p
				} else {
					nd = intersect(p, nd)
				}
			}
			if idom[b] != nd {
				idom[b] = nd
				changed = true
			}
		}
		if err := c.m.step(steps+int64(n), slot); err != nil {
			return nil, err
		}
		steps = 0
	}
	// Number the dominator tree depth first: a dominates b when b's
	// interval lies in a's.
	first := make([]int32, n+1)
	for b := range n {
		if int32(b) != entry {
			first[idom[b]+1]++
		}
	}
	for i := range n {
		first[i+1] += first[i]
	}
	kids := make([]int32, n)
	fill := slicesClone32(first[:n])
	for b := range n {
		if int32(b) != entry {
			kids[fill[idom[b]]] = int32(b)
			fill[idom[b]]++
		}
	}
	in, out := make([]int32, n), make([]int32, n)
	clock := int32(0)
	type frame struct{ b, next int32 }
	stack := []frame{{entry, first[entry]}}
	in[entry] = clock
	clock++
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if top.next == first[top.b+1] {
			out[top.b] = clock
			clock++
			stack = stack[:len(stack)-1]
			continue
		}
		k := kids[top.next]
		top.next++
		in[k] = clock
		clock++
		stack = append(stack, frame{k, first[k]})
	}
	return func(a, b int32) bool { return in[a] <= in[b] && out[b] <= out[a] }, nil
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
	if n, ok := c.bounds[ctx]; ok {
		return n, nil
	}
	cs, err := c.costs(ctx)
	if err != nil {
		return 0, err
	}
	n, _, err := c.longest(c.ctxs[ctx].fn, cs.live, cs, func(b, s int) bool { return true })
	if err != nil {
		return 0, err
	}
	c.bounds[ctx] = n
	return n, nil
}

// ctxCosts is the collapsed graph of one context: the cost of every node
// (a block, or the head of a collapsed loop standing for the whole loop),
// each block's representative, and for collapsed loops the slot to name.
type ctxCosts struct {
	live  []int // the function's blocks the analysis reached in this context
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
		cs.live = append(cs.live, b)
		bl := c.g.blk(b)
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
		visits, err := c.loopVisits(ctx, fn, l)
		if err != nil {
			return nil, err
		}
		longest, _, err := c.longest(l.head, l.blocks, cs, func(b, s int) bool { return l.has(s) && s != l.head })
		if err != nil {
			return nil, err
		}
		for _, b := range l.blocks {
			if _, ok := cs.rep[b]; ok {
				cs.rep[b] = l.head
			}
		}
		cs.cost[l.head] = satMul(visits, longest)
		cs.latch[l.head] = c.g.blk(l.latches[len(l.latches)-1]).last
	}
	return cs, nil
}

// longest is the costliest path from start over the collapsed graph, and
// the path: nodes are representatives, an edge b→s (b one of blocks)
// counts when keep(b, s) and it joins two different representatives.
func (c *checker) longest(start int, blocks []int, cs *ctxCosts, keep func(b, s int) bool) (uint64, []int, *Error) {
	rep, cost := cs.rep, cs.cost
	succs := map[int][]int{}
	edges := 0
	for _, b := range blocks {
		r, ok := rep[b]
		if !ok {
			continue
		}
		for _, s := range c.g.blk(b).succs {
			rs, ok := rep[s]
			if !ok || rs == r || !keep(b, s) {
				continue
			}
			succs[r] = append(succs[r], rs)
			edges++
		}
	}
	if err := c.m.step(int64(len(blocks)+edges), c.g.blk(start).start); err != nil {
		return 0, nil, err
	}
	for _, s := range succs {
		sort.Ints(s)
	}
	// A depth-first walk, memoised; a node met again while it is being
	// walked would be a cycle left in the collapsed graph (a bug), and
	// counts as saturated.
	memo := map[int]uint64{}
	next := map[int]int{}
	type walkFrame struct {
		n, i int
		best uint64
		arg  int
	}
	first := rep[start]
	memo[first] = saturated
	stack := []walkFrame{{n: first, arg: -1}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		ss := succs[top.n]
		if top.i < len(ss) {
			s := ss[top.i]
			v, ok := memo[s]
			if !ok {
				memo[s] = saturated
				stack = append(stack, walkFrame{n: s, arg: -1})
				continue
			}
			top.i++
			if v > top.best || top.arg < 0 {
				top.best, top.arg = v, s
			}
			continue
		}
		memo[top.n] = satAdd(cost[top.n], top.best)
		next[top.n] = top.arg
		stack = stack[:len(stack)-1]
	}
	var path []int
	for n := first; n >= 0 && len(path) <= len(rep); n = next[n] {
		path = append(path, n)
	}
	return memo[first], path, nil
}

// crossing names the instruction at which the costliest path of the root
// context passes budget: a plain instruction, the call whose callee does,
// or the latch of a loop whose iterations do.
func (c *checker) crossing(budget uint64) int {
	cs, err := c.costs(0)
	if err != nil {
		return c.g.blk(c.ctxs[0].fn).start
	}
	_, path, err := c.longest(c.ctxs[0].fn, cs.live, cs, func(b, s int) bool { return true })
	if err != nil {
		return c.g.blk(c.ctxs[0].fn).start
	}
	var sum uint64
	for _, n := range path {
		if slot, ok := cs.latch[n]; ok {
			if sum = satAdd(sum, cs.cost[n]); sum > budget {
				return slot
			}
			continue
		}
		bl := c.g.blk(n)
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
	return c.g.blk(c.ctxs[0].fn).start
}

// loopVisits bounds how many times the head of loop l runs per entry into
// the loop: some register must move by a constant step in the same
// direction on every way around the loop while its range at the head is
// bounded.
func (c *checker) loopVisits(ctx, fn int, l *loop) (uint64, *Error) {
	head := c.states[node{ctx, l.head}].st
	best := uint64(math.MaxUint64)
	for r := asm.R0; r <= asm.R9; r++ {
		v := head.regs[r]
		if v.kind != kScalar && v.kind != kStack && v.kind != kMem && v.kind != kRegion {
			continue
		}
		st, err := c.stepOf(fn, l, r)
		if err != nil {
			return 0, err
		}
		dmin, dmax, w32, shr, ok := st.dmin, st.dmax, st.w32, st.shr, st.ok
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
		latch := c.g.blk(l.latches[0]).last
		return 0, c.fail(latch, CodeUnboundedLoop, head, nil,
			"the loop at insn %d has no provable bound: no register moves by a constant step (or halves by a constant shift) on every way around it while its range at the loop head is bounded",
			c.g.blk(l.head).start)
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

// stepKey names one register of one loop of one function.
type stepKey struct {
	fn, head int
	r        asm.Register
}

// stepResult is what stepOf found: the range of the net change per way
// around, and its kind.
type stepResult struct {
	dmin, dmax   int64
	w32, shr, ok bool
}

// stepOf returns the range of the net constant change of register r from
// the loop head back to it, over every path; ok is false if r is written
// by anything but adding or subtracting a constant (64-bit), or the
// change is not bounded. It depends on the code only, so it is computed
// once per loop and register.
//
// The blocks are visited in reverse postorder, each again only when what
// flows into it changed. An edge back to an inner loop's head that widens
// the range there means a way around the inner loop moves r: the change
// is then unbounded, and the answer no.
func (c *checker) stepOf(fn int, l *loop, r asm.Register) (stepResult, *Error) {
	key := stepKey{fn, l.head, r}
	if res, ok := c.stepMemo[key]; ok {
		return res, nil
	}
	res, err := c.computeStep(l, r)
	if err != nil {
		return res, err
	}
	c.stepMemo[key] = res
	return res, nil
}

func (c *checker) computeStep(l *loop, r asm.Register) (stepResult, *Error) {
	const limit = 1 << 40
	n := len(l.blocks)
	in, out := make([]delta, n), make([]delta, n)
	queued := make([]bool, n)
	pending := &intHeap{}
	in[0] = delta{set: true}
	queued[0] = true
	heap.Push(pending, 0)
	var steps int64
	for pending.Len() > 0 {
		i := heap.Pop(pending).(int)
		queued[i] = false
		b := l.blocks[i]
		steps += int64(c.g.blk(b).insns) + 1
		d := c.blockDelta(b, r, in[i])
		if d.lo < -limit || d.hi > limit {
			d.top = true
		}
		if d.top {
			// It flows to a latch: every block of the body reaches one.
			return stepResult{}, c.m.step(steps, c.g.blk(l.head).start)
		}
		out[i] = d
		for _, s := range c.g.blk(b).succs {
			j, ok := l.body[s]
			if !ok || s == l.head {
				continue
			}
			old := in[j]
			nw := d
			if old.set {
				nw = delta{lo: min(old.lo, d.lo), hi: max(old.hi, d.hi), top: old.top || d.top, set: true}
			}
			nw.w32, nw.w64, nw.shr = old.w32 || d.w32, old.w64 || d.w64, old.shr || d.shr
			if nw == old {
				continue
			}
			if old.set && int(j) <= i && (nw.lo != old.lo || nw.hi != old.hi) {
				return stepResult{}, c.m.step(steps, c.g.blk(l.head).start)
			}
			in[j] = nw
			if !queued[j] {
				queued[j] = true
				heap.Push(pending, int(j))
			}
		}
	}
	if err := c.m.step(steps, c.g.blk(l.head).start); err != nil {
		return stepResult{}, err
	}
	var res stepResult
	var w64 bool
	first := true
	for _, lt := range l.latches {
		d := out[l.body[lt]]
		if !d.set {
			continue
		}
		if d.top || (d.w32 && d.w64) || (d.shr && (d.w32 || d.w64)) {
			return stepResult{}, nil
		}
		if first {
			res.dmin, res.dmax, first = d.lo, d.hi, false
		} else {
			res.dmin, res.dmax = min(res.dmin, d.lo), max(res.dmax, d.hi)
		}
		res.w32, w64, res.shr = res.w32 || d.w32, w64 || d.w64, res.shr || d.shr
	}
	// Every way around must move the counter the same way: adds of one
	// width, or shifts.
	if (res.w32 && w64) || (res.shr && (res.w32 || w64)) {
		return stepResult{}, nil
	}
	res.ok = !first
	return res, nil
}

// intHeap is a min-heap of ints.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(x any)        { *h = append(*h, x.(int)) }
func (h *intHeap) Pop() any {
	x := (*h)[len(*h)-1]
	*h = (*h)[:len(*h)-1]
	return x
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
	bl := c.g.blk(b)
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
