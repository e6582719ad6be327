package verifygen

import "github.com/cilium/ebpf/asm"

// loopShape emits one of the less regular loops: a second back edge
// ("continue"), a counter that moves by 1 or 2, an inner loop bounded by
// the outer counter, a counter that starts from an unknown value, a
// 64-bit counter compared in 32 bits. The bound on the counter inside the
// body is known, and the body indexes memory with it.
func (g *gen) loopShape(f *function, c asm.Register) {
	shapes := []string{"continue", "uneven", "triangular", "unknown-start", "jmp32-upper"}
	shape := shapes[g.rng.IntN(len(shapes))]
	var j asm.Register // the triangular loop's inner counter
	if shape == "triangular" {
		var ok bool
		j, ok = g.counter(f) // c is reserved already
		if !ok {
			shape = "uneven"
		}
	}
	g.origin = "loop/" + shape
	counts := loopCounts
	if g.loopNest > 1 || shape == "triangular" {
		counts = innerLoopCounts
	}
	if g.opts.Kernel {
		counts = kernelCounts
	}
	N := counts[g.rng.IntN(len(counts))]
	bad := g.bad()
	head, out := g.label(), g.label()
	entry := f.st
	// body indexes memory with r, whose largest value there is maxR.
	body := func(r asm.Register, maxR int64) {
		for q := asm.R0; q <= asm.R5; q++ {
			if !f.reserved[q] {
				f.st.kind[q] = kNone
			}
		}
		if maxR >= 0 && g.mem > maxR && g.rng.IntN(10) < 7 {
			g.origin = "loop/" + shape + "/index"
			s := g.pickSize(g.mem - maxR)
			cc := g.mem - s64(s) - maxR
			if bad {
				cc++
				g.defect("loop/%s: index up to %d + %d + %d bytes past %d", shape, maxR, cc, s, g.mem)
			}
			g.indexAccess(f, r, cc, s)
		}
		for range g.rng.IntN(2) {
			g.snippet(f)
		}
		g.origin = "loop/" + shape
	}
	coin := func() {
		// x = a fresh byte; its low bit picks the way.
		x := g.scratch(f, c, j)
		g.fresh(f, x, 1, false)
		f.emit(g, asm.And.Imm(x, 1))
	}
	switch shape {
	case "continue":
		f.emit(g, asm.Mov.Imm(c, 0))
		f.bind(head)
		body(c, N-1)
		f.emit(g, asm.Add.Imm(c, 1))
		f.jump(g, asm.JGE.Imm(c, int32(N), ""), out)
		x := g.scratch(f, c)
		g.fresh(f, x, 1, false)
		f.jump(g, asm.JSet.Imm(x, 1, ""), head)
		for range g.rng.IntN(2) {
			g.snippet(f)
		}
		g.origin = "loop/" + shape
		f.jump(g, asm.Ja.Label(""), head)
		f.bind(out)
		f.emit(g, asm.Mov.Imm(c, 0))
	case "uneven":
		two, join := g.label(), g.label()
		f.emit(g, asm.Mov.Imm(c, 0))
		f.bind(head)
		body(c, N-1)
		coin()
		x := f.items[len(f.items)-1].ins.Dst
		f.jump(g, asm.JNE.Imm(x, 0, ""), two)
		f.emit(g, asm.Add.Imm(c, 1))
		f.jump(g, asm.Ja.Label(""), join)
		f.bind(two)
		f.emit(g, asm.Add.Imm(c, 2))
		f.bind(join)
		f.jump(g, asm.JLT.Imm(c, int32(N), ""), head)
	case "triangular":
		f.reserved[j] = true
		defer func() { f.reserved[j] = false }()
		inner := g.label()
		f.emit(g, asm.Mov.Imm(c, 0))
		f.bind(head)
		f.emit(g, asm.Mov.Imm(j, 0))
		f.bind(inner)
		body(j, max(N-2, 0))
		f.emit(g, asm.Add.Imm(j, 1))
		f.jump(g, asm.JLT.Reg(j, c, ""), inner)
		f.emit(g, asm.Add.Imm(c, 1))
		f.jump(g, asm.JLT.Imm(c, int32(N), ""), head)
		g.set(f, j, kScalar, 0)
	case "unknown-start":
		off, _ := g.fresh(f, c, 1, false)
		f.emit(g, asm.And.Imm(c, 15))
		g.hint(off, 1, 0, 15, 0xff)
		f.bind(head)
		body(c, max(15, N-1))
		f.emit(g, asm.Add.Imm(c, 1))
		f.jump(g, asm.JLT.Imm(c, int32(N), ""), head)
	case "jmp32-upper":
		f.emit(g, asm.LoadImm(c, []int64{1 << 32, -1 << 32, 0x7fffffff_00000000}[g.rng.IntN(3)], asm.DWord))
		f.bind(head)
		body(c, -1)
		f.emit(g, asm.Add.Imm(c, 1))
		f.jump(g, asm.JLT.Imm32(c, int32(N), ""), head)
	}
	f.st.join(&entry)
	g.set(f, c, kScalar, 0)
}
