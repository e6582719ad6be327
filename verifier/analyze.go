package verifier

import (
	"container/heap"
	"fmt"
	"math"
	"unsafe"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/verifier/internal/scalar"
)

// widenAfter is how many times a loop head is joined before widening.
const widenAfter = 3

// visitCost is what a visit of a block costs in steps besides its
// instructions: cloning, joining and queueing states, about as much time
// as interpreting this many instructions.
const visitCost = 64

// checker holds one verification: the program, its CFG and what the
// analysis has found so far.
type checker struct {
	p     *program
	g     *cfg
	funcs map[int]*function
	cfg   Config
	m     *meter

	order    []int32 // block id → position in a depth-first order, for the worklist
	loopHead []bool
	th       *scalar.Thresholds // built at the first widening

	// Per entry analysis.
	ctxs    []*context
	ctxKey  map[[2]int]int // (caller context, call block) → callee context
	shared  map[[2]int]int // (function entry block, depth) → its shared context
	strings map[int]int    // function entry block → call-string contexts made for it
	states  map[node]*nodeState
	work    *worklist
	bounds  map[int]uint64 // context → its worst case, once computed
	visits  int
	// held counts what hold reserved for this entry's states.
	heldStates int
	heldBytes  int64

	stackDepth                  int
	entry                       Entry // the entry being analysed
	regionsRead, regionsWritten map[int16]bool
	// clientSlot and clientWhy are the first instruction (-1: none) that
	// makes the entry not client-eligible, and why (client.go).
	clientSlot  int
	clientWhy   string
	helpersUsed map[uint32]bool
	loops       map[int]*funcLoops // by function entry block
	stepMemo    map[stepKey]stepResult
}

// context is one analysis of a function. A call-string context is
// entered from one call site of one parent context, and returns there. A
// shared context stands for every further call of its function at its
// depth once the function has used up its call strings (Limits.CallStrings):
// its entry state is the join of theirs, and it returns to each of them
// (conts) with the frames it did not write taken from that caller.
type context struct {
	id, parent int
	site       int // the parent's call block; -1 for the root and shared contexts
	fn         int // the function's entry block
	depth      int // frames: 1 for the root
	shared     bool
	conts      []cont
	contAt     map[[2]int]int // (caller context, call block) → index in conts
	exit       *state         // the join of the states at its exits
	// resumeQueued: exit grew since the callers last got it; a resume
	// node, queued after every block of the context, hands it to them.
	resumeQueued bool
}

// resumeBlock is the block of a context's resume node.
const resumeBlock = -1

// cont is a pending return of a shared context: the caller's context and
// call block, and its state at the call.
type cont struct {
	ctx, site int
	st        *state
}

type node struct{ ctx, block int }

// nodeState is what the analysis holds for one node: its state, how many
// times one was joined in, and whether the node is queued.
type nodeState struct {
	st     *state
	joins  int32
	queued bool
}

func newChecker(p *program, g *cfg, funcs map[int]*function, cfg Config, m *meter) (*checker, *Error) {
	c := &checker{p: p, g: g, funcs: funcs, cfg: cfg, m: m,
		regionsRead: map[int16]bool{}, regionsWritten: map[int16]bool{}, helpersUsed: map[uint32]bool{},
		loops: map[int]*funcLoops{}, stepMemo: map[stepKey]stepResult{}}
	c.order = make([]int32, len(g.blocks))
	c.loopHead = make([]bool, len(g.blocks))
	for i := range c.order {
		c.order[i] = -1
	}
	// Depth-first numbering and loop heads (targets of retreating edges),
	// the callee of a call after the block's own successors.
	n := int32(0)
	onStack := make([]bool, len(g.blocks))
	type dfsFrame struct{ b, next int }
	next := func(b *block, i int) (int, bool) {
		if i < len(b.succs) {
			return b.succs[i], true
		}
		if i == len(b.succs) && b.term == termCall {
			return b.callee, true
		}
		return 0, false
	}
	var stack []dfsFrame
	for root := range g.blocks {
		if c.order[root] >= 0 {
			continue
		}
		c.order[root] = n
		n++
		onStack[root] = true
		stack = append(stack[:0], dfsFrame{root, 0})
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			s, ok := next(&g.blocks[top.b], top.next)
			if !ok {
				onStack[top.b] = false
				stack = stack[:len(stack)-1]
				continue
			}
			top.next++
			switch {
			case c.order[s] < 0:
				c.order[s] = n
				n++
				onStack[s] = true
				stack = append(stack, dfsFrame{s, 0})
			case onStack[s]:
				c.loopHead[s] = true
			}
		}
	}
	if err := m.step(int64(len(g.blocks)), 0); err != nil {
		return nil, err
	}
	return c, nil
}

