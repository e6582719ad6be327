package verifygen

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
)

// counter returns a callee-saved register for a loop counter, or false.
func (g *gen) counter(f *function) (asm.Register, bool) {
	for _, r := range []asm.Register{asm.R8, asm.R9} {
		if !f.reserved[r] {
			return r, true
		}
	}
	return 0, false
}

// loopCounts are constant trip counts; small ones for nested loops.
var (
	loopCounts      = []int64{1, 2, 3, 4, 7, 8, 15, 16, 31, 32, 63, 64, 100, 255, 256}
	innerLoopCounts = []int64{1, 2, 3, 4, 5, 8}
	kernelCounts    = []int64{1, 2, 3, 4, 5, 8}
)

// loop emits a loop whose counter c is known (by the generator) to lie in
// [0, maxC] inside the body; the body indexes memory with c and runs a
// few snippets.
func (g *gen) loop(f *function) {
	c, ok := g.counter(f)
	if !ok {
		g.noise(f)
		return
	}
	g.loops++
	f.reserved[c] = true
	g.nesting++
	g.loopNest++
	defer func() {
		f.reserved[c] = false
		g.nesting--
		g.loopNest--
	}()
	if g.rng.IntN(3) == 0 {
		g.loopShape(f, c)
		return
	}
	forms := []string{"up", "up", "down", "while", "memlen", "masked", "up-jmp32", "down-signed", "big"}
	form := forms[g.rng.IntN(len(forms))]
	if form == "memlen" && (!f.memLen || (g.opts.Kernel && g.mem > 32)) {
		form = "up"
	}
	if form == "masked" && f.reserved[asm.R7] && (c == asm.R9 || f.reserved[asm.R9]) {
		form = "up"
	}
	if form == "big" && (g.opts.Kernel || g.loopNest > 1) {
		form = "down"
	}
	counts := loopCounts
	if g.loopNest > 1 {
		counts = innerLoopCounts
	}
	if g.opts.Kernel {
		counts = kernelCounts
	}
	N := counts[g.rng.IntN(len(counts))]
	step := int64(1)
	if g.rng.IntN(4) == 0 {
		step = int64(1 + g.rng.IntN(4))
	}
	// A defect turns the loop unbounded (not in kernel mode) or the
	// indexed access one byte too far.
	bad := g.bad()
	unbounded := bad && !g.opts.Kernel && g.rng.IntN(2) == 0
	g.origin = "loop/" + form
	head, out := g.label(), g.label()
	var maxC int64 // the counter's largest value in the body
	var latch func()
	entry := f.st
	switch form {
	case "up", "up-jmp32":
		f.emit(g, asm.Mov.Imm(c, 0))
		maxC = (N - 1) / step * step
		latch = func() {
			f.emit(g, asm.Add.Imm(c, int32(step)))
			j := []asm.JumpOp{asm.JLT, asm.JSLT, asm.JNE, asm.JLE}[g.rng.IntN(4)]
			lim := N
			switch {
			case j == asm.JNE && N%step != 0:
				j = asm.JLT
			case j == asm.JLE:
				lim = N - 1
			}
			if unbounded {
				switch g.rng.IntN(3) {
				case 0:
					j, lim = asm.JNE, N*step+1
					if step == 1 {
						lim = 0 // c never returns to 0 before wrapping
					}
					g.defect("loop/%s: c += %d until c == %d never happens", form, step, lim)
				case 1:
					u := g.scratch(f, c)
					g.fresh(f, u, 8, false)
					f.jump(g, asm.JLT.Reg(c, u, ""), head)
					g.defect("loop/%s: bound loaded from memory", form)
					return
				default:
					j, lim = asm.JSGT, -1
					g.defect("loop/%s: c s> -1 holds until the counter wraps", form)
				}
			}
			if form == "up-jmp32" {
				f.jump(g, j.Imm32(c, int32(lim), ""), head)
			} else {
				f.jump(g, j.Imm(c, int32(lim), ""), head)
			}
		}
	case "down", "down-signed", "big":
		if form == "big" {
			N = []int64{1000, 4096, 20000, 99999}[g.rng.IntN(4)]
			g.budget = 1_000_000
		}
		if unbounded && N%2 == 0 {
			N++
		}
		f.emit(g, asm.Mov.Imm(c, int32(N)))
		maxC = N
		latch = func() {
			d := int64(1)
			if unbounded {
				d = 2
				g.defect("loop/%s: c -= 2 from an odd count misses 0", form)
			}
			f.emit(g, asm.Sub.Imm(c, int32(d)))
			switch {
			case unbounded:
				f.jump(g, asm.JNE.Imm(c, 0, ""), head)
			case form == "down-signed":
				f.jump(g, asm.JSGT.Imm(c, 0, ""), head)
			case g.rng.IntN(2) == 0:
				f.jump(g, asm.JNE.Imm(c, 0, ""), head)
			default:
				f.jump(g, asm.JGT.Imm(c, 0, ""), head)
			}
		}
	case "while":
		f.emit(g, asm.Mov.Imm(c, 0))
		maxC = N - 1
		f.bind(head)
		if g.rng.IntN(2) == 0 {
			f.jump(g, asm.JGE.Imm(c, int32(N), ""), out)
		} else {
			f.jump(g, asm.JSGT.Imm32(c, int32(N-1), ""), out)
		}
		top := head
		latch = func() {
			if unbounded {
				g.defect("loop/while: the counter is not advanced")
			} else {
				f.emit(g, asm.Add.Imm(c, 1))
			}
			f.jump(g, asm.Ja.Label(""), top)
		}
		head = "" // bound above
	case "memlen":
		f.emit(g, asm.Mov.Imm(c, 0))
		maxC = g.mem - 1
		latch = func() {
			f.emit(g, asm.Add.Imm(c, 1))
			if unbounded {
				f.jump(g, asm.JNE.Reg(c, asm.R6, ""), head)
				g.defect("loop/memlen: compared with a pointer, never equal")
				return
			}
			f.jump(g, asm.JLT.Reg(c, asm.R7, ""), head)
		}
	case "masked":
		// The bound lives in a callee-saved register: the body may call.
		var n asm.Register
		for _, r := range []asm.Register{asm.R7, asm.R8, asm.R9} {
			if r != c && !f.reserved[r] {
				n = r
			}
		}
		mask := []int64{3, 7, 15, 31, 63}[g.rng.IntN(5)]
		if g.opts.Kernel {
			mask = 7
		}
		off, _ := g.fresh(f, n, 1, false)
		f.emit(g, asm.And.Imm(n, int32(mask)), asm.Mov.Imm(c, 0))
		g.hint(off, 1, 0xff)
		f.reserved[n] = true
		defer func() { f.reserved[n] = false }()
		maxC = max(mask-1, 0)
		latch = func() {
			f.emit(g, asm.Add.Imm(c, 1))
			if unbounded {
				f.emit(g, asm.Mov.Imm(n, -1))
				g.defect("loop/masked: the bound is reset to -1 in the body")
			}
			f.jump(g, asm.JLT.Reg(c, n, ""), head)
		}
	}
	g.set(f, c, kScalar, 0)
	if head != "" {
		f.bind(head)
	}
	// The body starts from what holds on every way around: scratch
	// registers may have been clobbered by calls in the body.
	for r := asm.R0; r <= asm.R5; r++ {
		if !f.reserved[r] {
			f.st.kind[r] = kNone
		}
	}
	// The body: an access indexed by the counter, and a few snippets.
	if g.mem > maxC && g.rng.IntN(10) < 7 {
		g.origin = "loop/" + form + "/index"
		s := g.pickSize(g.mem - maxC)
		cc := g.mem - s64(s) - maxC
		if g.rng.IntN(2) == 0 {
			cc = g.rng.Int64N(cc + 1)
		}
		if bad && !unbounded {
			cc = g.mem - s64(s) - maxC + 1
			g.defect("loop/%s: index up to %d + %d + %d bytes past %d", form, maxC, cc, s, g.mem)
		}
		g.indexAccess(f, c, cc, s)
	}
	if form != "big" {
		for range g.rng.IntN(3) {
			g.snippet(f)
		}
	}
	g.origin = "loop/" + form
	latch()
	if form == "while" {
		f.bind(out)
		f.emit(g, asm.Mov.Imm(c, 0))
	}
	f.st.join(&entry)
	g.set(f, c, kScalar, 0)
}

