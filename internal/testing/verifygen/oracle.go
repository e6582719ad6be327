package verifygen

import (
	"fmt"
	"slices"
	"sync"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// Violation is a break of a raw-mode rule that Check saw happen: a program
// the verifier accepted must never produce one.
type Violation struct {
	PC   int    // slot of the instruction
	Rule string // "out-of-bounds", "uninit-stack", "pointer-leak", ...
	Msg  string
}

func (v *Violation) Error() string { return fmt.Sprintf("insn %d: %s: %s", v.PC, v.Rule, v.Msg) }

// Check runs insns in raw mode on mem (r1 = memory, r2 = len(mem)) under
// the rules an accepted program must keep, and returns r0 and the number
// of instructions executed, or the first *Violation:
//
//   - every load, store and atomic lies inside its own object: the memory,
//     or the 512 bytes below r10 of a live frame (the VM only sees its
//     whole stack segment, so a frame's overflow into its neighbour goes
//     unnoticed there); atomics are naturally aligned;
//   - no register is read before it is written (r1–r5 die at a call's
//     return, r0 and r6–r9 start empty in a callee), no stack byte before
//     it is stored in its frame's current life;
//   - no pointer is stored to memory, stored other than whole to an
//     aligned stack slot, returned from the program, compared with a
//     number or in 32 bits, combined by anything but ±number or the
//     difference of two pointers into one object, or read back in part;
//   - no pointer to a frame outlives it (returned, or left in a caller's
//     frame);
//   - no helper call, no call past 8 frames, no more than budget
//     instructions, no falling off the end.
//
// Numbers follow RFC 9669 exactly and pointers have the VM's addresses
// (stack frame k's r10 at segment 1 offset 4096-512k, memory at segment 3),
// so for a program that keeps the rules r0, the memory and the count agree
// with the VM's.
func Check(insns asm.Instructions, mem []byte, budget uint64) (r0, executed uint64, err error) {
	offsets, total := bytecode.Slots(insns)
	c := checkers.Get().(*checker)
	defer checkers.Put(c)
	*c = checker{code: c.code[:0], mem: mem, budget: budget}
	c.code = slices.Grow(c.code, total)[:total]
	for i := range c.code {
		c.code[i] = dinsn{op: 0xff}
	}
	for i := range insns {
		ins := &insns[i]
		d := dinsn{ins: ins, op: bytecode.RawOpcode(ins), dst: ins.Dst, src: ins.Src, off: ins.Offset,
			imm: int64(imm(ins)), width: int(ins.Width())}
		switch asm.Class(d.op & 7) {
		case asm.ALUClass, asm.ALU64Class:
			d.aop = ins.OpCode.ALUOp()
		case asm.JumpClass, asm.Jump32Class:
			d.jop = ins.OpCode.JumpOp()
		case asm.StXClass:
			d.atomic = ins.OpCode.AtomicOp()
		}
		if d.op == bytecode.OpJa32 || d.op == bytecode.OpCall || d.op == bytecode.OpLdDW {
			d.imm = ins.Constant
		}
		c.code[offsets[i]] = d
	}
	r0, err = c.run()
	return r0, c.steps, err
}

var checkers = sync.Pool{New: func() any { return new(checker) }}

// dinsn is an instruction decoded once for Check.
type dinsn struct {
	ins      *asm.Instruction
	imm      int64 // sign-extended imm (ja32, call: the offset)
	off      int16
	op       byte // raw opcode; 0xff for the second slot of lddw
	dst, src asm.Register
	width    int
	aop      asm.ALUOp
	jop      asm.JumpOp
	atomic   asm.AtomicOp
}

// Object kinds of a checker value.
const (
	vUninit uint8 = iota
	vNum
	vMem   // off from the memory's start
	vStack // off from r10 of frame (depth, life)
)

type cval struct {
	kind  uint8
	depth int    // vStack: frame depth
	life  uint64 // vStack: which life of that frame
	off   int64  // pointer offset; for vNum unused
	n     uint64 // vNum: the value
}

func (v cval) isPtr() bool { return v.kind == vMem || v.kind == vStack }

// Per-byte stack states.
const (
	sUninit uint8 = iota
	sData
	sPtr   // part of a whole pointer spill
	sTaint // the rest of a pointer spill overwritten in part
)

type cframe struct {
	bytes  [512]byte
	state  [512]uint8
	spills [64]cval
	life   uint64
	saved  [4]cval // caller's r6–r9
	ret    int     // slot to return to
}

type checker struct {
	code   []dinsn
	mem    []byte
	budget uint64
	steps  uint64
	regs   [11]cval
	frames [8]cframe
	depth  int
	lives  uint64
	pc     int
}

const (
	vmMemBase   = 3 << 32
	vmStackBase = 1 << 32
)

// addr is the VM's address of a pointer.
func (c *checker) addr(v cval) uint64 {
	if v.kind == vMem {
		return uint64(vmMemBase + v.off)
	}
	return uint64(vmStackBase + 4096 - 512*int64(v.depth) + v.off)
}

func (c *checker) violate(rule, format string, args ...any) error {
	return &Violation{PC: c.pc, Rule: rule, Msg: fmt.Sprintf(format, args...)}
}

func num(n uint64) cval { return cval{kind: vNum, n: n} }

func (c *checker) read(r asm.Register) (cval, error) {
	v := c.regs[r]
	if v.kind == vUninit {
		return v, c.violate("uninit-reg", "r%d read before it was written", r)
	}
	return v, nil
}

func (c *checker) newFrame(d int) {
	c.lives++
	f := &c.frames[d]
	f.state = [512]uint8{}
	f.spills = [64]cval{}
	f.life = c.lives
}

func (c *checker) run() (uint64, error) {
	c.newFrame(0)
	c.regs[asm.R1] = cval{kind: vMem}
	c.regs[asm.R2] = num(uint64(len(c.mem)))
	c.regs[asm.R10] = cval{kind: vStack, life: c.frames[0].life}
	for {
		if c.pc < 0 || c.pc >= len(c.code) || c.code[c.pc].op == 0xff {
			return 0, c.violate("fell-off", "execution left the program")
		}
		c.steps++
		if c.steps > c.budget {
			return 0, c.violate("budget", "more than %d instructions", c.budget)
		}
		ins := &c.code[c.pc]
		op := ins.op
		next := c.pc + ins.width
		var err error
		switch asm.Class(op & 7) {
		case asm.ALUClass, asm.ALU64Class:
			err = c.alu(ins, op)
		case asm.LdClass:
			if ins.src != 0 {
				return 0, c.violate("region", "lddw of a region: raw mode has none")
			}
			c.regs[ins.dst] = num(uint64(ins.imm))
		case asm.LdXClass:
			err = c.load(ins, op)
		case asm.StClass, asm.StXClass:
			if op&0xe0 == 0xc0 {
				err = c.atomic(ins, op)
			} else {
				err = c.store(ins, op)
			}
		case asm.JumpClass, asm.Jump32Class:
			var done bool
			var r0 uint64
			next, done, r0, err = c.jump(ins, op, next)
			if done || err != nil {
				return r0, err
			}
		}
		if err != nil {
			return 0, err
		}
		c.pc = next
	}
}

func (c *checker) alu(ins *dinsn, op byte) error {
	alu64 := op&7 == byte(asm.ALU64Class)
	reg := op&0x08 != 0
	aop := ins.aop
	if aop == asm.Swap {
		reg = false
	}
	src := num(uint64(ins.imm))
	if reg {
		v, err := c.read(ins.src)
		if err != nil {
			return err
		}
		src = v
	}
	if aop == asm.Mov || aop == asm.MovSX8 || aop == asm.MovSX16 || aop == asm.MovSX32 {
		if src.isPtr() {
			if aop == asm.Mov && alu64 {
				c.regs[ins.dst] = src
				return nil
			}
			return c.violate("pointer-arith", "%s of a pointer", aluName(ins.ins))
		}
		c.regs[ins.dst] = num(evalALU(op, aop, ins.imm, 0, src.n))
		return nil
	}
	dst, err := c.read(ins.dst)
	if err != nil {
		return err
	}
	if !dst.isPtr() && !src.isPtr() {
		c.regs[ins.dst] = num(evalALU(op, aop, ins.imm, dst.n, src.n))
		return nil
	}
	if !alu64 {
		return c.violate("pointer-arith", "32-bit %s on a pointer", aluName(ins.ins))
	}
	switch {
	case aop == asm.Add && dst.isPtr() && !src.isPtr():
		dst.off += int64(src.n)
		c.regs[ins.dst] = dst
	case aop == asm.Add && src.isPtr() && !dst.isPtr():
		src.off += int64(dst.n)
		c.regs[ins.dst] = src
	case aop == asm.Sub && dst.isPtr() && !src.isPtr():
		dst.off -= int64(src.n)
		c.regs[ins.dst] = dst
	case aop == asm.Sub && dst.isPtr() && src.isPtr():
		if dst.kind != src.kind || dst.depth != src.depth || dst.life != src.life {
			return c.violate("pointer-arith", "difference of pointers into different objects")
		}
		c.regs[ins.dst] = num(uint64(dst.off - src.off))
	default:
		return c.violate("pointer-arith", "%s with a pointer operand", aluName(ins.ins))
	}
	return nil
}

// object checks that size bytes at p+off are inside p's object and
// returns the bytes and, for the stack, the frame and the index of the
// first byte.
func (c *checker) object(r asm.Register, off int64, size int, what string) ([]byte, *cframe, int, error) {
	p, err := c.read(r)
	if err != nil {
		return nil, nil, 0, err
	}
	switch p.kind {
	case vNum:
		return nil, nil, 0, c.violate("not-a-pointer", "%s through r%d, a number", what, r)
	case vMem:
		at := p.off + off
		if at < 0 || at > int64(len(c.mem))-int64(size) {
			return nil, nil, 0, c.violate("out-of-bounds", "%s of %d bytes at memory offset %d of %d", what, size, at, len(c.mem))
		}
		return c.mem[at : at+int64(size)], nil, int(at), nil
	}
	at := p.off + off
	if p.depth > c.depth || c.frames[p.depth].life != p.life {
		return nil, nil, 0, c.violate("dangling", "%s through r%d into a frame that has returned", what, r)
	}
	if at < -512 || at > -int64(size) {
		return nil, nil, 0, c.violate("out-of-bounds", "%s of %d bytes at r10%+d of frame %d", what, size, at, p.depth)
	}
	f := &c.frames[p.depth]
	i := int(at + 512)
	return f.bytes[i : i+size], f, i, nil
}

func (c *checker) load(ins *dinsn, op byte) error {
	size := asm.Size(op & 0x18).Sizeof()
	b, f, i, err := c.object(ins.src, int64(ins.off), size, "read")
	if err != nil {
		return err
	}
	if f != nil {
		if size == 8 && i%8 == 0 && f.state[i] == sPtr {
			c.regs[ins.dst] = f.spills[i/8]
			return nil
		}
		for j := i; j < i+size; j++ {
			switch f.state[j] {
			case sUninit:
				return c.violate("uninit-stack", "read of %d bytes at r10%+d reaches r10%+d, never written", size, i-512, j-512)
			case sPtr, sTaint:
				return c.violate("pointer-leak", "read of %d bytes at r10%+d exposes part of a spilled pointer", size, i-512)
			}
		}
	}
	v := uint64(0)
	for j := size - 1; j >= 0; j-- {
		v = v<<8 | uint64(b[j])
	}
	if op&0xe0 == 0x80 { // sign-extending
		shift := 64 - 8*size
		v = uint64(int64(v<<shift) >> shift)
	}
	c.regs[ins.dst] = num(v)
	return nil
}

func put(b []byte, v uint64) {
	for j := range b {
		b[j] = byte(v >> (8 * j))
	}
}

// markStack records a store of size bytes of data at f's byte i, turning
// the rest of any pointer spill it overlaps into taint.
func markStack(f *cframe, i, size int, state uint8) {
	for s := i / 8; s <= (i+size-1)/8; s++ {
		if f.state[s*8] == sPtr {
			for j := s * 8; j < s*8+8; j++ {
				f.state[j] = sTaint
			}
			f.spills[s] = cval{}
		}
	}
	for j := i; j < i+size; j++ {
		f.state[j] = state
	}
}

func (c *checker) store(ins *dinsn, op byte) error {
	size := asm.Size(op & 0x18).Sizeof()
	v := num(uint64(ins.imm))
	if asm.Class(op&7) == asm.StXClass {
		var err error
		if v, err = c.read(ins.src); err != nil {
			return err
		}
	}
	b, f, i, err := c.object(ins.dst, int64(ins.off), size, "write")
	if err != nil {
		return err
	}
	if v.isPtr() {
		if f == nil {
			return c.violate("pointer-leak", "pointer stored to memory")
		}
		if size != 8 || i%8 != 0 {
			return c.violate("pointer-leak", "pointer stored in part or unaligned at r10%+d", i-512)
		}
		markStack(f, i, 8, sPtr)
		f.spills[i/8] = v
		put(b, c.addr(v))
		return nil
	}
	if f != nil {
		markStack(f, i, size, sData)
	}
	put(b, v.n)
	return nil
}

func (c *checker) atomic(ins *dinsn, op byte) error {
	size := asm.Size(op & 0x18).Sizeof()
	aop := ins.atomic
	src, err := c.read(ins.src)
	if err != nil {
		return err
	}
	if src.isPtr() {
		return c.violate("pointer-leak", "atomic with a pointer operand")
	}
	var r0 cval
	if aop == asm.CmpXchg {
		if r0, err = c.read(asm.R0); err != nil {
			return err
		}
		if r0.isPtr() {
			return c.violate("pointer-leak", "cmpxchg with a pointer in r0")
		}
	}
	b, f, i, err := c.object(ins.dst, int64(ins.off), size, "atomic")
	if err != nil {
		return err
	}
	p := c.regs[ins.dst]
	if (p.off+int64(ins.off))%int64(size) != 0 {
		return c.violate("misaligned", "atomic of %d bytes at offset %d", size, p.off+int64(ins.off))
	}
	if f != nil {
		for j := i; j < i+size; j++ {
			switch f.state[j] {
			case sUninit:
				return c.violate("uninit-stack", "atomic on r10%+d, never written", j-512)
			case sPtr, sTaint:
				return c.violate("pointer-leak", "atomic on a spilled pointer")
			}
		}
	}
	old := uint64(0)
	for j := size - 1; j >= 0; j-- {
		old = old<<8 | uint64(b[j])
	}
	s := src.n
	if size == 4 {
		s = uint64(uint32(s))
	}
	var nw uint64
	switch aop &^ 0x100 { // the operation without the fetch flag
	case asm.AddAtomic:
		nw = old + s
	case asm.OrAtomic:
		nw = old | s
	case asm.AndAtomic:
		nw = old & s
	case asm.XorAtomic:
		nw = old ^ s
	case asm.Xchg &^ 0x100:
		nw = s
	case asm.CmpXchg &^ 0x100:
		nw = old
		cmp := r0.n
		if size == 4 {
			cmp = uint64(uint32(cmp))
		}
		if old == cmp {
			nw = s
		}
		c.regs[asm.R0] = num(old)
	}
	put(b, nw)
	if aop&0x100 != 0 && aop != asm.CmpXchg {
		c.regs[ins.src] = num(old)
	}
	return nil
}

func (c *checker) jump(ins *dinsn, op byte, next int) (int, bool, uint64, error) {
	switch {
	case op == bytecode.OpJa:
		return next + int(ins.off), false, 0, nil
	case op == bytecode.OpJa32:
		return next + int(ins.imm), false, 0, nil
	case op == bytecode.OpExit:
		r0, done, err := c.exit()
		if err != nil || done {
			return 0, done, r0, err
		}
		return c.frames[c.depth+1].ret, false, 0, nil
	case op == bytecode.OpCall && ins.src == bytecode.PseudoCall:
		if c.depth == 7 {
			return 0, false, 0, c.violate("call-depth", "a call from frame 8")
		}
		c.depth++
		c.newFrame(c.depth)
		f := &c.frames[c.depth]
		f.ret = next
		copy(f.saved[:], c.regs[asm.R6:asm.R10])
		c.regs[asm.R0] = cval{}
		for r := asm.R6; r <= asm.R9; r++ {
			c.regs[r] = cval{}
		}
		c.regs[asm.R10] = cval{kind: vStack, depth: c.depth, life: f.life}
		return next + int(ins.imm), false, 0, nil
	case op&0xf0 == 0x80:
		return 0, false, 0, c.violate("helper", "helper call in raw mode")
	}
	jmp32 := asm.Class(op&7) == asm.Jump32Class
	a, err := c.read(ins.dst)
	if err != nil {
		return 0, false, 0, err
	}
	b := num(uint64(ins.imm))
	if op&0x08 != 0 {
		if b, err = c.read(ins.src); err != nil {
			return 0, false, 0, err
		}
	}
	x, y := a.n, b.n
	if a.isPtr() || b.isPtr() {
		switch {
		case !a.isPtr() || !b.isPtr():
			return 0, false, 0, c.violate("pointer-compare", "a pointer compared with a number")
		case jmp32:
			return 0, false, 0, c.violate("pointer-compare", "pointers compared in 32 bits")
		case a.kind != b.kind || a.depth != b.depth:
			return 0, false, 0, c.violate("pointer-compare", "pointers into different objects compared")
		}
		x, y = c.addr(a), c.addr(b)
	}
	if evalCond(ins.jop, jmp32, x, y) {
		return next + int(ins.off), false, 0, nil
	}
	return next, false, 0, nil
}

// exit returns from a function, or ends the run with done.
func (c *checker) exit() (uint64, bool, error) {
	r0, err := c.read(asm.R0)
	if err != nil {
		return 0, false, err
	}
	if c.depth == 0 {
		if r0.isPtr() {
			return 0, false, c.violate("pointer-leak", "the program returns a pointer")
		}
		return r0.n, true, nil
	}
	f := &c.frames[c.depth]
	if r0.kind == vStack && r0.depth == c.depth {
		return 0, false, c.violate("dangling", "a function returns a pointer into its own frame")
	}
	for d := 0; d < c.depth; d++ {
		g := &c.frames[d]
		for s := range g.spills {
			if g.state[s*8] == sPtr && g.spills[s].kind == vStack && g.spills[s].depth == c.depth {
				return 0, false, c.violate("dangling", "a pointer into the returning frame is left at r10%+d of frame %d", s*8-512, d)
			}
		}
	}
	copy(c.regs[asm.R6:asm.R10], f.saved[:])
	for r := asm.R1; r <= asm.R5; r++ {
		c.regs[r] = cval{}
	}
	c.depth--
	c.regs[asm.R10] = cval{kind: vStack, depth: c.depth, life: c.frames[c.depth].life}
	return 0, false, nil
}
