package compiler

import (
	"fmt"
	"math"
	"sort"
)

// Physical registers: r0–r5 are caller-saved (a helper call clobbers
// them), r6–r9 callee-saved. r10 is the frame pointer, never allocated.
const (
	numRegs      = 10
	callerSaved  = uint16(0b0000111111)
	calleeSaved  = uint16(0b1111000000)
	allRegs      = callerSaved | calleeSaved
	maxAllocRuns = 12
)

// allocation is the result of register allocation: a physical register
// for every virtual one, and how many bytes of stack the spills use.
type allocation struct {
	phys       map[vreg]uint8
	spillBytes int64
}

// fnCode is one function's IR while it is allocated.
type fnCode struct {
	code        []insn
	nreg        vreg
	unspillable map[vreg]bool
	stackBase   int64 // bytes of stack the locals use; spill slots go below
	spillBytes  int64
}

// block is a basic block of the IR: [start, end).
type block struct {
	start, end int
	succs      []int
	liveIn     bitset
	liveOut    bitset
}

type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }
func (s bitset) has(i vreg) bool {
	return s[int(i)/64]&(1<<(uint(i)%64)) != 0
}
func (s bitset) set(i vreg)   { s[int(i)/64] |= 1 << (uint(i) % 64) }
func (s bitset) clear(i vreg) { s[int(i)/64] &^= 1 << (uint(i) % 64) }
func (s bitset) copyFrom(t bitset) {
	copy(s, t)
}
func (s bitset) unionWith(t bitset) bool {
	changed := false
	for i := range s {
		if n := s[i] | t[i]; n != s[i] {
			s[i], changed = n, true
		}
	}
	return changed
}

// removeJumpsToNext drops "goto L" when L follows directly.
func removeJumpsToNext(code []insn) []insn {
	out := code[:0]
	for i := 0; i < len(code); i++ {
		in := code[i]
		if in.op == irJa {
			j := i + 1
			next := false
			for ; j < len(code) && code[j].op == irLabel; j++ {
				if code[j].label == in.label {
					next = true
				}
			}
			if next {
				continue
			}
		}
		out = append(out, in)
	}
	return out
}

// blocks splits code into basic blocks and links them.
func blocks(code []insn) []*block {
	var bs []*block
	labelBlock := map[int]int{}
	start := 0
	flush := func(end int) {
		if end > start {
			bs = append(bs, &block{start: start, end: end})
		}
		start = end
	}
	for i, in := range code {
		if in.op == irLabel && i > start {
			flush(i)
		}
		if in.op == irLabel {
			labelBlock[in.label] = len(bs)
		}
		if in.op == irJump || in.op == irJa || in.op == irExit {
			flush(i + 1)
		}
	}
	flush(len(code))
	for k, b := range bs {
		last := code[b.end-1]
		switch last.op {
		case irJa:
			b.succs = []int{labelBlock[last.label]}
		case irExit:
		case irJump:
			b.succs = []int{labelBlock[last.label]}
			if k+1 < len(bs) {
				b.succs = append(b.succs, k+1)
			}
		default:
			if k+1 < len(bs) {
				b.succs = []int{k + 1}
			}
		}
	}
	return bs
}

// liveness computes live-in and live-out sets of every block.
func liveness(code []insn, bs []*block, nreg vreg) {
	n := int(nreg) + 1
	gen := make([]bitset, len(bs))
	kill := make([]bitset, len(bs))
	var uses []vreg
	for k, b := range bs {
		gen[k], kill[k] = newBitset(n), newBitset(n)
		b.liveIn, b.liveOut = newBitset(n), newBitset(n)
		for i := b.end - 1; i >= b.start; i-- {
			in := &code[i]
			if d := in.def(); d != noReg {
				kill[k].set(d)
				gen[k].clear(d)
			}
			uses = in.uses(uses[:0])
			for _, u := range uses {
				gen[k].set(u)
			}
		}
	}
	tmp := newBitset(n)
	for changed := true; changed; {
		changed = false
		for k := len(bs) - 1; k >= 0; k-- {
			b := bs[k]
			for _, s := range b.succs {
				if b.liveOut.unionWith(bs[s].liveIn) {
					changed = true
				}
			}
			tmp.copyFrom(b.liveOut)
			for i := range tmp {
				tmp[i] = tmp[i]&^kill[k][i] | gen[k][i]
			}
			if b.liveIn.unionWith(tmp) {
				changed = true
			}
		}
	}
}

// interval is the stretch of code a virtual register occupies a physical
// one, with what it must avoid and how costly it is to spill.
type interval struct {
	v          vreg
	start, end int
	forbid     uint16
	weight     float64
	hint       int // preferred physical register, or -1
	reg        int
}

