package verifygen

import (
	"strings"

	"github.com/cilium/ebpf/asm"
)

// derived emits x = f(input byte) through up to three ALU operations and
// returns the value x takes for each input byte (index: the byte).
func (g *gen) derived(f *function, x asm.Register, maxOps int) (off int64, vals [256]uint64, names []string) {
	signed := g.rng.IntN(4) == 0
	off, _ = g.fresh(f, x, 1, signed)
	var steps []asm.Instruction
	for range g.rng.IntN(maxOps + 1) {
		var ins asm.Instruction
		aop := []asm.ALUOp{asm.Add, asm.Sub, asm.Mul, asm.Div, asm.SDiv, asm.Mod, asm.SMod, asm.Or, asm.And,
			asm.LSh, asm.RSh, asm.ArSh, asm.Xor, asm.Neg, asm.MovSX8, asm.MovSX16, asm.MovSX32, asm.Swap}[g.rng.IntN(18)]
		alu32 := g.rng.IntN(3) == 0
		switch aop {
		case asm.Swap:
			w := sizeOf([]int{2, 4, 8}[g.rng.IntN(3)])
			ins = []asm.Instruction{asm.BSwap(x, w), asm.HostTo(asm.BE, x, w), asm.HostTo(asm.LE, x, w)}[g.rng.IntN(3)]
		case asm.Neg:
			ins = asm.Neg.Imm(x, 0)
			if alu32 {
				ins = asm.Neg.Imm32(x, 0)
			}
		case asm.MovSX8, asm.MovSX16, asm.MovSX32:
			ins = aop.Reg(x, x)
			if alu32 && aop != asm.MovSX32 {
				ins = aop.Reg32(x, x)
			}
		default:
			k := g.chainImm(aop)
			ins = aop.Imm(x, k)
			if alu32 {
				ins = aop.Imm32(x, k)
			}
		}
		steps = append(steps, ins)
		names = append(names, aluName(&ins))
		f.emit(g, ins)
	}
	for in := range 256 {
		v := uint64(in)
		if signed {
			v = uint64(int64(int8(in)))
		}
		for i := range steps {
			v = EvalALU(&steps[i], v, v)
		}
		vals[in] = v
	}
	g.set(f, x, kScalar, 0)
	return off, vals, names
}

var conds = []asm.JumpOp{asm.JEq, asm.JNE, asm.JGT, asm.JGE, asm.JLT, asm.JLE, asm.JSGT, asm.JSGE, asm.JSLT, asm.JSLE, asm.JSet}

