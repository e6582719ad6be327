package bytecode

import (
	"fmt"
	"math"
	"strconv"

	"github.com/cilium/ebpf/asm"
)

// lineParser reads the operands of one line. Every method reports the
// first problem as a *SyntaxError pointing at the offending token; the
// caller then drops the rest of the line.
type lineParser struct {
	toks []token
	pos  int
	line int
}

// jumpTarget is the target operand of a jump or local call as written:
// either a label or a signed offset relative to the next slot.
type jumpTarget struct {
	label string
	delta int64
	col   int
}

func (p *lineParser) peek() token { return p.toks[p.pos] }

func (p *lineParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOL {
		p.pos++
	}
	return t
}

func (p *lineParser) errorf(col int, format string, args ...any) *SyntaxError {
	return &SyntaxError{Line: p.line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *lineParser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tokPunct && t.text == s
}

func (p *lineParser) expect(punct string) *SyntaxError {
	if t := p.next(); t.kind != tokPunct || t.text != punct {
		return p.errorf(t.col, "expected %q, found %s", punct, t.describe())
	}
	return nil
}

func (p *lineParser) expectEOL() *SyntaxError {
	if t := p.peek(); t.kind != tokEOL {
		return p.errorf(t.col, "expected end of line, found %s", t.describe())
	}
	return nil
}

// register reads %r0 … %r10. writes marks a register the instruction
// writes, which may not be the read-only frame pointer r10.
func (p *lineParser) register(writes bool) (asm.Register, *SyntaxError) {
	t := p.next()
	if t.kind != tokReg {
		return 0, p.errorf(t.col, "expected register like %%r1, found %s", t.describe())
	}
	digits := t.text[min(2, len(t.text)):]
	n, err := strconv.Atoi(digits)
	if len(t.text) < 3 || t.text[:2] != "%r" || err != nil || n > int(MaxRegister) ||
		strconv.Itoa(n) != digits {
		return 0, p.errorf(t.col, "unknown register %q (registers are %%r0 to %%r10)", t.text)
	}
	if writes && asm.Register(n) == asm.R10 {
		return 0, p.errorf(t.col, "%%r10 is the read-only frame pointer")
	}
	return asm.Register(n), nil
}

// signedNumber reads an optionally signed literal and returns its sign, its
// magnitude and the text as written, for messages.
func (p *lineParser) signedNumber(what string) (neg bool, mag uint64, text string, col int, err *SyntaxError) {
	t := p.next()
	col = t.col
	if t.kind == tokPunct && (t.text == "-" || t.text == "+") {
		neg = t.text == "-"
		text = t.text
		t = p.next()
	}
	if t.kind != tokNumber {
		return false, 0, "", col, p.errorf(t.col, "expected %s, found %s", what, t.describe())
	}
	mag, perr := parseNumber(t.text)
	if perr != nil {
		return false, 0, "", col, p.errorf(t.col, "%v", perr)
	}
	return neg, mag, text + t.text, col, nil
}

// imm32 reads a 32-bit immediate. Values from -2^31 to 2^32-1 are accepted;
// those above 2^31-1 are bit patterns (0xffffffff is -1), as in the suite.
func (p *lineParser) imm32() (int64, *SyntaxError) {
	neg, mag, text, col, err := p.signedNumber("immediate")
	if err != nil {
		return 0, err
	}
	switch {
	case neg && mag <= 1<<31:
		return -int64(mag), nil
	case !neg && mag <= math.MaxUint32:
		return int64(int32(uint32(mag))), nil
	}
	return 0, p.errorf(col, "immediate %s is out of range for 32 bits", text)
}

// imm64 reads the 64-bit immediate of lddw: -2^63 to 2^64-1.
func (p *lineParser) imm64() (int64, *SyntaxError) {
	neg, mag, text, col, err := p.signedNumber("64-bit immediate")
	if err != nil {
		return 0, err
	}
	if !neg {
		return int64(mag), nil
	}
	if mag > 1<<63 {
		return 0, p.errorf(col, "immediate %s is out of range for 64 bits", text)
	}
	return int64(-mag), nil
}

// uint32Operand reads an unsigned 32-bit number (region index and offset).
func (p *lineParser) uint32Operand(what string) (uint32, *SyntaxError) {
	t := p.next()
	if t.kind != tokNumber {
		return 0, p.errorf(t.col, "expected %s, found %s", what, t.describe())
	}
	v, err := parseNumber(t.text)
	if err != nil {
		return 0, p.errorf(t.col, "%v", err)
	}
	if v > math.MaxUint32 {
		return 0, p.errorf(t.col, "%s %s is out of range for 32 bits", what, t.text)
	}
	return uint32(v), nil
}

// memory reads [%rN], [%rN+off] or [%rN-off].
func (p *lineParser) memory() (asm.Register, int16, *SyntaxError) {
	if t := p.next(); t.kind != tokPunct || t.text != "[" {
		return 0, 0, p.errorf(t.col, "expected memory operand like [%%r1+8], found %s", t.describe())
	}
	reg, err := p.register(false)
	if err != nil {
		return 0, 0, err
	}
	var off int64
	if p.isPunct("+") || p.isPunct("-") {
		neg, mag, text, col, err := p.signedNumber("offset")
		if err != nil {
			return 0, 0, err
		}
		switch {
		case neg && mag <= 1<<15:
			off = -int64(mag)
		case !neg && mag < 1<<15:
			off = int64(mag)
		default:
			return 0, 0, p.errorf(col, "offset %s is out of int16 range", text)
		}
	}
	if t := p.next(); t.kind != tokPunct || t.text != "]" {
		return 0, 0, p.errorf(t.col, "expected \"+\", \"-\" or \"]\" in memory operand, found %s", t.describe())
	}
	return reg, int16(off), nil
}

// target reads +N, -N or a label. bits is the width of the field the
// offset goes in (16 for jumps, 32 for ja32 and local calls).
func (p *lineParser) target(bits int) (jumpTarget, *SyntaxError) {
	t := p.peek()
	switch {
	case t.kind == tokIdent:
		p.next()
		return jumpTarget{label: t.text, col: t.col}, nil
	case t.kind == tokPunct && (t.text == "+" || t.text == "-"):
		neg, mag, text, col, err := p.signedNumber("jump offset")
		if err != nil {
			return jumpTarget{}, err
		}
		limit := uint64(1) << (bits - 1)
		if neg && mag <= limit {
			return jumpTarget{delta: -int64(mag), col: col}, nil
		}
		if !neg && mag < limit {
			return jumpTarget{delta: int64(mag), col: col}, nil
		}
		return jumpTarget{}, p.errorf(col, "jump offset %s is out of int%d range", text, bits)
	}
	return jumpTarget{}, p.errorf(t.col, "expected jump target like +2, -1 or a label, found %s", t.describe())
}

// atomicMnemonic reads the words after "lock": [fetch] op.
func (p *lineParser) atomicMnemonic() (*mnemonic, *SyntaxError) {
	t := p.next()
	if t.kind != tokIdent {
		return nil, p.errorf(t.col, "expected atomic operation like add or cmpxchg after lock, found %s", t.describe())
	}
	name, col := "lock "+t.text, t.col
	if t.text == "fetch" {
		op := p.next()
		if op.kind != tokIdent {
			return nil, p.errorf(op.col, "expected atomic operation like add after lock fetch, found %s", op.describe())
		}
		name += " " + op.text
	}
	m, ok := mnemonicByName[name]
	if !ok || m.form != formAtomic {
		return nil, p.errorf(col, "unknown atomic operation %q", name)
	}
	return m, nil
}

// regOrImm parses the source operand of an ALU or jump instruction: a
// register (setting the X source bit) or a 32-bit immediate.
func (p *lineParser) regOrImm(ins *asm.Instruction) (err *SyntaxError) {
	if p.peek().kind == tokReg {
		ins.OpCode |= sourceBit
		ins.Src, err = p.register(false)
		return err
	}
	ins.Constant, err = p.imm32()
	return err
}

// operands parses what follows the mnemonic m and builds the instruction.
// hasTarget reports a jump or local call whose offset pass 2 fills in.
func (p *lineParser) operands(m *mnemonic) (ins asm.Instruction, tgt jumpTarget, hasTarget bool, err *SyntaxError) {
	ins.OpCode = m.op
	switch m.form {
	case formALU:
		if ins.Dst, err = p.register(true); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		err = p.regOrImm(&ins)
	case formNeg:
		ins.Dst, err = p.register(true)
	case formEndian:
		ins.Dst, err = p.register(true)
		ins.Constant = m.width
	case formMovSX:
		if ins.Dst, err = p.register(true); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		ins.OpCode |= sourceBit
		ins.Src, err = p.register(false)
	case formLoadImm64:
		if ins.Dst, err = p.register(true); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		if t := p.peek(); t.kind == tokIdent && t.text == "region" {
			p.next()
			ins.Src = PseudoMapValue
			ins.Constant, err = p.region()
		} else {
			ins.Constant, err = p.imm64()
		}
	case formLoad:
		if ins.Dst, err = p.register(true); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		ins.Src, ins.Offset, err = p.memory()
	case formStoreImm:
		if ins.Dst, ins.Offset, err = p.memory(); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		ins.Constant, err = p.imm32()
	case formStore, formAtomic:
		if ins.Dst, ins.Offset, err = p.memory(); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		atomic := ins.OpCode.AtomicOp()
		ins.Src, err = p.register(writesSrc(atomic))
		if m.form == formAtomic {
			// Decode leaves the raw imm in Constant; do the same so that
			// assembled and decoded instructions compare equal.
			ins.Constant = int64(atomic >> 8)
		}
	case formJumpCond:
		if ins.Dst, err = p.register(false); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		if err = p.regOrImm(&ins); err != nil {
			return
		}
		if err = p.expect(","); err != nil {
			return
		}
		tgt, err = p.target(16)
		hasTarget = true
	case formJa:
		tgt, err = p.target(16)
		hasTarget = true
	case formJa32:
		tgt, err = p.target(32)
		hasTarget = true
	case formCall:
		return p.call(ins)
	case formExit:
	}
	if err == nil {
		err = p.expectEOL()
	}
	return
}

// writesSrc reports whether an atomic operation loads the old value into
// its source register (cmpxchg loads it into r0 instead).
func writesSrc(op asm.AtomicOp) bool {
	switch op {
	case asm.FetchAdd, asm.FetchAnd, asm.FetchOr, asm.FetchXor, asm.Xchg:
		return true
	}
	return false
}

// region reads the rest of "region[IDX]+OFF" after the keyword.
func (p *lineParser) region() (int64, *SyntaxError) {
	if err := p.expect("["); err != nil {
		return 0, err
	}
	idx, err := p.uint32Operand("region index")
	if err != nil {
		return 0, err
	}
	if err := p.expect("]"); err != nil {
		return 0, err
	}
	var off uint32
	if p.isPunct("+") {
		p.next()
		if off, err = p.uint32Operand("region offset"); err != nil {
			return 0, err
		}
	}
	return int64(uint64(off)<<32 | uint64(idx)), nil
}

// call parses "call N", "call helper N", "call local TARGET" and "call %rN".
func (p *lineParser) call(ins asm.Instruction) (asm.Instruction, jumpTarget, bool, *SyntaxError) {
	t := p.peek()
	var tgt jumpTarget
	var err *SyntaxError
	hasTarget := false
	switch {
	case t.kind == tokReg:
		ins.OpCode |= sourceBit
		ins.Dst, err = p.register(false)
	case t.kind == tokIdent && t.text == "local":
		p.next()
		ins.Src = PseudoCall
		tgt, err = p.target(32)
		hasTarget = true
	case t.kind == tokIdent && t.text == "helper", t.kind == tokNumber, t.kind == tokPunct:
		if t.kind == tokIdent {
			p.next()
		}
		var neg bool
		var mag uint64
		var text string
		var col int
		neg, mag, text, col, err = p.signedNumber("helper number")
		if err == nil && (neg && mag != 0 || mag > maxHelper) {
			err = p.errorf(col, "helper number %s is out of range (0 to %d)", text, maxHelper)
		}
		ins.Constant = int64(mag)
	default:
		err = p.errorf(t.col, "expected helper number, local TARGET or register after call, found %s", t.describe())
	}
	if err == nil {
		err = p.expectEOL()
	}
	return ins, tgt, hasTarget, err
}