func s64(n int) int64 { return int64(n) }

// ifElse emits a two-way branch on a number from memory and joins it.
func (g *gen) ifElse(f *function) {
	g.nesting++
	defer func() { g.nesting-- }()
	g.origin = "if-else"
	x := g.scratch(f)
	f.reserved[x] = true
	signed := g.rng.IntN(4) == 0
	off, size := g.fresh(f, x, 1<<g.rng.IntN(4), signed)
	j := []asm.JumpOp{asm.JEq, asm.JNE, asm.JGT, asm.JGE, asm.JLT, asm.JLE, asm.JSGT, asm.JSGE, asm.JSLT, asm.JSLE, asm.JSet}[g.rng.IntN(11)]
	els, join := g.label(), g.label()
	// A constant among the values x takes, so that runs (with the hints)
	// go both ways.
	k := int32(g.rng.IntN(256))
	if signed {
		k -= 128
	}
	if g.rng.IntN(3) == 0 {
		k = g.imm32()
	}
	g.hint(off, size, 0, uint64(k), uint64(k)+1, uint64(k)-1, 0xff, ^uint64(0))
	if g.rng.IntN(2) == 0 {
		f.jump(g, j.Imm(x, k, ""), els)
	} else {
		f.jump(g, j.Imm32(x, k, ""), els)
	}
	f.reserved[x] = false
	entry := f.st
	// What the two sides do to one stack slot and one register decides
	// whether a read after the join is safe.
	slot := -8 * (1 + g.rng.Int64N(g.stackLimit/8))
	r := g.scratch(f, x)
	pattern := g.rng.IntN(7)
	bad := pattern > 0 && g.bad()
	// Patterns 4 and 5: a memory pointer at offset a or b (in a register,
	// or spilled), dereferenced at -c after the join: the accesses land
	// at a-c and b-c.
	s := g.pickSize(g.mem)
	c := int64(0)
	if g.rng.IntN(2) == 0 {
		c = g.rng.Int64N(64)
	}
	a, b := c+g.rng.Int64N(g.mem-int64(s)+1), c+g.rng.Int64N(g.mem-int64(s)+1)
	if bad && pattern >= 4 {
		b = c + g.mem - int64(s) + 1 // one past on one side
	}
	ptrSide := func(which int) int64 {
		if which == 0 {
			return a
		}
		return b
	}
	g.spillSide = g.rng.IntN(2)
	side := func(which int) {
		for range g.rng.IntN(3) {
			g.snippet(f)
		}
		g.origin = "if-else"
		switch {
		case pattern == 1 && (which == 0 || !bad): // the slot written on both sides, or one when bad
			f.emit(g, storeImm(asm.R10, int16(slot), int64(which), asm.DWord))
			f.markStack(slot, 8)
		case pattern == 2 && (which == 0 || !bad): // the register
			f.emit(g, asm.Mov.Imm(r, int32(which)))
			g.set(f, r, kScalar, 0)
		case pattern == 3: // a pointer on one side, a number on the other when bad
			if which == 1 && bad {
				f.emit(g, asm.Mov.Imm(r, 0))
				g.set(f, r, kScalar, 0)
			} else {
				f.emit(g, asm.Mov.Reg(r, asm.R6))
				g.set(f, r, kMemPtr, 0)
			}
		case pattern == 4: // the pointer in a register
			f.emit(g, asm.Mov.Reg(r, asm.R6), asm.Add.Imm(r, int32(ptrSide(which))))
			g.set(f, r, kMemPtr, ptrSide(which))
		case pattern == 6: // data on both sides, or a pointer spill on one when bad
			if which == g.spillSide && bad {
				f.emit(g, asm.StoreMem(asm.R10, int16(slot), []asm.Register{asm.R6, asm.R10}[g.rng.IntN(2)], asm.DWord))
			} else {
				f.emit(g, storeImm(asm.R10, int16(slot), int64(which), asm.Word), storeImm(asm.R10, int16(slot+4), 0, asm.Word))
			}
		case pattern == 5: // the pointer spilled
			f.emit(g, asm.Mov.Reg(r, asm.R6), asm.Add.Imm(r, int32(ptrSide(which))),
				asm.StoreMem(asm.R10, int16(slot), r, asm.DWord))
			f.unmarkStack(slot, 8)
			g.set(f, r, kMemPtr, ptrSide(which))
		}
	}
	side(0)
	if g.rng.IntN(4) == 0 {
		f.jump(g, asm.LongJump(""), join)
	} else {
		f.jump(g, asm.Ja.Label(""), join)
	}
	then := f.st
	f.st = entry
	f.bind(els)
	// The else side must hold an instruction even when empty.
	f.emit(g, asm.Mov.Imm(x, 1))
	side(1)
	f.bind(join)
	f.st.join(&then)
	g.origin = "if-else/join"
	switch pattern {
	case 1:
		q := g.scratch(f)
		f.emit(g, asm.LoadMem(q, asm.R10, int16(slot), asm.DWord))
		g.set(f, q, kScalar, 0)
		if bad {
			g.defect("if-else: r10%+d written on one side only, read after the join", slot)
		} else {
			f.markStack(slot, 8)
		}
	case 2:
		q := g.scratch(f, r)
		f.emit(g, asm.Mov.Reg(q, r))
		g.set(f, q, kScalar, 0)
		if bad {
			g.defect("if-else: r%d written on one side only, read after the join", r)
		}
	case 3:
		g.access(f, r, 0, 1, opLoad)
		if bad {
			g.defect("if-else: r%d a pointer on one side, a number on the other, then dereferenced", r)
		}
	case 6:
		q := g.scratch(f)
		rs := 1 << g.rng.IntN(4)
		at := slot + int64(g.rng.IntN(8/rs)*rs)
		f.emit(g, asm.LoadMem(q, asm.R10, int16(at), sizeOf(rs)))
		g.set(f, q, kScalar, 0)
		// Use it as the number it must be: store it to memory.
		ws := g.pickSize(g.mem)
		f.emit(g, asm.StoreMem(asm.R6, 0, q, sizeOf(ws)))
		if bad {
			g.defect("if-else: r10%+d a pointer spill on one side, data on the other, %d bytes at r10%+d read after the join", slot, rs, at)
		} else {
			f.markStack(slot, 8)
		}
	case 4, 5:
		q := r
		if pattern == 5 {
			q = g.scratch(f)
			f.emit(g, asm.LoadMem(q, asm.R10, int16(slot), asm.DWord))
			g.set(f, q, kOther, 0)
		}
		g.origin = fmt.Sprintf("if-else/join-pointer%d", pattern)
		g.access(f, q, -c, s, g.pickOp(false))
		if bad {
			g.defect("if-else: a pointer at memory offset %d or %d, %d bytes at -%d after the join, mem %d", a, b, s, c, g.mem)
		}
	}
}