// thresholds are the constants loop-head widening stops at: every
// immediate of the program and the sizes of its objects, each ±1. They
// are collected at the first widening, which most programs never reach.
func (c *checker) thresholds(slot int) (scalar.Thresholds, *Error) {
	if c.th != nil {
		return *c.th, nil
	}
	n := len(c.p.insns) + len(c.cfg.Regions) + 3
	for i := range c.p.insns {
		if k := c.p.insns[i].Constant; uint64(uint32(k)) != uint64(k) {
			n++
		}
	}
	if err := c.m.grow(0, 8*int64(n), slot); err != nil {
		return scalar.Thresholds{}, err
	}
	base := make([]uint64, 0, n)
	base = append(base, 0, c.cfg.MemSize, stackSize)
	for i := range c.p.insns {
		k := c.p.insns[i].Constant
		base = append(base, uint64(k))
		if uint64(uint32(k)) != uint64(k) {
			base = append(base, uint64(uint32(k)))
		}
	}
	for _, r := range c.cfg.Regions {
		base = append(base, r.Size)
	}
	th := scalar.NewSpreadThresholds(base)
	c.th = &th
	return th, nil
}

// initial is the state at an entry point.
func (c *checker) initial() *state {
	st := &state{frames: []*frame{{}}, own: 1}
	st.regs[asm.R10] = pointer(kStack, 0)
	if c.cfg.Raw {
		st.regs[asm.R1] = pointer(kMem, 0)
		st.regs[asm.R2] = constValue(c.cfg.MemSize)
	} else {
		st.regs[asm.R1] = pointer(kCtx, 0)
	}
	return st
}

// worklist orders pending nodes by context, then depth-first position, so
// that a loop's body settles before what follows it.
type worklist struct {
	items []node
	order []int32
}

func (w *worklist) Len() int { return len(w.items) }
func (w *worklist) Less(i, j int) bool {
	a, b := w.items[i], w.items[j]
	if a.ctx != b.ctx {
		return a.ctx < b.ctx
	}
	return w.pos(a.block) < w.pos(b.block)
}

// pos is a block's place in the order; a context's resume node comes
// after all of its blocks.
func (w *worklist) pos(b int) int32 {
	if b == resumeBlock {
		return math.MaxInt32
	}
	return w.order[b]
}
func (w *worklist) Swap(i, j int) { w.items[i], w.items[j] = w.items[j], w.items[i] }
func (w *worklist) Push(x any)    { w.items = append(w.items, x.(node)) }
func (w *worklist) Pop() any {
	x := w.items[len(w.items)-1]
	w.items = w.items[:len(w.items)-1]
	return x
}

// hold accounts for st being kept (a block state, a pending return, an
// exit state) and makes it immutable: from now on its frames are shared.
func (c *checker) hold(st *state, slot int) *Error {
	st.own = 0
	bytes := stateCost + framePtr*int64(len(st.frames))
	for _, f := range st.frames {
		if f.refs == 0 {
			bytes += frameCost
			for _, ch := range f.chunks {
				if ch != nil && ch.refs == 0 {
					bytes += chunkCost
				}
			}
		}
	}
	if err := c.m.grow(1, bytes, slot); err != nil {
		return err
	}
	c.heldStates++
	c.heldBytes += bytes
	for _, f := range st.frames {
		if f.refs++; f.refs == 1 {
			for _, ch := range f.chunks {
				if ch != nil {
					ch.refs++
				}
			}
		}
	}
	return nil
}