// allocate assigns physical registers, spilling and retrying until every
// virtual register has one.
func (f *fnCode) allocate() (*allocation, error) {
	f.removeDeadCode()
	for run := 0; run < maxAllocRuns; run++ {
		phys, spilled, err := f.scan()
		if err != nil {
			return nil, err
		}
		if len(spilled) == 0 {
			return &allocation{phys: phys, spillBytes: f.spillBytes}, nil
		}
		f.rewriteSpills(spilled)
	}
	return nil, fmt.Errorf("register allocation did not converge")
}

// scan is one linear-scan pass over the live intervals.
func (f *fnCode) scan() (map[vreg]uint8, []vreg, error) {
	code := f.code
	bs := blocks(code)
	liveness(code, bs, f.nreg)
	n := int(f.nreg) + 1
	ivs := make([]*interval, n)
	get := func(v vreg) *interval {
		if ivs[v] == nil {
			ivs[v] = &interval{v: v, start: math.MaxInt, end: -1, hint: -1, reg: -1}
		}
		return ivs[v]
	}
	touch := func(v vreg, i int) {
		iv := get(v)
		iv.start = min(iv.start, i)
		iv.end = max(iv.end, i)
	}
	live := newBitset(n)
	var uses []vreg
	for _, b := range bs {
		live.copyFrom(b.liveOut)
		for i := b.end - 1; i >= b.start; i-- {
			in := &code[i]
			// live now holds what is live after i.
			for w, word := range live {
				for word != 0 {
					bit := word & -word
					word ^= bit
					v := vreg(w*64 + trailing(bit))
					touch(v, i)
					if cl := in.clobbers(); cl != 0 && v != in.def() {
						get(v).forbid |= cl
					}
				}
			}
			d := in.def()
			if d != noReg {
				touch(d, i)
				live.clear(d)
			}
			uses = in.uses(uses[:0])
			w := math.Pow(10, float64(min(in.depth, 6)))
			if d != noReg {
				get(d).weight += w
			}
			for _, u := range uses {
				touch(u, i)
				get(u).weight += w
				live.set(u)
			}
			if in.op == irCmpXchg {
				for _, u := range uses {
					get(u).forbid |= 1 // operands are read after r0 is loaded
				}
			}
			// Hints: call arguments in their argument registers, results
			// in r0, the context in r1.
			switch in.op {
			case irCall:
				for k, a := range in.args {
					if a.reg > 0 {
						get(a.reg).hint = k + 1
					}
				}
				if d != noReg {
					get(d).hint = 0
				}
			case irExit:
				if in.a.reg > 0 {
					get(in.a.reg).hint = 0
				}
			case irEntry:
				get(d).hint = 1
			}
		}
	}
	var list []*interval
	for _, iv := range ivs {
		if iv != nil && iv.end >= 0 {
			iv.weight /= float64(iv.end - iv.start + 1)
			if f.unspillable[iv.v] {
				iv.weight = math.Inf(1)
			}
			list = append(list, iv)
		}
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].start != list[j].start {
			return list[i].start < list[j].start
		}
		return list[i].v < list[j].v
	})
	// Moves: prefer the source's register when the source ends where the
	// destination starts.
	movSrc := map[vreg]vreg{}
	for i := range code {
		if in := &code[i]; in.op == irMov && !in.w32 && in.a.reg > 0 && in.dst > 0 {
			if _, ok := movSrc[in.dst]; !ok {
				movSrc[in.dst] = in.a.reg
			}
		}
	}

	var active []*interval
	var spilled []vreg
	owner := [numRegs]*interval{}
	for _, iv := range list {
		// Expire.
		keep := active[:0]
		for _, a := range active {
			// An interval ending where iv starts may pass its register
			// on: every instruction reads its operands before it writes.
			if a.end <= iv.start {
				owner[a.reg] = nil
				continue
			}
			keep = append(keep, a)
		}
		active = keep
		allowed := allRegs &^ iv.forbid
		free := uint16(0)
		for r := 0; r < numRegs; r++ {
			if owner[r] == nil && allowed&(1<<r) != 0 {
				free |= 1 << r
			}
		}
		pick := -1
		if s, ok := movSrc[iv.v]; ok && ivs[s] != nil && ivs[s].reg >= 0 && ivs[s].end <= iv.start && free&(1<<ivs[s].reg) != 0 {
			pick = ivs[s].reg
		}
		if pick < 0 && iv.hint >= 0 && free&(1<<iv.hint) != 0 {
			pick = iv.hint
		}
		if pick < 0 && free != 0 {
			// Values that do not live across a call take caller-saved
			// registers first, keeping r6–r9 for those that do.
			if f := free & callerSaved; f != 0 && iv.forbid&callerSaved == 0 {
				pick = trailing(uint64(f))
			} else {
				pick = trailing(uint64(free))
			}
		}
		if pick < 0 {
			// Spill the cheapest of iv and the active intervals whose
			// register iv could use.
			var victim *interval
			for _, a := range active {
				if allowed&(1<<a.reg) != 0 && (victim == nil || a.weight < victim.weight) {
					victim = a
				}
			}
			if victim == nil || iv.weight <= victim.weight {
				if math.IsInf(iv.weight, 1) {
					return nil, nil, errTooManyLive
				}
				spilled = append(spilled, iv.v)
				continue
			}
			if math.IsInf(victim.weight, 1) {
				return nil, nil, errTooManyLive
			}
			spilled = append(spilled, victim.v)
			pick = victim.reg
			victim.reg = -1
			for k, a := range active {
				if a == victim {
					active = append(active[:k], active[k+1:]...)
					break
				}
			}
		}
		iv.reg = pick
		owner[pick] = iv
		active = append(active, iv)
	}
	if len(spilled) > 0 {
		return nil, spilled, nil
	}
	phys := make(map[vreg]uint8, len(list))
	for _, iv := range list {
		phys[iv.v] = uint8(iv.reg)
	}
	return phys, nil, nil
}