// call emits a local call that passes r1 = a pointer into the caller's
// stack (n initialised bytes at r10-k) and r2 = the memory pointer; the
// callee is generated on the spot, or an earlier one is reused.
func (g *gen) call(f *function) {
	g.origin = "call"
	if !g.opts.Kernel && g.rng.IntN(8) == 0 {
		g.deepChain(f)
		return
	}
	lim := g.stackLimit
	k := []int64{8, 16, 32, 64, 128, 256, 512}[g.rng.IntN(7)]
	for k > lim {
		k /= 2
	}
	n := min(k, 8*(1+g.rng.Int64N(8)))
	for o := -k; o < -k+n; o += 8 {
		f.emit(g, storeImm(asm.R10, int16(o), int64(g.imm32()), asm.DWord))
		f.markStack(o, 8)
	}
	var callee *function
	for _, fn := range g.funcs[1:] {
		if fn.hasArg && fn.argHi == k && fn.argInit <= n && fn.depth >= f.depth+1 && g.rng.IntN(3) == 0 {
			callee = fn
			break
		}
	}
	if callee == nil {
		callee = g.newCallee(f.depth+1, k, n, lim)
	}
	f.emit(g, asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, int32(-k)), asm.Mov.Reg(asm.R2, asm.R6))
	g.origin = "call"
	// The callee may have overwritten the bytes it was given.
	g.callFrom(f, callee.name, callee.retKind)
	if callee.retKind == kMemPtr && g.mem >= 1 {
		g.access(f, asm.R0, 0, 1, opLoad)
	}
}