// release undoes hold for a state no longer kept.
func (c *checker) release(st *state) {
	bytes := stateCost + framePtr*int64(len(st.frames))
	for _, f := range st.frames {
		if f.refs--; f.refs == 0 {
			bytes += frameCost
			for _, ch := range f.chunks {
				if ch != nil {
					if ch.refs--; ch.refs == 0 {
						bytes += chunkCost
					}
				}
			}
		}
	}
	c.m.shrink(1, bytes)
	c.heldStates--
	c.heldBytes -= bytes
}

// analyzeEntry runs the fixpoint from one entry and returns its bound.
func (c *checker) analyzeEntry(e Entry) (uint64, *Error) {
	defer func() { // this entry's states are dropped
		c.m.shrink(c.heldStates, c.heldBytes)
		c.heldStates, c.heldBytes = 0, 0
	}()
	root := int(c.g.blockOf[e.Slot])
	c.ctxs = nil
	c.ctxKey, c.shared, c.strings = map[[2]int]int{}, map[[2]int]int{}, map[int]int{}
	c.states, c.bounds = map[node]*nodeState{}, map[int]uint64{}
	c.work = &worklist{order: c.order}
	if _, err := c.newContext(-1, -1, root, 1, false); err != nil {
		return 0, err
	}
	if err := c.propagate(node{0, root}, c.initial()); err != nil {
		return 0, err
	}
	for c.work.Len() > 0 {
		n := heap.Pop(c.work).(node)
		if n.block == resumeBlock {
			if err := c.resumeAll(c.ctxs[n.ctx]); err != nil {
				return 0, err
			}
			continue
		}
		ns := c.states[n]
		ns.queued = false
		c.visits++
		b := c.g.blk(n.block)
		if err := c.m.step(int64(b.insns)+visitCost, b.start); err != nil {
			return 0, err
		}
		st := ns.st.clone()
		if c.cfg.Log != nil {
			fmt.Fprintf(c.cfg.Log, "ctx %d block %d (insns %d..%d): %s\n", n.ctx, n.block, b.start, b.end-1, st.regString())
			if s := st.stackString(); s != "" {
				fmt.Fprintf(c.cfg.Log, "\tstack: %s\n", s)
			}
		}
		if err := c.block(st, n); err != nil {
			return 0, err
		}
	}
	return c.bound(0)
}

// newContext adds a context; parent and site are -1 for the root and for
// shared contexts.
func (c *checker) newContext(parent, site, fn, depth int, shared bool) (int, *Error) {
	if err := c.m.grow(0, ctxCost, c.g.blk(fn).start); err != nil {
		return 0, err
	}
	id := len(c.ctxs)
	ctx := &context{id: id, parent: parent, site: site, fn: fn, depth: depth, shared: shared}
	if shared {
		ctx.contAt = map[[2]int]int{}
	}
	c.ctxs = append(c.ctxs, ctx)
	return id, nil
}

// propagate hands st to node n: the first state n gets is kept, later ones
// are joined in (widened at loop heads), and n is queued when its state
// grew.
func (c *checker) propagate(n node, st *state) *Error {
	slot := c.g.blk(n.block).start
	ns := c.states[n]
	if ns == nil {
		if err := c.hold(st, slot); err != nil {
			return err
		}
		ns = &nodeState{st: st}
		c.states[n] = ns
	} else {
		old := ns.st
		ns.joins++
		if err := c.m.step(int64(8*len(st.frames)), slot); err != nil {
			return err
		}
		widen := c.loopHead[n.block] && ns.joins > widenAfter
		th := scalar.Thresholds{}
		if ctx := c.ctxs[n.ctx]; ctx.shared && n.block == ctx.fn && !c.loopHead[n.block] {
			// The entry of a shared context, joined from every call
			// that shares it: widen straight to the limits, so that
			// callers passing ever new constants settle at once.
			widen = ns.joins > widenAfter
		} else if widen {
			var err *Error
			if th, err = c.thresholds(slot); err != nil {
				return err
			}
		}
		merged := old.join(st, int32(n.block+1), widen, th)
		if merged.equal(old) {
			return nil
		}
		if err := c.hold(merged, slot); err != nil {
			return err
		}
		c.release(old)
		ns.st = merged
	}
	if !ns.queued {
		ns.queued = true
		heap.Push(c.work, n)
	}
	return nil
}