var errTooManyLive = fmt.Errorf("too many loop counters live at once: the verifier bounds a loop by a counter kept in a register, and across a helper call only r6–r9 keep their values, so at most 4 loops may enclose a call (nest fewer loops or move the call out)")

func trailing(x uint64) int {
	n := 0
	for x&1 == 0 && n < 64 {
		x >>= 1
		n++
	}
	return n
}

// rewriteSpills gives each spilled register a stack slot and replaces
// every use by a fill into a fresh register and every definition by a
// fresh register spilled right after.
func (f *fnCode) rewriteSpills(spilled []vreg) {
	slot := map[vreg]int{}
	for _, v := range spilled {
		f.spillBytes += 8
		slot[v] = int(f.stackBase + f.spillBytes)
	}
	var out []insn
	var uses []vreg
	for _, in := range f.code {
		uses = in.uses(uses[:0])
		repl := map[vreg]vreg{}
		var pre []insn
		for _, u := range uses {
			if s, ok := slot[u]; ok {
				if _, done := repl[u]; !done {
					t := f.fresh()
					repl[u] = t
					pre = append(pre, insn{op: irFill, dst: t, slot: s, pos: in.pos, depth: in.depth})
				}
			}
		}
		var post []insn
		if d := in.def(); d != noReg {
			if s, ok := slot[d]; ok {
				t, ok := repl[d]
				if !ok {
					t = f.fresh()
					repl[d] = t
				}
				post = append(post, insn{op: irSpill, a: regOp(t), slot: s, pos: in.pos, depth: in.depth})
			}
		}
		if len(repl) > 0 {
			in = substitute(in, repl)
		}
		out = append(out, pre...)
		out = append(out, in)
		out = append(out, post...)
	}
	f.code = out
}

func (f *fnCode) fresh() vreg {
	f.nreg++
	f.unspillable[f.nreg] = true
	return f.nreg
}

// substitute renames registers in one instruction.
func substitute(in insn, repl map[vreg]vreg) insn {
	r := func(v vreg) vreg {
		if n, ok := repl[v]; ok {
			return n
		}
		return v
	}
	in.dst = r(in.dst)
	in.base = r(in.base)
	if in.a.reg > 0 {
		in.a.reg = r(in.a.reg)
	}
	if len(in.args) > 0 {
		args := make([]operand, len(in.args))
		for i, a := range in.args {
			if a.reg > 0 {
				a.reg = r(a.reg)
			}
			args[i] = a
		}
		in.args = args
	}
	return in
}

// removeDeadCode deletes instructions that only compute a value nobody
// reads, and drops unread helper results, until nothing changes.
func (f *fnCode) removeDeadCode() {
	var uses []vreg
	for changed := true; changed; {
		changed = false
		bs := blocks(f.code)
		liveness(f.code, bs, f.nreg)
		dead := make([]bool, len(f.code))
		live := newBitset(int(f.nreg) + 1)
		for _, b := range bs {
			live.copyFrom(b.liveOut)
			for i := b.end - 1; i >= b.start; i-- {
				in := &f.code[i]
				d := in.def()
				if d != noReg && !live.has(d) {
					switch in.op {
					case irMov, irALU, irNeg, irMovSX, irLoad, irRegion, irFill, irEntry:
						dead[i], changed = true, true
						continue
					case irCall:
						in.dst = noReg
					}
				}
				if d != noReg {
					live.clear(d)
				}
				uses = in.uses(uses[:0])
				for _, u := range uses {
					live.set(u)
				}
			}
		}
		if changed {
			out := f.code[:0]
			for i, in := range f.code {
				if !dead[i] {
					out = append(out, in)
				}
			}
			f.code = out
		}
	}
}