// refine: a derived value, one or two conditional jumps on it (with an
// immediate or a second derived value), and on the edge the program
// continues on, an access whose offset is the value, aimed by enumeration
// at the exact range of the values that can reach it. When no value
// reaches the edge, the access is out of bounds on purpose: only a
// verifier that proves the edge dead may accept it.
func (g *gen) refine(f *function) {
	g.origin = "refine"
	x := g.scratch(f)
	f.reserved[x] = true
	defer func() { f.reserved[x] = false }()
	off, vals, ops := g.derived(f, x, 2)
	alive := make([]bool, 256)
	for i := range alive {
		alive[i] = true
	}
	// An optional second operand: another derived value, or a constant in
	// a register.
	var y asm.Register = 255
	var yvals [256]uint64
	var yoff int64
	if g.rng.IntN(3) == 0 {
		y = g.scratch(f, x)
		f.reserved[y] = true
		defer func() { f.reserved[y] = false }()
		var yops []string
		yoff, yvals, yops = g.derived(f, y, 1)
		ops = append(ops, yops...)
	}
	skip := g.label()
	entry := f.st
	jumps := 1 + g.rng.IntN(2)
	var jnames []string
	for range jumps {
		jop := conds[g.rng.IntN(len(conds))]
		jmp32 := g.rng.IntN(3) == 0
		// Constants next to the values x takes, so that the jump splits them.
		v := vals[g.rng.IntN(256)]
		k := int32(int64(v) + int64(g.rng.IntN(3)-1))
		if g.rng.IntN(4) == 0 {
			k = g.imm32()
		}
		useY := y != 255 && g.rng.IntN(2) == 0
		var ins asm.Instruction
		switch {
		case useY && jmp32:
			ins = jop.Reg32(x, y, "")
		case useY:
			ins = jop.Reg(x, y, "")
		case jmp32:
			ins = jop.Imm32(x, k, "")
		default:
			ins = jop.Imm(x, k, "")
		}
		// Continue on the fall-through or on the taken edge.
		onTaken := g.rng.IntN(2) == 0
		if onTaken {
			// if cond goto at; goto skip; at:
			at := g.label()
			f.jump(g, ins, at)
			f.jump(g, asm.Ja.Label(""), skip)
			f.bind(at)
		} else {
			f.jump(g, ins, skip)
		}
		jnames = append(jnames, jop.String())
		// Which inputs continue; with y, the pair (i, j) continues for
		// some j: keep i if any j does (y's inputs are independent).
		for i := range alive {
			if !alive[i] {
				continue
			}
			ok := false
			if useY {
				for j := range 256 {
					if EvalCond(&ins, vals[i], yvals[j]) == onTaken {
						ok = true
						break
					}
				}
			} else {
				ok = EvalCond(&ins, vals[i], 0) == onTaken
			}
			alive[i] = ok
		}
	}
	g.origin = "refine/" + strings.Join(jnames, ",") + "/" + strings.Join(ops, ",")
	lo, hi := int64(1<<62), int64(-1<<62)
	var loIn, hiIn uint64
	any := false
	for i, ok := range alive {
		if !ok {
			continue
		}
		any = true
		if sv := int64(vals[i]); sv < lo {
			lo, loIn = sv, uint64(i)
		}
		if sv := int64(vals[i]); sv > hi {
			hi, hiIn = sv, uint64(i)
		}
	}
	if !any {
		// A dead edge: an access no run makes.
		g.origin = "refine/dead-edge/" + strings.Join(jnames, ",") + "/" + strings.Join(ops, ",")
		g.proving = true
		g.indexAccess(f, x, g.mem, 1)
		g.proving = false
		f.bind(skip)
		f.st.join(&entry)
		f.emit(g, asm.Mov.Imm(x, 0))
		return
	}
	g.hint(off, 1, loIn, hiIn)
	if y != 255 {
		g.hint(yoff, 1, 0, 0xff, 0x80, 0x7f)
	}
	span := hi - lo
	s := 1
	if span < g.mem {
		s = g.pickSize(g.mem - span)
	}
	if lo < -(1<<30) || hi > 1<<30 || span+int64(s) > g.mem {
		g.defect("refine: range [%d, %d] on the edge is wider than memory %d", lo, hi, g.mem)
		g.indexAccess(f, x, 0, 1)
	} else {
		d := g.mem - span - int64(s)
		if g.rng.IntN(3) == 0 {
			d = g.rng.Int64N(d + 1)
		}
		bad := g.bad()
		if bad {
			d = []int64{g.mem - span - int64(s) + 1, -1}[g.rng.IntN(2)]
			g.defect("refine: values [%d, %d] reach the access, aimed at %d..%d of %d", lo, hi, d, d+span+int64(s)-1, g.mem)
		}
		g.proving = !bad
		defer func() { g.proving = false }()
		p := g.scratch(f, x)
		c := d - lo
		f.emit(g, asm.Mov.Reg(p, asm.R6))
		if c < -30000 || c > 30000 {
			f.emit(g, asm.Add.Imm(p, int32(c)))
			c = 0
		}
		f.emit(g, asm.Add.Reg(p, x))
		g.set(f, p, kOther, 0)
		g.access(f, p, c, s, g.pickOp(false))
	}
	f.bind(skip)
	f.st.join(&entry)
	f.emit(g, asm.Mov.Imm(x, 0))
}