// noteStack records the stack in use at the end of a block: the sum of the
// frames' depths.
func (c *checker) noteStack(st *state) {
	sum := 0
	for _, f := range st.frames {
		sum += f.depth
	}
	c.stackDepth = max(c.stackDepth, sum)
}

// block runs one block in one context and hands its successors their states.
func (c *checker) block(st *state, n node) *Error {
	b := c.g.blk(n.block)
	for s := b.start; s < b.last; s++ {
		if c.p.insnAt[s] < 0 {
			continue
		}
		if err := c.step(st, s); err != nil {
			return err
		}
		c.logInsn(s, st)
	}
	ins := c.p.at(b.last)
	if b.term == termFall {
		if err := c.step(st, b.last); err != nil {
			return err
		}
		c.logInsn(b.last, st)
	}
	c.noteStack(st)
	switch b.term {
	case termFall, termJump:
		return c.propagate(node{n.ctx, b.succs[0]}, st)
	case termCond:
		fall, taken, err := c.branch(st, b.last, ins)
		if err != nil {
			return err
		}
		if fall != nil {
			if err := c.propagate(node{n.ctx, b.succs[0]}, fall); err != nil {
				return err
			}
		}
		if taken != nil {
			return c.propagate(node{n.ctx, b.succs[1]}, taken)
		}
	case termCall:
		return c.call(st, n, b)
	case termExit:
		return c.exit(st, n, b)
	}
	return nil
}

func (c *checker) logInsn(slot int, st *state) {
	if c.cfg.Log == nil {
		return
	}
	text, _ := bytecode.Disassemble(asmOne(c.p.at(slot)))
	fmt.Fprintf(c.cfg.Log, "%4d: %-28s ; %s\n", slot, trimNL(text), st.regString())
}

func asmOne(ins *asm.Instruction) asm.Instructions { return asm.Instructions{*ins} }

func trimNL(s string) string {
	for len(s) > 0 && s[len(s)-1] == '\n' {
		s = s[:len(s)-1]
	}
	return s
}

// calleeContext is the context a call from block b of context parent
// enters: a new call string while the callee has call strings left, else
// the callee's shared context at that depth.
func (c *checker) calleeContext(parent int, b *block) (int, *Error) {
	key := [2]int{parent, b.id}
	if id, ok := c.ctxKey[key]; ok {
		return id, nil
	}
	depth := c.ctxs[parent].depth + 1
	var id int
	var err *Error
	if c.strings[b.callee] < c.m.lim.CallStrings {
		c.strings[b.callee]++
		id, err = c.newContext(parent, b.id, b.callee, depth, false)
	} else if sid, ok := c.shared[[2]int{b.callee, depth}]; ok {
		id = sid
	} else {
		id, err = c.newContext(-1, -1, b.callee, depth, true)
		c.shared[[2]int{b.callee, depth}] = id
	}
	if err != nil {
		return 0, err
	}
	if err := c.m.grow(0, mapEntry, b.last); err != nil {
		return 0, err
	}
	c.ctxKey[key] = id
	return id, nil
}

// call enters a local function.
func (c *checker) call(st *state, n node, b *block) *Error {
	id, err := c.calleeContext(n.ctx, b)
	if err != nil {
		return err
	}
	callee := st.clone()
	f := &frame{callerWrote: st.wrote}
	copy(f.saved[:], st.regs[asm.R6:asm.R10])
	for _, v := range f.saved {
		f.pkts = f.pkts || v.kind.packetLike()
	}
	callee.frames = append(callee.frames, f)
	callee.own |= 1 << (len(callee.frames) - 1)
	callee.wrote = 0
	for r := asm.R0; r <= asm.R9; r++ {
		if r < asm.R1 || r > asm.R5 {
			callee.regs[r] = value{}
		}
	}
	callee.regs[asm.R10] = value{kind: kStack, frame: int8(len(callee.frames) - 1), off: scalar.Const(0)}
	c.logInsn(b.last, callee)
	if c.ctxs[id].shared {
		if err := c.addCont(id, n.ctx, b.id, st); err != nil {
			return err
		}
	}
	return c.propagate(node{id, b.callee}, callee)
}

