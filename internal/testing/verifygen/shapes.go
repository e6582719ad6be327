package verifygen

import (
	"fmt"
	"math"

	"github.com/cilium/ebpf/asm"
)

// Shape is a family of raw-mode programs built to make the verifier
// itself work hard: many blocks, many call contexts, many loops, many
// constants. Every program of a shape is safe; the verifier must accept
// it with Program.MaxInsns as its bound, or refuse it for a resource
// limit (verifier.Limits), never use more than the limits allow.
type Shape int

const (
	// ShapeStraight is one block of n instructions.
	ShapeStraight Shape = iota
	// ShapeBranchChain is n conditional jumps to the next instruction:
	// n one-instruction blocks, each with two edges to the next.
	ShapeBranchChain
	// ShapeDiamonds is n if-thens of one instruction each: 2n
	// one-instruction blocks, every other one a merge.
	ShapeDiamonds
	// ShapeStackDiamonds is ShapeDiamonds whose arms store to the stack,
	// so that every merge holds a stack frame of its own.
	ShapeStackDiamonds
	// ShapeCallFanOut is eight levels of functions, each calling the next
	// fan times in a row, passing a pointer to its stack (written by the
	// callee), a different constant at each site, and the memory: fan^7
	// chains of call sites.
	ShapeCallFanOut
	// ShapeCallSwitch is eight levels of functions, each calling the next
	// from one of fan branches: fan^7 chains of call sites, one call per
	// level on any run.
	ShapeCallSwitch
	// ShapeLoopChain is n loops of 3 iterations one after the other.
	ShapeLoopChain
	// ShapeLoopBody is one loop of 4 iterations around n if-thens.
	ShapeLoopBody
	// ShapeConstants is n distinct constants and then a loop, whose
	// widening looks them up.
	ShapeConstants
	// ShapeSharedTail is fan functions, each called once, that all jump
	// into one tail of n blocks: the tail is analysed once per function.
	ShapeSharedTail
	// ShapeShifts is one block of n shifts by a number the verifier does
	// not know: the abstract domain computes each for every count.
	ShapeShifts
	// ShapeLoopAround is one loop of 4 iterations around n moves of
	// distinct constants: a body as long as the program, walked until the
	// loop head settles, with as many widening thresholds.
	ShapeLoopAround
	numShapes
)

// Shapes lists every shape.
func Shapes() []Shape {
	out := make([]Shape, numShapes)
	for i := range out {
		out[i] = Shape(i)
	}
	return out
}

var shapeNames = [...]string{"straight", "branch-chain", "diamonds", "stack-diamonds", "call-fan-out", "call-switch",
	"loop-chain", "loop-body", "constants", "shared-tail", "shifts", "loop-around"}

func (s Shape) String() string {
	if s >= 0 && s < numShapes {
		return shapeNames[s]
	}
	return fmt.Sprintf("Shape(%d)", int(s))
}

// shapeMem is the memory size of every shape program.
const shapeMem = 64

