package verifier

import (
	"container/heap"
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/verifier/internal/scalar"
)

// widenAfter is how many times a loop head is joined before widening.
const widenAfter = 3

// maxVisits bounds the analysis itself: a program that needs more block
// visits than this is rejected rather than analysed forever.
const maxVisits = 1_000_000

// checker holds one verification: the program, its CFG and what the
// analysis has found so far.
type checker struct {
	p     *program
	g     *cfg
	funcs map[int]*function
	cfg   Config

	order      []int // block id → position in a depth-first order, for the worklist
	loopHead   []bool
	thresholds []uint64

	// Per entry analysis.
	ctxs   []*context
	ctxKey map[[2]int]int
	states map[node]*state
	visits int

	stackDepth                  int
	regionsRead, regionsWritten map[int16]bool
	helpersUsed                 map[uint32]bool
	loops                       map[int]*funcLoops // by function entry block
}

// context is a call string: which call site (in which parent context)
// entered the function. The root context is the entry's.
type context struct {
	id, parent int
	site       int // the parent's call block
	fn         int // the function's entry block
	depth      int // frames: 1 for the root
}

type node struct{ ctx, block int }

func newChecker(p *program, g *cfg, funcs map[int]*function, cfg Config) *checker {
	c := &checker{p: p, g: g, funcs: funcs, cfg: cfg,
		regionsRead: map[int16]bool{}, regionsWritten: map[int16]bool{}, helpersUsed: map[uint32]bool{},
		loops: map[int]*funcLoops{}}
	c.order = make([]int, len(g.blocks))
	c.loopHead = make([]bool, len(g.blocks))
	for i := range c.order {
		c.order[i] = -1
	}
	// Depth-first numbering and loop heads (targets of retreating edges).
	n := 0
	onStack := make([]bool, len(g.blocks))
	var dfs func(b int)
	dfs = func(b int) {
		c.order[b] = n
		n++
		onStack[b] = true
		bl := g.blocks[b]
		next := append([]int(nil), bl.succs...)
		if bl.term == termCall {
			next = append(next, bl.callee)
		}
		for _, s := range next {
			if c.order[s] < 0 {
				dfs(s)
			} else if onStack[s] {
				c.loopHead[s] = true
			}
		}
		onStack[b] = false
	}
	for _, b := range g.blocks {
		if c.order[b.id] < 0 {
			dfs(b.id)
		}
	}
	c.thresholds = thresholds(p, cfg)
	return c
}

// thresholds are the constants loop-head widening stops at: every
// immediate of the program and the sizes of its objects, each ±1.
func thresholds(p *program, cfg Config) []uint64 {
	out := make([]uint64, 0, 6*len(p.insns)+16)
	add := func(v uint64) { out = append(out, v-1, v, v+1) }
	add(0)
	for i := range p.insns {
		add(uint64(p.insns[i].Constant))
		add(uint64(uint32(p.insns[i].Constant)))
	}
	add(cfg.MemSize)
	for _, r := range cfg.Regions {
		add(r.Size)
	}
	add(stackSize)
	slices.Sort(out)
	return slices.Compact(out)
}

// initial is the state at an entry point.
func (c *checker) initial() *state {
	st := &state{frames: []*frame{{}}}
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
	in    map[node]bool
	order []int
}

func (w *worklist) Len() int { return len(w.items) }
func (w *worklist) Less(i, j int) bool {
	a, b := w.items[i], w.items[j]
	if a.ctx != b.ctx {
		return a.ctx < b.ctx
	}
	return w.order[a.block] < w.order[b.block]
}
func (w *worklist) Swap(i, j int) { w.items[i], w.items[j] = w.items[j], w.items[i] }
func (w *worklist) Push(x any)    { w.items = append(w.items, x.(node)) }
func (w *worklist) Pop() any {
	x := w.items[len(w.items)-1]
	w.items = w.items[:len(w.items)-1]
	return x
}