// addCont records that the caller's context entered shared context id
// from block site with state st, and returns to it at once if the shared
// context has reached an exit.
func (c *checker) addCont(id, caller, site int, st *state) *Error {
	ctx := c.ctxs[id]
	key := [2]int{caller, site}
	slot := c.g.blk(site).last
	i, ok := ctx.contAt[key]
	if ok {
		old := ctx.conts[i].st
		merged := old.join(st, int32(site+1), false, scalar.Thresholds{})
		if merged.equal(old) {
			return nil
		}
		if err := c.hold(merged, slot); err != nil {
			return err
		}
		c.release(old)
		ctx.conts[i].st = merged
	} else {
		if err := c.hold(st, slot); err != nil {
			return err
		}
		if err := c.m.grow(0, mapEntry+int64(unsafe.Sizeof(cont{})), slot); err != nil {
			return err
		}
		i = len(ctx.conts)
		ctx.contAt[key] = i
		ctx.conts = append(ctx.conts, cont{ctx: caller, site: site, st: st})
	}
	if ctx.exit == nil {
		return nil
	}
	return c.resume(ctx, ctx.conts[i])
}

// resume returns from shared context ctx to one of its callers.
func (c *checker) resume(ctx *context, k cont) *Error {
	if err := c.m.step(visitCost, c.g.blk(k.site).last); err != nil {
		return err
	}
	return c.propagate(node{k.ctx, c.g.blk(k.site).succs[0]}, c.combine(ctx.exit, k.st))
}

// resumeAll returns from shared context ctx to every caller.
func (c *checker) resumeAll(ctx *context) *Error {
	ctx.resumeQueued = false
	for i := range ctx.conts {
		if err := c.resume(ctx, ctx.conts[i]); err != nil {
			return err
		}
	}
	return nil
}

// combine is the caller's state after a call that shared a context: r0
// and the frames the callee may have written from ex, the state at the
// shared context's exit; r6–r9 and every other frame from the caller's own
// state at the call. Request and reply pointers taken from the caller lose
// their identity (become solo): the callee may have run the instruction
// that made it again, for pointers it gives back.
func (c *checker) combine(ex, caller *state) *state {
	d := len(ex.frames) - 1 // the callee's frame
	ret := &state{frames: make([]*frame, d)}
	copy(ret.frames, caller.frames)
	for fi := range d {
		if ex.wrote&(1<<fi) != 0 {
			ret.frames[fi] = ex.frames[fi]
			continue
		}
		f := ret.frames[fi]
		if soloNeeded(f) {
			g := ret.frameW(fi)
			g.updateSpills(unsolo, makeSolo)
			for i := range g.saved {
				makeSolo(&g.saved[i])
			}
		}
	}
	ret.regs[asm.R0] = ex.regs[asm.R0]
	for r := asm.R6; r <= asm.R9; r++ {
		ret.regs[r] = caller.regs[r]
		makeSolo(&ret.regs[r])
	}
	ret.regs[asm.R10] = value{kind: kStack, frame: int8(d - 1), off: scalar.Const(0)}
	ret.wrote = caller.wrote | ex.wrote&(1<<(d-1)-1)
	return ret
}

func makeSolo(v *value) {
	if v.kind.packetLike() && v.id != 0 {
		v.solo = true
	}
}

// unsolo reports whether v has an identity it shares.
func unsolo(v *value) bool { return v.kind.packetLike() && v.id != 0 && !v.solo }

func soloNeeded(f *frame) bool {
	if !f.pkts {
		return false
	}
	for i := range f.saved {
		if unsolo(&f.saved[i]) {
			return true
		}
	}
	return f.anySpill(unsolo)
}