// Build returns the program of shape s with about n slots (for the call
// shapes, n is spread over the levels) and, for the call and tail shapes,
// fan the fan-out. Program.MaxInsns is its worst case, the longest path
// of its control-flow graph with loops at their trip counts (saturated
// at 2^63-1); Budget is MaxInsns, so that a verifier that proves it
// accepts. Sizes below a shape's minimum are raised to it. Build is fast
// enough for programs of millions of instructions.
func Build(s Shape, n, fan int) Program {
	a := &shapeAsm{}
	n = max(n, 8)
	fan = max(fan, 1)
	var bound uint64
	switch s {
	case ShapeStraight:
		a.emit(asm.Mov.Imm(asm.R0, 0))
		for i := range n - 2 {
			a.emit(asm.Add.Imm(asm.R0, int32(i%7)))
		}
		a.emit(asm.Return())
		bound = uint64(n)
	case ShapeBranchChain:
		a.emit(asm.LoadMem(asm.R0, asm.R1, 0, asm.Byte))
		for i := range n - 2 {
			a.emit(jumpTo(asm.JEq, asm.R0, int32(i%256), 0))
		}
		a.emit(asm.Return())
		bound = uint64(n)
	case ShapeDiamonds, ShapeStackDiamonds:
		a.emit(asm.LoadMem(asm.R0, asm.R1, 0, asm.Byte))
		pre := 1
		if s == ShapeStackDiamonds {
			for j := range 64 {
				a.emit(storeImm(asm.R10, int16(-8*(j+1)), 0, asm.DWord))
			}
			pre += 64
		}
		k := max((n-pre-1)/2, 1)
		for i := range k {
			a.emit(jumpTo(asm.JEq, asm.R0, int32(i%256), 1))
			if s == ShapeStackDiamonds {
				a.emit(storeImm(asm.R10, int16(-8*(1+i%64)), int64(i), asm.DWord))
			} else {
				a.emit(asm.Add.Imm(asm.R0, 1))
			}
		}
		a.emit(asm.Return())
		bound = uint64(pre + 2*k + 1)
	case ShapeCallFanOut:
		bound = a.callFanOut(fan)
	case ShapeCallSwitch:
		bound = a.callSwitch(fan)
	case ShapeLoopChain:
		k := max((n-2)/3, 1)
		for range k {
			a.emit(asm.Mov.Imm(asm.R6, 0), asm.Add.Imm(asm.R6, 1), jumpTo(asm.JLT, asm.R6, 3, -2))
		}
		a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
		bound = uint64(7*k + 2)
	case ShapeLoopBody:
		// The back edge is a conditional jump: its 16-bit offset caps
		// the body.
		k := min(max((n-6)/2, 1), 16000)
		a.emit(asm.LoadMem(asm.R0, asm.R1, 0, asm.Byte), asm.Mov.Imm(asm.R6, 0))
		head := a.here()
		for i := range k {
			a.emit(jumpTo(asm.JEq, asm.R0, int32(i%256), 1), asm.Add.Imm(asm.R0, 1))
		}
		a.emit(asm.Add.Imm(asm.R6, 1))
		a.emit(jumpTo(asm.JLT, asm.R6, 4, int16(head-a.here()-1)), asm.Return())
		bound = uint64(2 + 4*(2*k+2) + 1)
	case ShapeConstants:
		k := max(n-6, 1)
		a.emit(asm.Mov.Imm(asm.R0, 0))
		for i := range k {
			a.emit(asm.Mov.Imm(asm.R3, int32(i*7919+11)))
		}
		a.emit(asm.Mov.Imm(asm.R6, 0), asm.Add.Imm(asm.R6, 1), jumpTo(asm.JLT, asm.R6, 10, -2), asm.Return())
		bound = uint64(1 + k + 1 + 2*10 + 1)
	case ShapeSharedTail:
		// main: fan calls; f1: mov, then the tail of n jumps and exit;
		// every other f_i: mov, ja32 to the tail.
		a.emit(asm.LoadMem(asm.R0, asm.R1, 0, asm.Byte))
		fs := make([]int, fan)
		for i := range fan {
			fs[i] = a.label()
			a.call(fs[i])
		}
		a.emit(asm.Return())
		tail := a.label()
		for i := range fan {
			a.bind(fs[i])
			a.emit(asm.Mov.Imm(asm.R0, int32(i)))
			if i > 0 {
				a.ja32(tail)
				continue
			}
			a.bind(tail)
			for j := range n {
				a.emit(jumpTo(asm.JEq, asm.R0, int32(j%256), 0))
			}
			a.emit(asm.Return())
		}
		first := uint64(1 + n + 1)
		rest := uint64(2 + n + 1)
		bound = 2 + uint64(fan) + first
		if fan > 1 {
			bound += uint64(fan-1) * rest
		}
	case ShapeShifts:
		a.emit(asm.LoadMem(asm.R0, asm.R1, 0, asm.DWord), asm.LoadMem(asm.R2, asm.R1, 8, asm.Byte))
		for i := range max(n-4, 1) {
			a.emit([]asm.ALUOp{asm.LSh, asm.RSh, asm.ArSh}[i%3].Reg(asm.R0, asm.R2))
		}
		a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
		bound = uint64(max(n-4, 1) + 4)
	case ShapeLoopAround:
		k := max(n-6, 1)
		head := a.label()
		a.emit(asm.Mov.Imm(asm.R6, 0))
		a.bind(head)
		for i := range k {
			a.emit(asm.Mov.Imm(asm.R3, int32(i*7919+11)))
		}
		a.emit(asm.Add.Imm(asm.R6, 1), jumpTo(asm.JGE, asm.R6, 4, 1))
		a.ja32(head)
		a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
		// 4 times the way around through the back edge, then the exit.
		bound = uint64(1 + 4*(k+3) + 2)
	default:
		panic(fmt.Sprintf("verifygen: no shape %d", int(s)))
	}
	p := Program{Insns: a.finish(), MemSize: shapeMem, MaxInsns: min(bound, math.MaxInt64)}
	p.Budget = max(p.MaxInsns, 1)
	return p
}

// shapeAsm lays out a shape: one slot per instruction, jumps and calls to
// numbered labels resolved at the end.
type shapeAsm struct {
	insns  asm.Instructions
	at     []int // label → slot, -1 until bound
	fixups []struct{ insn, label int }
}

func (a *shapeAsm) emit(ins ...asm.Instruction) { a.insns = append(a.insns, ins...) }
func (a *shapeAsm) here() int                   { return len(a.insns) }
func (a *shapeAsm) label() int                  { a.at = append(a.at, -1); return len(a.at) - 1 }
func (a *shapeAsm) bind(l int)                  { a.at[l] = a.here() }

func (a *shapeAsm) call(l int) {
	a.fixups = append(a.fixups, struct{ insn, label int }{a.here(), l})
	a.emit(asm.Instruction{OpCode: asm.Call.Op(asm.ImmSource), Src: asm.PseudoCall})
}