// callFrom emits a call of the function named callee from f: r1–r5 are
// gone after it, r0 holds what the callee returns (ret).
func (g *gen) callFrom(f *function, callee string, ret regKind) {
	f.jump(g, asm.Call.Label(""), callee)
	g.calls++
	for r := asm.R1; r <= asm.R5; r++ {
		if !f.reserved[r] {
			g.set(f, r, kNone, 0)
		}
	}
	g.set(f, asm.R0, ret, 0)
}

// newCallee generates a function at the given depth that takes r1 = the
// caller's r10-k with n bytes initialised, and r2 = memory.
func (g *gen) newCallee(depth int, k, n, lim int64) *function {
	saved, savedNest, savedLoop := g.origin, g.nesting, g.loopNest
	fn := &function{name: fmt.Sprintf("f%d", len(g.funcs)), depth: depth, hasArg: true,
		argLo: -(lim - k), argHi: k, argInit: n, retKind: kScalar}
	g.funcs = append(g.funcs, fn)
	g.nesting, g.loopNest = 0, 0
	g.origin = fn.name + "/prologue"
	fn.emit(g, asm.Mov.Reg(asm.R6, asm.R2), asm.Mov.Reg(asm.R7, asm.R1))
	fn.st.kind[asm.R1], fn.st.kind[asm.R2] = kStackPtr, kMemPtr
	fn.st.kind[asm.R6], fn.st.kind[asm.R7], fn.st.kind[asm.R10] = kMemPtr, kStackPtr, kStackPtr
	fn.reserved[asm.R6], fn.reserved[asm.R7], fn.reserved[asm.R10] = true, true, true
	for range 1 + g.rng.IntN(3) {
		g.snippet(fn)
	}
	g.origin = fn.name + "/epilogue"
	switch {
	case g.bad() && g.rng.IntN(2) == 0:
		switch g.rng.IntN(3) {
		case 0:
			fn.emit(g, asm.Mov.Reg(asm.R0, asm.R10), asm.Add.Imm(asm.R0, -8), asm.Return())
			g.defect("call: %s returns a pointer into its own frame", fn.name)
		case 1:
			fn.emit(g, asm.StoreMem(asm.R7, 0, asm.R10, asm.DWord), asm.Mov.Imm(asm.R0, 0), asm.Return())
			g.defect("call: %s leaves a pointer to its frame in the caller's", fn.name)
		default:
			fn.emit(g, asm.Mov.Reg(asm.R0, asm.R10), asm.Return())
			g.defect("call: %s returns its own frame pointer", fn.name)
		}
	case g.rng.IntN(8) == 0:
		// The caller's own stack pointer comes back: allowed.
		fn.emit(g, asm.Mov.Reg(asm.R0, asm.R7), asm.Return())
		fn.retKind = kStackPtr
	case g.rng.IntN(4) == 0:
		fn.emit(g, asm.Mov.Reg(asm.R0, asm.R6), asm.Return())
		fn.retKind = kMemPtr
	default:
		g.epilogue(fn)
	}
	g.origin, g.nesting, g.loopNest = saved, savedNest, savedLoop
	return fn
}

