package verifier

import (
	"fmt"
	"slices"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// program is the decoded stream indexed by slot.
type program struct {
	insns  asm.Instructions
	insnAt []int32 // slot → index in insns, -1 for the second slot of lddw
	slots  int
}

func newProgram(insns asm.Instructions) *program {
	offsets, total := bytecode.Slots(insns)
	p := &program{insns: insns, insnAt: make([]int32, total), slots: total}
	for i := range p.insnAt {
		p.insnAt[i] = -1
	}
	for i, s := range offsets {
		p.insnAt[s] = int32(i)
	}
	return p
}

func (p *program) at(slot int) *asm.Instruction { return &p.insns[p.insnAt[slot]] }

// width is 2 for lddw, else 1.
func (p *program) width(slot int) int { return int(p.at(slot).Width()) }

// terminator classifies how a block ends.
type terminator uint8

const (
	termFall terminator = iota // ordinary instruction, falls into the next block
	termJump                   // ja / gotol
	termCond                   // conditional jump
	termExit                   // exit
	termCall                   // local call; the next block is the return point
)

// block is a maximal straight-line run of slots [start, end).
type block struct {
	id         int
	start, end int // slots
	last       int // slot of the last instruction
	term       terminator
	succs      []int // block ids: for termCond [fallthrough, taken]; termCall [return point]
	callee     int   // termCall: block id of the callee's entry
	insns      int   // instructions (lddw counts once)
}

// cfg is the whole program's control-flow graph.
type cfg struct {
	p       *program
	blocks  []block
	blockOf []int32 // slot → block id
}

func (g *cfg) blk(id int) *block { return &g.blocks[id] }

// jumpTarget returns the slot a jump at slot goes to.
func (p *program) jumpTarget(slot int) int {
	ins := p.at(slot)
	if bytecode.RawOpcode(ins) == bytecode.OpJa32 {
		return slot + 1 + int(ins.Constant)
	}
	return slot + 1 + int(ins.Offset)
}

func classify(ins *asm.Instruction) terminator {
	op := bytecode.RawOpcode(ins)
	class := asm.Class(op & 7)
	if class != asm.JumpClass && class != asm.Jump32Class {
		return termFall
	}
	switch {
	case op == bytecode.OpJa || op == bytecode.OpJa32:
		return termJump
	case op == bytecode.OpExit:
		return termExit
	case op == bytecode.OpCall && ins.Src == bytecode.PseudoCall:
		return termCall
	case op&0xf0 == 0x80: // helper calls continue in the block
		return termFall
	}
	return termCond
}

// buildCFG splits the program into blocks. entries are the slots where
// execution may start (handler entry points). The memory for the blocks
// is reserved on m before it is allocated.
func buildCFG(p *program, entries []int, m *meter) (*cfg, *Error) {
	leader := make([]bool, p.slots+1)
	for _, e := range entries {
		leader[e] = true
	}
	for s := 0; s < p.slots; s++ {
		if p.insnAt[s] < 0 {
			continue
		}
		ins := p.at(s)
		next := s + p.width(s)
		switch classify(ins) {
		case termJump, termCond:
			leader[p.jumpTarget(s)] = true
			leader[next] = true
		case termExit:
			leader[next] = true
		case termCall:
			leader[s+1+int(ins.Constant)] = true
			leader[next] = true
		}
	}
	n := 1
	for s := 1; s < p.slots; s++ {
		if leader[s] {
			n++
		}
	}
	if err := m.grow(0, int64(n)*blockCost, 0); err != nil {
		return nil, err
	}
	if err := m.step(int64(n), 0); err != nil {
		return nil, err
	}
	g := &cfg{p: p, blocks: make([]block, 0, n), blockOf: make([]int32, p.slots)}
	arena := make([]int, 2*n) // the blocks' successor lists
	for s := 0; s < p.slots; {
		b := block{id: len(g.blocks), start: s}
		for {
			g.blockOf[s] = int32(b.id)
			if p.insnAt[s] >= 0 {
				b.last = s
				b.insns++
			}
			s++
			if s >= p.slots || leader[s] {
				break
			}
		}
		b.end = s
		b.term = classify(p.at(b.last))
		b.succs = arena[2*b.id : 2*b.id : 2*b.id+2]
		g.blocks = append(g.blocks, b)
	}
	for i := range g.blocks {
		b := &g.blocks[i]
		next := b.last + p.width(b.last)
		fall := func() (int, *Error) {
			if next >= p.slots {
				return 0, &Error{Insn: b.last, Code: CodeFallThrough, Msg: "execution can run past the last instruction"}
			}
			return int(g.blockOf[next]), nil
		}
		switch b.term {
		case termFall, termCall:
			n, err := fall()
			if err != nil {
				return nil, err
			}
			b.succs = append(b.succs, n)
			if b.term == termCall {
				b.callee = int(g.blockOf[b.last+1+int(p.at(b.last).Constant)])
			}
		case termJump:
			b.succs = append(b.succs, int(g.blockOf[p.jumpTarget(b.last)]))
		case termCond:
			n, err := fall()
			if err != nil {
				return nil, err
			}
			b.succs = append(b.succs, n, int(g.blockOf[p.jumpTarget(b.last)]))
		}
	}
	return g, nil
}

// function is a local function: an entry block and the blocks reachable
// from it without following calls.
type function struct {
	entry  int   // block id
	blocks []int // sorted block ids
	calls  []int // entry blocks of functions it calls, sorted
}

// structure finds functions, checks reachability, recursion and call depth,
// and returns the functions by entry block. Functions may share blocks (a
// jump into another function's code), so the walks are charged to m.
func (g *cfg) structure(entries []int, m *meter) (map[int]*function, *Error) {
	funcs := make(map[int]*function)
	reached := make([]bool, len(g.blocks))
	seen := make([]int32, len(g.blocks)) // the function (entry+1) that last saw a block
	var order []int                      // functions in the order they were found
	visit := func(entry int) *Error {
		f := &function{entry: entry}
		funcs[entry] = f
		order = append(order, entry)
		mark := int32(entry + 1)
		seen[entry] = mark
		stack := []int{entry}
		for len(stack) > 0 {
			b := &g.blocks[stack[len(stack)-1]]
			stack = stack[:len(stack)-1]
			f.blocks = append(f.blocks, b.id)
			reached[b.id] = true
			if b.term == termCall {
				f.calls = append(f.calls, b.callee)
			}
			for _, s := range b.succs {
				if seen[s] != mark {
					seen[s] = mark
					stack = append(stack, s)
				}
			}
		}
		if err := m.grow(0, int64(len(f.blocks)+len(f.calls))*8+ctxCost, g.blocks[entry].start); err != nil {
			return err
		}
		if err := m.step(int64(len(f.blocks)), g.blocks[entry].start); err != nil {
			return err
		}
		slices.Sort(f.blocks)
		slices.Sort(f.calls)
		f.calls = slices.Compact(f.calls)
		return nil
	}
	// Functions in depth-first preorder of the call graph, callees in
	// ascending order, as a recursive walk would find them.
	for _, e := range entries {
		work := []int{int(g.blockOf[e])}
		for len(work) > 0 {
			fn := work[len(work)-1]
			work = work[:len(work)-1]
			if funcs[fn] != nil {
				continue
			}
			if err := visit(fn); err != nil {
				return nil, err
			}
			calls := funcs[fn].calls
			for i := len(calls) - 1; i >= 0; i-- {
				if funcs[calls[i]] == nil {
					work = append(work, calls[i])
				}
			}
		}
	}
	for i := range g.blocks {
		if !reached[i] {
			return nil, &Error{Insn: g.blocks[i].start, Code: CodeUnreachable, Msg: "no path from an entry point reaches this instruction"}
		}
	}
	// Recursion and depth: a depth-first walk of the call graph.
	const (
		white = iota
		grey
		black
	)
	color := map[int]int{}
	depth := map[int]int{} // frames needed from this function down
	type walkFrame struct{ fn, next int }
	walk := func(root int) *Error {
		stack := []walkFrame{{root, 0}}
		color[root] = grey
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			f := funcs[top.fn]
			if top.next < len(f.calls) {
				c := f.calls[top.next]
				top.next++
				switch color[c] {
				case grey:
					return &Error{Insn: g.callSite(f, c), Code: CodeRecursion,
						Msg: fmt.Sprintf("call to the function at insn %d closes a cycle of local calls", g.blocks[c].start)}
				case white:
					color[c] = grey
					stack = append(stack, walkFrame{c, 0})
				}
				continue
			}
			d := 1
			for _, c := range f.calls {
				d = max(d, 1+depth[c])
			}
			depth[top.fn] = d
			color[top.fn] = black
			stack = stack[:len(stack)-1]
		}
		return nil
	}
	for _, e := range entries {
		f := int(g.blockOf[e])
		if color[f] == white {
			if err := walk(f); err != nil {
				return nil, err
			}
		}
		if depth[f] > maxFrames {
			return nil, g.depthError(funcs, f, maxFrames, depth)
		}
	}
	return funcs, nil
}

// maxFrames is the most frames a run may have: the entry and seven nested
// calls, as the kernel's MAX_CALL_FRAMES and the VM.
const maxFrames = 8

func (g *cfg) callSite(f *function, callee int) int {
	for _, b := range f.blocks {
		if bl := &g.blocks[b]; bl.term == termCall && bl.callee == callee {
			return bl.last
		}
	}
	return g.blocks[callee].start
}

// depthError names the call that needs a ninth frame on the deepest chain.
func (g *cfg) depthError(funcs map[int]*function, f, left int, depth map[int]int) *Error {
	for {
		for _, c := range funcs[f].calls {
			if 1+depth[c] > left {
				if left == 1 {
					return &Error{Insn: g.callSite(funcs[f], c), Code: CodeCallDepth,
						Msg: fmt.Sprintf("this call needs frame %d; at most %d frames (the entry and %d nested calls)", maxFrames+1, maxFrames, maxFrames-1)}
				}
				f, left = c, left-1
				break
			}
		}
	}
}