// exit returns from a local function to its caller, or ends the run.
func (c *checker) exit(st *state, n node, b *block) *Error {
	if st.regs[asm.R0].kind == kConflict {
		return c.fail(b.last, CodePointerLeak, st, nil, "r0 may hold a pointer here: it does on some path that merges before this exit")
	}
	r0, err := c.use(st, b.last, asm.R0)
	if err != nil {
		err.Msg = "exit: " + err.Msg
		return err
	}
	ctx := c.ctxs[n.ctx]
	if ctx.parent < 0 && !ctx.shared {
		if r0.kind.isPointer() {
			return c.fail(b.last, CodePointerLeak, st, []asm.Register{asm.R0}, "the program returns a pointer in r0")
		}
		return nil
	}
	depth := len(st.frames) - 1
	if r0.kind == kStack && int(r0.frame) == depth {
		return c.fail(b.last, CodePointerLeak, st, []asm.Register{asm.R0}, "a function returns a pointer into its own stack frame, which dies with it")
	}
	for fi := 0; fi < depth; fi++ {
		left := -1
		st.frames[fi].eachSpill(func(slot int, v value) {
			if v.kind == kStack && int(v.frame) == depth && left < 0 {
				left = slot
			}
		})
		if left >= 0 {
			return c.fail(b.last, CodePointerLeak, st, nil, "a pointer into the returning function's frame is left in frame %d at fp%d", fi, -stackSize+left*8)
		}
	}
	if ctx.shared {
		return c.sharedExit(ctx, st, b.last)
	}
	ret := st.clone()
	callee := ret.frames[depth]
	ret.frames = ret.frames[:depth]
	ret.own &= 1<<depth - 1
	for i := range 4 {
		ret.regs[asm.R6+asm.Register(i)] = callee.saved[i]
	}
	for r := asm.R1; r <= asm.R5; r++ {
		ret.regs[r] = value{}
	}
	ret.regs[asm.R10] = value{kind: kStack, frame: int8(depth - 1), off: scalar.Const(0)}
	ret.wrote = callee.callerWrote | st.wrote&(1<<(depth-1)-1)
	return c.propagate(node{ctx.parent, c.g.blk(ctx.site).succs[0]}, ret)
}

// sharedExit joins st into the exit state of shared context ctx and, when
// that grew, returns to every caller waiting on it.
func (c *checker) sharedExit(ctx *context, st *state, slot int) *Error {
	if ctx.exit == nil {
		if err := c.hold(st, slot); err != nil {
			return err
		}
		ctx.exit = st
	} else {
		merged := ctx.exit.join(st, int32(ctx.fn+1), false, scalar.Thresholds{})
		if merged.equal(ctx.exit) {
			return nil
		}
		if err := c.hold(merged, slot); err != nil {
			return err
		}
		c.release(ctx.exit)
		ctx.exit = merged
	}
	// The callers get the exit state once the context has settled, not
	// at every exit it reaches on the way.
	if !ctx.resumeQueued {
		ctx.resumeQueued = true
		heap.Push(c.work, node{ctx.id, resumeBlock})
	}
	return nil
}

var conds = [...]scalar.Cond{
	asm.JEq: scalar.JEq, asm.JNE: scalar.JNe, asm.JGT: scalar.JGt, asm.JGE: scalar.JGe,
	asm.JLT: scalar.JLt, asm.JLE: scalar.JLe, asm.JSGT: scalar.JSGt, asm.JSGE: scalar.JSGe,
	asm.JSLT: scalar.JSLt, asm.JSLE: scalar.JSLe, asm.JSet: scalar.JSet,
}

// branch returns the states on the fall-through and taken edges of a
// conditional jump; nil for an edge no execution takes.
func (c *checker) branch(st *state, slot int, ins *asm.Instruction) (fall, taken *state, err *Error) {
	op := bytecode.RawOpcode(ins)
	jmp32 := asm.Class(op&7) == asm.Jump32Class
	reg := op&0x08 != 0
	a, err := c.use(st, slot, ins.Dst)
	if err != nil {
		return nil, nil, err
	}
	b := constValue(uint64(ins.Constant))
	regs := []asm.Register{ins.Dst}
	if reg {
		if b, err = c.use(st, slot, ins.Src); err != nil {
			return nil, nil, err
		}
		regs = append(regs, ins.Src)
	}
	jop := ins.OpCode.JumpOp()
	if a.kind.isPointer() || b.kind.isPointer() {
		return c.pointerBranch(st, slot, regs, jop, jmp32, a, b)
	}
	if int(jop) >= len(conds) {
		return nil, nil, c.fail(slot, CodeInvalidInsn, st, nil, "unexpected conditional jump %v", jop)
	}
	cond := conds[jop]
	if err := c.m.step(16, slot); err != nil {
		return nil, nil, err
	}
	if a2, b2, ok := scalar.Refine(cond, jmp32, a.off, b.off, true); ok {
		taken = st.clone()
		taken.regs[ins.Dst].off = a2
		if reg {
			taken.regs[ins.Src].off = b2
		}
	}
	if a2, b2, ok := scalar.Refine(cond, jmp32, a.off, b.off, false); ok {
		fall = st
		fall.regs[ins.Dst].off = a2
		if reg {
			fall.regs[ins.Src].off = b2
		}
	}
	return fall, taken, nil
}