// deepChain emits a chain of calls, each passing a pointer to its frame
// down, to exactly the deepest allowed frame or one past it.
func (g *gen) deepChain(f *function) {
	frames := maxFrames - f.depth - 1 // callees that still fit
	if g.bad() {
		frames++
		g.defect("call: a chain of %d calls from depth %d needs frame %d", frames, f.depth, f.depth+frames+1)
	}
	names := make([]string, frames)
	for i := range names {
		names[i] = fmt.Sprintf("f%d", len(g.funcs)+i)
	}
	f.emit(g, storeImm(asm.R10, -8, 1, asm.DWord))
	f.markStack(-8, 8)
	f.emit(g, asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, -8))
	g.callFrom(f, names[0], kScalar)
	saved := g.origin
	for i, name := range names {
		fn := &function{name: name, depth: f.depth + 1 + i}
		g.funcs = append(g.funcs, fn)
		g.origin = "call/chain"
		// Read the caller's byte, pass our own down.
		fn.emit(g, asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord), asm.StoreMem(asm.R10, -8, asm.R0, asm.DWord))
		if i+1 < len(names) {
			fn.emit(g, asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, -8))
			fn.jump(g, asm.Call.Label(""), names[i+1])
			g.calls++
		}
		fn.emit(g, asm.Add.Imm(asm.R0, 1), asm.Return())
	}
	g.origin = saved
}