func (a *shapeAsm) ja32(l int) {
	a.fixups = append(a.fixups, struct{ insn, label int }{a.here(), l})
	a.emit(asm.Instruction{OpCode: asm.OpCode(asm.Jump32Class).SetJumpOp(asm.Ja)})
}

// jne emits a conditional jump to l, which must be near (16-bit offset).
func (a *shapeAsm) jne(r asm.Register, k int32, l int) {
	a.fixups = append(a.fixups, struct{ insn, label int }{a.here(), l})
	a.emit(jumpTo(asm.JNE, r, k, 0))
}

// jumpTo is "if r op k goto +off".
func jumpTo(op asm.JumpOp, r asm.Register, k int32, off int16) asm.Instruction {
	return asm.Instruction{OpCode: op.Op(asm.ImmSource), Dst: r, Offset: off, Constant: int64(k)}
}

func (a *shapeAsm) finish() asm.Instructions {
	for _, f := range a.fixups {
		d := a.at[f.label] - f.insn - 1
		ins := &a.insns[f.insn]
		if ins.OpCode.JumpOp() == asm.JNE {
			ins.Offset = int16(d)
		} else {
			ins.Constant = int64(d)
		}
	}
	return a.insns
}

// shapeLevels is how many frames the call shapes use: all there are.
const shapeLevels = maxFrames

// callFanOut emits main and seven levels of functions. Function f_l sets
// up its own stack slot, calls f_{l+1} fan times (r1 = its slot, r2 = the
// site's constant, r3 = memory), then writes r2 through the r1 it got and
// loads a memory byte at a masked r2. It returns the worst case.
func (a *shapeAsm) callFanOut(fan int) uint64 {
	levels := make([]int, shapeLevels)
	for l := 1; l < shapeLevels; l++ {
		levels[l] = a.label()
	}
	site := 0
	calls := func(l int) {
		for range fan {
			a.emit(asm.Mov.Reg(asm.R1, asm.R10), asm.Add.Imm(asm.R1, -8),
				asm.Mov.Imm(asm.R2, int32(site)), asm.Mov.Reg(asm.R3, asm.R6))
			a.call(levels[l+1])
			site++
		}
	}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1), storeImm(asm.R10, -8, 0, asm.DWord))
	calls(0)
	a.emit(asm.LoadMem(asm.R0, asm.R10, -8, asm.DWord), asm.Return())
	for l := 1; l < shapeLevels; l++ {
		a.bind(levels[l])
		a.emit(asm.Mov.Reg(asm.R6, asm.R3), asm.Mov.Reg(asm.R7, asm.R1), asm.Mov.Reg(asm.R8, asm.R2),
			storeImm(asm.R10, -8, 0, asm.DWord))
		if l+1 < shapeLevels {
			calls(l)
		}
		a.emit(asm.StoreMem(asm.R7, 0, asm.R8, asm.DWord), asm.And.Imm(asm.R8, 7), asm.Add.Reg(asm.R6, asm.R8),
			asm.LoadMem(asm.R0, asm.R6, 0, asm.Byte), asm.Return())
	}
	// c = 9 for the last level; 9 + fan*(5 + c_next) above it; main has
	// 4 of its own.
	c := uint64(9)
	for l := shapeLevels - 2; l >= 1; l-- {
		c = satAddU(9, satMulU(uint64(fan), 5+c))
	}
	return satAddU(4, satMulU(uint64(fan), 5+c))
}

// callSwitch emits main and seven levels of functions; each reads a
// selector byte from memory and calls the next level from the branch the
// selector picks (one of fan), or from none. It returns the worst case.
func (a *shapeAsm) callSwitch(fan int) uint64 {
	levels := make([]int, shapeLevels)
	for l := 1; l < shapeLevels; l++ {
		levels[l] = a.label()
	}
	body := func(l int) {
		a.emit(asm.LoadMem(asm.R7, asm.R6, 0, asm.Byte))
		end := a.label()
		for i := range fan {
			skip := a.label()
			a.jne(asm.R7, int32(i%256), skip)
			if l+1 == shapeLevels {
				a.emit(asm.Mov.Imm(asm.R0, int32(i)))
			} else {
				a.emit(asm.Mov.Reg(asm.R3, asm.R6))
				a.call(levels[l+1])
			}
			a.ja32(end)
			a.bind(skip)
		}
		a.bind(end)
		a.emit(asm.Mov.Imm(asm.R0, 0), asm.Return())
	}
	a.emit(asm.Mov.Reg(asm.R6, asm.R1))
	body(0)
	for l := 1; l < shapeLevels; l++ {
		a.bind(levels[l])
		a.emit(asm.Mov.Reg(asm.R6, asm.R3))
		body(l)
	}
	// Per level: mov, load and fan tests, the last one matching; then
	// mov, call and the callee (a mov at the last level), ja, mov, exit.
	c := uint64(fan + 6)
	for l := shapeLevels - 2; l >= 0; l-- {
		c = satAddU(uint64(fan+7), c)
	}
	return c
}

func satAddU(a, b uint64) uint64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

func satMulU(a, b uint64) uint64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}