// endOf is the end pointer a packet pointer is compared with.
func endOf(k kind) kind {
	switch k {
	case kReq:
		return kReqEnd
	case kReply:
		return kReplyEnd
	}
	return kUninit
}

// pointerBranch compares pointers: only two into one object, and a request
// or reply pointer with its end, which proves bytes safe on one edge.
func (c *checker) pointerBranch(st *state, slot int, regs []asm.Register, jop asm.JumpOp, jmp32 bool, a, b value) (fall, taken *state, err *Error) {
	if !a.kind.isPointer() || !b.kind.isPointer() {
		return nil, nil, c.fail(slot, CodePointerCompare, st, regs, "comparing a pointer with a number would reveal address bits")
	}
	if jmp32 {
		return nil, nil, c.fail(slot, CodePointerCompare, st, regs, "32-bit comparison of pointers")
	}
	pkt, end := a, b
	swapped := false
	pktReg := regs[0]
	if b.kind.packetLike() && endOf(b.kind) == a.kind {
		pkt, end, swapped = b, a, true
		pktReg = regs[len(regs)-1]
	}
	if !(pkt.kind.packetLike() && endOf(pkt.kind) == end.kind) {
		if !a.sameObject(b) && !(a.kind == endOf(b.kind) || b.kind == endOf(a.kind)) {
			return nil, nil, c.fail(slot, CodePointerCompare, st, regs, "comparing pointers into different objects (%s, %s)", a.kind, b.kind)
		}
		return st.clone(), st, nil
	}
	// pkt OP end, after putting the packet pointer on the left.
	op := jop
	if swapped {
		switch jop {
		case asm.JGT:
			op = asm.JLT
		case asm.JGE:
			op = asm.JLE
		case asm.JLT:
			op = asm.JGT
		case asm.JLE:
			op = asm.JGE
		default:
			op = asm.InvalidJumpOp
		}
	}
	fall, taken = st, st.clone()
	switch op {
	case asm.JGT, asm.JGE: // pkt > end: the fall-through has pkt <= end
		markSafe(fall, pktReg, pkt)
	case asm.JLT, asm.JLE: // pkt < end: the taken edge
		markSafe(taken, pktReg, pkt)
	}
	return fall, taken, nil
}

// markSafe records that pointer pkt, held in register reg, has pkt.fixed
// bytes in bounds: so does every value of the same identity, unless pkt
// is solo (its identity may be shared with other variable parts), when
// only reg learns it.
func markSafe(st *state, reg asm.Register, pkt value) {
	if pkt.fixed <= 0 {
		return
	}
	if pkt.solo {
		v := &st.regs[reg]
		v.rng = max(v.rng, pkt.fixed)
		return
	}
	match := func(v *value) bool {
		return v.kind == pkt.kind && v.id == pkt.id && !v.solo && v.rng < pkt.fixed
	}
	upd := func(v *value) {
		if match(v) {
			v.rng = pkt.fixed
		}
	}
	for i := range st.regs {
		upd(&st.regs[i])
	}
	eachFrameValue(st, match, upd)
}

// eachFrameValue applies upd to the spills and saved registers of every
// frame, copying only the frames that hold a value that matches.
func eachFrameValue(st *state, match func(*value) bool, upd func(*value)) {
	for fi, f := range st.frames {
		hit := f.anySpill(match)
		for i := range f.saved {
			hit = hit || match(&f.saved[i])
		}
		if !hit {
			continue
		}
		f = st.frameW(fi)
		f.updateSpills(match, upd)
		for i := range f.saved {
			upd(&f.saved[i])
		}
	}
}
