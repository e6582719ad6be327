package verifygen

import (
	"fmt"
	"math/rand/v2"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// Options configure Generate. The zero value is the soundness fuzzer's mix.
type Options struct {
	// Kernel restricts the mix to programs the Linux verifier can also
	// judge in reasonable time: loops only with small constant counts (the
	// kernel walks every iteration), no unbounded loops, at most three
	// nested calls, and when there are calls, frames small enough for the
	// kernel's 512-byte limit on the whole call chain.
	Kernel bool
	// Snippets is the number of top-level snippets; 0 picks 1 to 8.
	Snippets int
}

// Program is one generated program with what the tests need to run it.
type Program struct {
	Seed    uint64
	Insns   asm.Instructions
	MemSize uint64
	// Budget is the verifier budget the program is meant to be checked with.
	Budget uint64
	// MaxInsns is the bound the verifier must prove, for programs built
	// by Build (0 for Generate's).
	MaxInsns uint64
	// Loops counts the loops the program contains.
	Loops int
	// Calls counts local calls.
	Calls int
	// Defects lists the boundary steps the generator took on purpose
	// ("mem-const: offset 61 size 4 past 64"); empty when it meant every
	// snippet to be safe. A hint for logs: the verifier decides.
	Defects []string
	// Hints are memory contents that drive the program to its boundaries.
	Hints []Hint
	// Origin names, per instruction (index into Insns), the snippet that
	// emitted it, e.g. "chain/Div,Add" or "stack-const".
	Origin []string
	// Proven marks, per instruction, the accesses (and the pointer
	// arithmetic that forms their address) that the generator proved
	// inside for every input: it enumerated all values of the one input
	// byte the offset depends on (chain, refine; a dead edge is proven
	// too), or the offset is a mask or a modulus of a known limit.
	Proven []bool
}

// Hint says that the bytes at Off are worth setting to one of Values.
type Hint struct {
	Off    int
	Values [][]byte
}

// Generate builds the program of seed under opts.
func Generate(seed uint64, opts Options) Program {
	g := &gen{
		rng:  rand.New(rand.NewPCG(seed, 0x766572696679)),
		opts: opts,
		seed: seed,
	}
	return g.program()
}

// maxFrames is the deepest call chain the generator builds on purpose:
// main and seven nested calls is the verifier's and the VM's limit.
const maxFrames = 8

type gen struct {
	rng   *rand.Rand
	opts  Options
	seed  uint64
	mem   int64 // memory size
	funcs []*function
	// badRate is the chance that a snippet steps over the boundary.
	badRate float64
	defects []string
	hints   []Hint
	loops   int
	calls   int
	labels  int
	origin  string
	// stackLimit is how deep below r10 generated stack accesses aim
	// (512, or less for kernel programs with calls).
	stackLimit int64
	// allowCalls is unset when a Kernel-mode program may not call.
	allowCalls bool
	budget     uint64
	// nesting is the depth of loops and branches around the current snippet.
	nesting  int
	loopNest int
	// proving marks the instructions being emitted as proven safe: the
	// generator established by enumerating every input (or by a mask's or
	// modulus's arithmetic) that the access they make is inside.
	proving bool
	// spillSide is the side of an if-else that spills a pointer in the
	// "data on one side, pointer on the other" pattern.
	spillSide int
}

// regKind is what the generator put in a register.
type regKind uint8

const (
	kNone     regKind = iota // not written (or unusable after a merge)
	kScalar                  // a number
	kMemPtr                  // a pointer into memory at a known offset
	kStackPtr                // a pointer into a stack frame at a known offset
	kOther                   // a pointer the generator lost track of
)

// genState is what the generator knows at a program point of one function.
type genState struct {
	kind  [11]regKind
	off   [11]int64 // constant offset of a pointer from its object's start (stack: from r10 of its frame)
	frame [11]int   // for kStackPtr: 0 is the current frame, 1 the caller's
	// init marks stack bytes of the current frame written on every path
	// (index 0 is r10-512).
	init [512]bool
}

// join keeps what two states agree on.
func (s *genState) join(o *genState) {
	for r := range s.kind {
		if s.kind[r] != o.kind[r] || s.off[r] != o.off[r] || s.frame[r] != o.frame[r] {
			s.kind[r] = kNone
		}
	}
	for i := range s.init {
		s.init[i] = s.init[i] && o.init[i]
	}
}

// item is one instruction with its jump or call target and the labels
// bound to it.
type item struct {
	ins    asm.Instruction
	target string
	labels []string
	origin string
	proven bool
}

// function is one function being generated.
type function struct {
	name    string
	depth   int // frames below it: main is 0
	items   []item
	pending []string
	st      genState
	// reserved registers may not be used as scratch (loop counters, roles).
	reserved [11]bool
	// arg describes the caller's stack bytes a callee may use through r7:
	// [argLo, argHi) writable, [0, argInit) initialised, relative to r7.
	hasArg                bool
	argLo, argHi, argInit int64
	memLen                bool // r7 holds the memory length (main only)
	retKind               regKind
}

func (g *gen) label() string {
	g.labels++
	return fmt.Sprintf("L%d", g.labels)
}

func (f *function) emit(g *gen, ins ...asm.Instruction) {
	for _, in := range ins {
		f.items = append(f.items, item{ins: in, labels: f.pending, origin: g.origin, proven: g.proving})
		f.pending = nil
	}
}

func (f *function) jump(g *gen, ins asm.Instruction, target string) {
	f.items = append(f.items, item{ins: ins, target: target, labels: f.pending, origin: g.origin, proven: g.proving})
	f.pending = nil
}

func (f *function) bind(l string) { f.pending = append(f.pending, l) }

func (g *gen) program() Program {
	g.mem = memSizes[g.rng.IntN(len(memSizes))]
	g.budget = 100_000
	switch g.rng.IntN(10) {
	case 0:
		g.budget = 1_000_000
	case 1:
		g.budget = 5_000
	}
	g.stackLimit = 512
	g.allowCalls = true
	if g.opts.Kernel {
		g.allowCalls = g.rng.IntN(3) == 0
		if g.allowCalls {
			g.stackLimit = 96
		}
	}
	n := g.opts.Snippets
	if n <= 0 {
		n = 1 + g.rng.IntN(8)
	}
	if g.rng.IntN(100) < 45 {
		g.badRate = 0
	} else {
		g.badRate = 1 / float64(n+1)
		if g.rng.IntN(4) == 0 {
			g.badRate = 2 / float64(n+1)
		}
	}
	main := &function{name: "main"}
	g.funcs = append(g.funcs, main)
	g.prologue(main)
	for range n {
		g.snippet(main)
	}
	g.epilogue(main)
	return g.finish()
}

// memSizes are the memory sizes: odd and even, tiny and large.
var memSizes = []int64{1, 3, 4, 7, 8, 12, 16, 17, 24, 31, 32, 48, 60, 64, 100, 128, 255, 256, 1000, 1024, 4096}

// bad reports whether the next boundary decision should step over it.
func (g *gen) bad() bool { return g.badRate > 0 && g.rng.Float64() < g.badRate }

func (g *gen) defect(format string, args ...any) {
	g.defects = append(g.defects, fmt.Sprintf(format, args...))
}

func (g *gen) hint(off int64, size int, vals ...uint64) {
	if off < 0 || off+int64(size) > g.mem {
		return
	}
	h := Hint{Off: int(off)}
	for _, v := range vals {
		b := make([]byte, size)
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Values = append(h.Values, b)
	}
	g.hints = append(g.hints, h)
}

func (g *gen) prologue(f *function) {
	g.origin = "prologue"
	f.emit(g, asm.Mov.Reg(asm.R6, asm.R1))
	f.st.kind[asm.R1], f.st.kind[asm.R6] = kMemPtr, kMemPtr
	f.st.kind[asm.R2] = kScalar
	f.st.kind[asm.R10] = kStackPtr
	f.reserved[asm.R6], f.reserved[asm.R10] = true, true
	if g.rng.IntN(2) == 0 {
		f.emit(g, asm.Mov.Reg(asm.R7, asm.R2))
		f.st.kind[asm.R7] = kScalar
		f.memLen = true
		f.reserved[asm.R7] = true
	}
}

// epilogue folds some scalars into r0 and exits.
func (g *gen) epilogue(f *function) {
	g.origin = "epilogue"
	if f.depth == 0 && g.rng.IntN(40) == 0 && g.badRate > 0 {
		g.origin = "leak/return"
		f.emit(g, asm.Mov.Reg(asm.R0, asm.R6))
		g.defect("leak: main returns the memory pointer")
		f.emit(g, asm.Return())
		return
	}
	f.emit(g, asm.Mov.Imm(asm.R0, int32(g.rng.IntN(100))))
	for _, r := range []asm.Register{asm.R2, asm.R3, asm.R4, asm.R5, asm.R8, asm.R9} {
		if f.st.kind[r] == kScalar && g.rng.IntN(2) == 0 {
			f.emit(g, asm.Xor.Reg(asm.R0, r))
		}
	}
	if g.mem >= 4 && g.rng.IntN(3) == 0 {
		f.emit(g, asm.LoadMem(asm.R1, asm.R6, 0, asm.Word), asm.Add.Reg(asm.R0, asm.R1))
	}
	f.emit(g, asm.Return())
}

// finish lays out main and then every function, resolves labels to
// offsets and round-trips the result through Encode and Decode.
func (g *gen) finish() Program {
	var items []item
	for i, f := range g.funcs {
		if len(f.pending) > 0 {
			panic("verifygen: label bound past the end of " + f.name)
		}
		if i > 0 {
			f.items[0].labels = append(f.items[0].labels, f.name)
		}
		items = append(items, f.items...)
	}
	insns := make(asm.Instructions, len(items))
	origin := make([]string, len(items))
	proven := make([]bool, len(items))
	slotOf := map[string]int{}
	slot := 0
	slots := make([]int, len(items))
	for i, it := range items {
		insns[i] = it.ins
		origin[i] = it.origin
		proven[i] = it.proven
		slots[i] = slot
		for _, l := range it.labels {
			slotOf[l] = slot
		}
		slot += int(it.ins.Width())
	}
	for i, it := range items {
		if it.target == "" {
			if isBranch(&insns[i]) {
				panic(fmt.Sprintf("verifygen: seed %d: jump %d without a target", g.seed, i))
			}
			continue
		}
		t, ok := slotOf[it.target]
		if !ok {
			panic("verifygen: unbound label " + it.target)
		}
		d := t - slots[i] - 1
		switch op := bytecode.RawOpcode(&insns[i]); {
		case op == bytecode.OpCall, op == bytecode.OpJa32:
			insns[i].Constant = int64(d)
		default:
			insns[i].Offset = int16(d)
		}
	}
	raw, err := bytecode.Encode(insns)
	if err != nil {
		panic(fmt.Sprintf("verifygen: seed %d: encode: %v\n%v", g.seed, err, insns))
	}
	out, err := bytecode.Decode(raw)
	if err != nil {
		panic(fmt.Sprintf("verifygen: seed %d: decode: %v", g.seed, err))
	}
	return Program{
		Seed:    g.seed,
		Insns:   out,
		MemSize: uint64(g.mem),
		Budget:  g.budget,
		Loops:   g.loops,
		Calls:   g.calls,
		Defects: g.defects,
		Hints:   g.hints,
		Origin:  origin,
		Proven:  proven,
	}
}

// isBranch reports whether ins jumps or calls by offset.
func isBranch(ins *asm.Instruction) bool {
	op := bytecode.RawOpcode(ins)
	class := asm.Class(op & 7)
	if class != asm.JumpClass && class != asm.Jump32Class {
		return false
	}
	switch op & 0xf0 {
	case 0x90: // exit
		return false
	case 0x80: // call: local calls only
		return ins.Src == bytecode.PseudoCall
	}
	return true
}
