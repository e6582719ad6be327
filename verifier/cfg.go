package verifier

import (
	"fmt"
	"sort"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// program is the decoded stream indexed by slot.
type program struct {
	insns  asm.Instructions
	insnAt []int // slot → index in insns, -1 for the second slot of lddw
	slots  int
}

func newProgram(insns asm.Instructions) *program {
	offsets, total := bytecode.Slots(insns)
	p := &program{insns: insns, insnAt: make([]int, total), slots: total}
	for i := range p.insnAt {
		p.insnAt[i] = -1
	}
	for i, s := range offsets {
		p.insnAt[s] = i
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
	blocks  []*block
	byStart map[int]*block
	blockOf []int // slot → block id
}

// target returns the slot a jump at slot goes to.
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
// execution may start (handler entry points).
func buildCFG(p *program, entries []int) (*cfg, *Error) {
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
		case termJump:
			leader[p.jumpTarget(s)] = true
			leader[next] = true
		case termCond:
			leader[p.jumpTarget(s)] = true
			leader[next] = true
		case termExit:
			leader[next] = true
		case termCall:
			leader[s+1+int(ins.Constant)] = true
			leader[next] = true
		}
	}
	g := &cfg{p: p, byStart: make(map[int]*block), blockOf: make([]int, p.slots)}
	for s := 0; s < p.slots; {
		b := &block{id: len(g.blocks), start: s}
		for {
			g.blockOf[s] = b.id
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
		g.blocks = append(g.blocks, b)
		g.byStart[b.start] = b
	}
	for _, b := range g.blocks {
		next := b.last + p.width(b.last)
		fall := func() (int, *Error) {
			if next >= p.slots {
				return 0, &Error{Insn: b.last, Code: CodeFallThrough, Msg: "execution can run past the last instruction"}
			}
			return g.byStart[next].id, nil
		}
		switch b.term {
		case termFall, termCall:
			n, err := fall()
			if err != nil {
				return nil, err
			}
			b.succs = []int{n}
			if b.term == termCall {
				b.callee = g.byStart[b.last+1+int(p.at(b.last).Constant)].id
			}
		case termJump:
			b.succs = []int{g.byStart[p.jumpTarget(b.last)].id}
		case termCond:
			n, err := fall()
			if err != nil {
				return nil, err
			}
			b.succs = []int{n, g.byStart[p.jumpTarget(b.last)].id}
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
// and returns the functions by entry block.
func (g *cfg) structure(entries []int) (map[int]*function, *Error) {
	funcs := make(map[int]*function)
	reached := make([]bool, len(g.blocks))
	var visit func(entry int)
	visit = func(entry int) {
		if funcs[entry] != nil {
			return
		}
		f := &function{entry: entry}
		funcs[entry] = f
		seen := map[int]bool{entry: true}
		stack := []int{entry}
		calls := map[int]bool{}
		for len(stack) > 0 {
			b := g.blocks[stack[len(stack)-1]]
			stack = stack[:len(stack)-1]
			f.blocks = append(f.blocks, b.id)
			reached[b.id] = true
			if b.term == termCall {
				calls[b.callee] = true
			}
			for _, s := range b.succs {
				if !seen[s] {
					seen[s] = true
					stack = append(stack, s)
				}
			}
		}
		sort.Ints(f.blocks)
		for c := range calls {
			f.calls = append(f.calls, c)
		}
		sort.Ints(f.calls)
		for _, c := range f.calls {
			visit(c)
		}
	}
	for _, e := range entries {
		visit(g.blockOf[e])
	}
	for _, b := range g.blocks {
		if !reached[b.id] {
			return nil, &Error{Insn: b.start, Code: CodeUnreachable, Msg: "no path from an entry point reaches this instruction"}
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
	var walk func(f int) *Error
	walk = func(f int) *Error {
		color[f] = grey
		d := 1
		for _, c := range funcs[f].calls {
			switch color[c] {
			case grey:
				return &Error{Insn: g.callSite(funcs[f], c), Code: CodeRecursion,
					Msg: fmt.Sprintf("call to the function at insn %d closes a cycle of local calls", g.blocks[c].start)}
			case white:
				if err := walk(c); err != nil {
					return err
				}
			}
			d = max(d, 1+depth[c])
		}
		depth[f] = d
		color[f] = black
		return nil
	}
	for _, e := range entries {
		f := g.blockOf[e]
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
		if bl := g.blocks[b]; bl.term == termCall && bl.callee == callee {
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