// analyzeEntry runs the fixpoint from one entry and returns its bound.
func (c *checker) analyzeEntry(e Entry) (uint64, *Error) {
	c.ctxs = []*context{{id: 0, parent: -1, site: -1, fn: c.g.blockOf[e.Slot], depth: 1}}
	c.ctxKey = map[[2]int]int{}
	c.states = map[node]*state{}
	joins := map[node]int{}
	w := &worklist{in: map[node]bool{}, order: c.order}
	propagate := func(n node, st *state) {
		old, ok := c.states[n]
		if !ok {
			c.states[n] = st
		} else {
			joins[n]++
			widen := c.loopHead[n.block] && joins[n] > widenAfter
			merged := old.join(st, int32(n.block+1), widen, c.thresholds)
			if merged.equal(old) {
				return
			}
			c.states[n] = merged
		}
		if !w.in[n] {
			w.in[n] = true
			heap.Push(w, n)
		}
	}
	propagate(node{0, c.g.blockOf[e.Slot]}, c.initial())
	for w.Len() > 0 {
		n := heap.Pop(w).(node)
		delete(w.in, n)
		c.visits++
		if c.visits > maxVisits {
			return 0, c.fail(c.g.blocks[n.block].start, CodeBudget, nil, nil, "the analysis needed more than %d block visits; simplify the control flow", maxVisits)
		}
		st := c.states[n].clone()
		if c.cfg.Log != nil {
			fmt.Fprintf(c.cfg.Log, "ctx %d block %d (insns %d..%d): %s\n", n.ctx, n.block, c.g.blocks[n.block].start, c.g.blocks[n.block].end-1, st.regString())
			if s := st.stackString(); s != "" {
				fmt.Fprintf(c.cfg.Log, "\tstack: %s\n", s)
			}
		}
		if err := c.block(st, n, propagate); err != nil {
			return 0, err
		}
	}
	return c.bound(0)
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
func (c *checker) block(st *state, n node, propagate func(node, *state)) *Error {
	b := c.g.blocks[n.block]
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
	case termFall:
		propagate(node{n.ctx, b.succs[0]}, st)
	case termJump:
		propagate(node{n.ctx, b.succs[0]}, st)
	case termCond:
		fall, taken, err := c.branch(st, b.last, ins)
		if err != nil {
			return err
		}
		if fall != nil {
			propagate(node{n.ctx, b.succs[0]}, fall)
		}
		if taken != nil {
			propagate(node{n.ctx, b.succs[1]}, taken)
		}
	case termCall:
		return c.call(st, n, b, propagate)
	case termExit:
		return c.exit(st, n, b, propagate)
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

// call enters a local function in a new context.
func (c *checker) call(st *state, n node, b *block, propagate func(node, *state)) *Error {
	ctx := c.ctxs[n.ctx]
	key := [2]int{n.ctx, b.id}
	id, ok := c.ctxKey[key]
	if !ok {
		id = len(c.ctxs)
		c.ctxKey[key] = id
		c.ctxs = append(c.ctxs, &context{id: id, parent: n.ctx, site: b.id, fn: b.callee, depth: ctx.depth + 1})
	}
	callee := st.clone()
	f := &frame{}
	copy(f.saved[:], st.regs[asm.R6:asm.R10])
	callee.frames = append(callee.frames, f)
	for r := asm.R0; r <= asm.R9; r++ {
		if r < asm.R1 || r > asm.R5 {
			callee.regs[r] = value{}
		}
	}
	callee.regs[asm.R10] = value{kind: kStack, frame: int8(len(callee.frames) - 1), off: scalar.Const(0)}
	c.logInsn(b.last, callee)
	propagate(node{id, b.callee}, callee)
	return nil
}

// exit returns from a local function to its caller, or ends the run.
func (c *checker) exit(st *state, n node, b *block, propagate func(node, *state)) *Error {
	if st.regs[asm.R0].kind == kConflict {
		return c.fail(b.last, CodePointerLeak, st, nil, "r0 may hold a pointer here: it does on some path that merges before this exit")
	}
	r0, err := c.use(st, b.last, asm.R0)
	if err != nil {
		err.Msg = "exit: " + err.Msg
		return err
	}
	ctx := c.ctxs[n.ctx]
	if ctx.parent < 0 {
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
		for slot, v := range st.frames[fi].spills {
			if st.frames[fi].bytes[slot*8] == bSpill && v.kind == kStack && int(v.frame) == depth {
				return c.fail(b.last, CodePointerLeak, st, nil, "a pointer into the returning function's frame is left in frame %d at fp%d", fi, -stackSize+slot*8)
			}
		}
	}
	ret := st.clone()
	callee := ret.frames[depth]
	ret.frames = ret.frames[:depth]
	for i := range 4 {
		ret.regs[asm.R6+asm.Register(i)] = callee.saved[i]
	}
	for r := asm.R1; r <= asm.R5; r++ {
		ret.regs[r] = value{}
	}
	ret.regs[asm.R10] = value{kind: kStack, frame: int8(depth - 1), off: scalar.Const(0)}
	site := c.g.blocks[ctx.site]
	propagate(node{ctx.parent, site.succs[0]}, ret)
	return nil
}

var conds = map[asm.JumpOp]scalar.Cond{
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
	cond := conds[jop]
	always, never := scalar.Decide(cond, jmp32, a.off, b.off)
	if !never {
		if a2, b2, ok := scalar.Refine(cond, jmp32, a.off, b.off, true); ok {
			taken = st.clone()
			taken.regs[ins.Dst].off = a2
			if reg {
				taken.regs[ins.Src].off = b2
			}
		}
	}
	if !always {
		if a2, b2, ok := scalar.Refine(cond, jmp32, a.off, b.off, false); ok {
			fall = st
			fall.regs[ins.Dst].off = a2
			if reg {
				fall.regs[ins.Src].off = b2
			}
		}
	}
	return fall, taken, nil
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
	endOf := map[kind]kind{kReq: kReqEnd, kReply: kReplyEnd}
	pkt, end := a, b
	swapped := false
	pktReg := regs[0]
	if b.kind.packetLike() && endOf[b.kind] == a.kind {
		pkt, end, swapped = b, a, true
		pktReg = regs[len(regs)-1]
	}
	if !(pkt.kind.packetLike() && endOf[pkt.kind] == end.kind) {
		if !a.sameObject(b) && !(a.kind == endOf[b.kind] || b.kind == endOf[a.kind]) {
			return nil, nil, c.fail(slot, CodePointerCompare, st, regs, "comparing pointers into different objects (%s, %s)", a.kind, b.kind)
		}
		return st.clone(), st, nil
	}
	// pkt OP end, after putting the packet pointer on the left.
	op := jop
	if swapped {
		op = map[asm.JumpOp]asm.JumpOp{asm.JGT: asm.JLT, asm.JGE: asm.JLE, asm.JLT: asm.JGT, asm.JLE: asm.JGE}[jop]
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
	upd := func(v *value) {
		if v.kind == pkt.kind && v.id == pkt.id && !v.solo {
			v.rng = max(v.rng, pkt.fixed)
		}
	}
	for i := range st.regs {
		upd(&st.regs[i])
	}
	for _, f := range st.frames {
		for i := range f.spills {
			upd(&f.spills[i])
		}
		for i := range f.saved {
			upd(&f.saved[i])
		}
	}
}