// branchChain emits a long run of conditional jumps on a number, each
// over at most one instruction: as many blocks as jumps, every one a
// merge.
func (g *gen) branchChain(f *function) {
	saved := g.origin
	g.origin = "branch-chain"
	x := g.scratch(f)
	g.fresh(f, x, 1, false)
	n := []int{8, 32, 128, 512}[g.rng.IntN(4)]
	if g.loopNest > 0 {
		n = min(n, 32) // each way around a loop walks it again
	}
	for i := range n {
		l := g.label()
		switch g.rng.IntN(3) {
		case 0:
			f.jump(g, asm.JEq.Imm(x, int32(i%256), ""), l)
		case 1:
			f.jump(g, asm.JGT.Imm(x, int32(i%256), ""), l)
			f.emit(g, asm.Add.Imm(x, 1))
		default:
			f.jump(g, asm.JSet.Imm(x, int32(1)<<(i%8), ""), l)
			f.emit(g, asm.Xor.Imm(x, int32(i)))
		}
		f.bind(l)
	}
	g.set(f, x, kScalar, 0)
	g.origin = saved
}

// callTree emits a call of a tree of new functions as deep as the frames
// allow: each level calls the next fan times, with a different number in
// r1 at each site, and sums what they return. It has fan^depth chains of
// call sites, most of them beyond a function's own call contexts, so the
// verifier analyses them in shared ones.
func (g *gen) callTree(f *function) {
	levels := maxFrames - 1 - f.depth
	if levels < 1 {
		g.noise(f)
		return
	}
	saved := g.origin
	g.origin = "call/tree"
	depth := 1 + g.rng.IntN(levels)
	fan := 2 + g.rng.IntN(3)
	for depth > 1 && pow(fan, depth) > 512 {
		depth--
	}
	names := make([]string, depth+1)
	for l := 1; l <= depth; l++ {
		names[l] = fmt.Sprintf("f%d", len(g.funcs)+l-1)
	}
	f.emit(g, asm.Mov.Imm(asm.R1, g.imm32()))
	g.callFrom(f, names[1], kScalar)
	for l := 1; l <= depth; l++ {
		fn := &function{name: names[l], depth: f.depth + l}
		g.funcs = append(g.funcs, fn)
		if l == depth {
			fn.emit(g, asm.Mov.Reg(asm.R7, asm.R1), asm.And.Imm(asm.R7, 255))
		} else {
			fn.emit(g, asm.Mov.Reg(asm.R6, asm.R1), asm.Mov.Imm(asm.R7, 0))
			for i := range fan {
				fn.emit(g, asm.Mov.Reg(asm.R1, asm.R6), asm.Add.Imm(asm.R1, int32(i)))
				fn.jump(g, asm.Call.Label(""), names[l+1])
				fn.emit(g, asm.Add.Reg(asm.R7, asm.R0))
				g.calls++
			}
		}
		fn.emit(g, asm.Mov.Reg(asm.R0, asm.R7), asm.Return())
	}
	g.origin = saved
}

func pow(b, e int) int {
	n := 1
	for range e {
		n *= b
	}
	return n
}
