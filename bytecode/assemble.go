package bytecode

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cilium/ebpf/asm"
)

// Assemble translates the textual syntax of the bpf_conformance suite into
// instructions that pass Validate. Jump and call offsets come out numeric.
//
// One instruction per line; `#` starts a comment; blank lines are ignored;
// `name:` defines a label for the next instruction (on its own line or
// before an instruction). Operands:
//
//	%r0 … %r10                  registers
//	42, 0x2a, -1, -0x80         immediates; a 32-bit one may be written as a
//	                            bit pattern up to 0xffffffff (= -1)
//	[%r1], [%r1+8], [%r10-8]    memory operands with a signed 16-bit offset
//	+3, -2, name                jump targets: slots relative to the next
//	                            instruction, or a label. The label "exit",
//	                            unless defined, is the first exit instruction
//	                            (as in the suite's own assembler).
//
// Mnemonics (an ALU or jump name ending in 32 is the 32-bit form):
//
//	add sub mul div sdiv or and lsh rsh mod smod xor mov arsh  %rD, %rS|imm
//	neg                                                        %rD
//	movsx832 movsx1632 movsx864 movsx1664 movsx3264            %rD, %rS
//	be16 be32 be64 le16 le32 le64 bswap16 bswap32 bswap64      %rD
//	    (swap16, swap32, swap64 are aliases of bswap)
//	lddw %rD, imm64    lddw %rD, region[IDX]+OFF (src = PseudoMapValue)
//	ldxb ldxh ldxw ldxdw ldxsb ldxsh ldxsw                     %rD, [%rS+off]
//	stb sth stw stdw                                           [%rD+off], imm
//	stxb stxh stxw stxdw                                       [%rD+off], %rS
//	lock [fetch] add|and|or|xor[32], lock xchg[32], lock cmpxchg[32]  [%rD+off], %rS
//	jeq jgt jge jlt jle jset jne jsgt jsge jslt jsle           %rD, %rS|imm, target
//	ja target      ja32 target (gotol: 32-bit offset in imm)
//	call N (helper)    call local target    call %rN (callx)    exit
//
// Errors are an ErrorList of *SyntaxError, sorted by position, at most 10.
// Jump and call targets are checked beside other errors unless a line's
// instruction could not be identified (spec/assembly.md, "Errors").
func Assemble(src string) (asm.Instructions, error) {
	insns, _, err := AssembleLines(src)
	return insns, err
}

// AssembleLines is Assemble that also returns the 1-based source line of
// every instruction: lines[i] is the line of insns[i].
func AssembleLines(src string) (insns asm.Instructions, lines []int, err error) {
	a := assembler{labels: make(map[string]labelDef), wide: make(map[int]bool), firstExit: -1}
	a.parse(src)
	// After the error limit the rest of the source was not read, so labels
	// defined there would look undefined.
	if len(a.errs) < maxErrors {
		a.resolve(!a.unknownWidth)
	}
	if len(a.errs) == 0 && len(a.stmts) == 0 {
		a.errorf(1, 1, "empty program: no instructions")
	}
	if len(a.errs) == 0 {
		a.validate()
	}
	if len(a.errs) > 0 {
		a.errs.Sort()
		if len(a.errs) > maxErrors {
			a.errs = a.errs[:maxErrors]
		}
		return nil, nil, a.errs
	}
	insns = make(asm.Instructions, len(a.stmts))
	lines = make([]int, len(a.stmts))
	for i, s := range a.stmts {
		insns[i], lines[i] = s.ins, s.line
	}
	return insns, lines, nil
}

// labelDef is where a label was defined and the slot it names.
type labelDef struct{ slot, line, col int }

// stmt is one parsed instruction and what pass 2 needs to finish it.
type stmt struct {
	ins       asm.Instruction
	form      form
	line, col int // of the mnemonic
	slot      int
	target    jumpTarget
	hasTarget bool
}

type assembler struct {
	errs      ErrorList
	stmts     []stmt
	labels    map[string]labelDef
	wide      map[int]bool // second slots of lddw, rejected lines' too
	slots     int          // slots so far, rejected lines' too
	firstExit int          // slot of the first exit (the implicit label "exit"), or -1
	// unknownWidth is set when a rejected line's instruction was not
	// identified, so that the slot numbers after it may be off.
	unknownWidth bool
}

func (a *assembler) errorf(line, col int, format string, args ...any) {
	a.errs = append(a.errs, &SyntaxError{Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

func (a *assembler) report(err *SyntaxError) { a.errs = append(a.errs, err) }

// parse is pass 1: every line becomes a statement or a label, and a line
// with an error is dropped after its first error.
func (a *assembler) parse(src string) {
	for lineNo := 1; len(a.errs) < maxErrors; lineNo++ {
		text, rest, more := strings.Cut(src, "\n")
		a.parseLine(text, lineNo)
		if !more {
			return
		}
		src = rest
	}
}

func (a *assembler) parseLine(text string, lineNo int) {
	toks, err := scanLine(text)
	if err != nil {
		err.Line = lineNo
		a.report(err)
		a.unknownWidth = true
		return
	}
	p := lineParser{toks: toks, line: lineNo}
	if t := p.peek(); t.kind == tokIdent && p.toks[1].kind == tokPunct && p.toks[1].text == ":" {
		p.next()
		p.next()
		if prev, dup := a.labels[t.text]; dup {
			a.errorf(lineNo, t.col, "label %q defined twice (first at %d:%d)", t.text, prev.line, prev.col)
		} else {
			a.labels[t.text] = labelDef{slot: a.slots, line: lineNo, col: t.col}
		}
	}
	t := p.next()
	switch t.kind {
	case tokEOL:
		return
	case tokIdent:
	default:
		a.errorf(lineNo, t.col, "expected mnemonic or label, found %s", t.describe())
		a.unknownWidth = true
		return
	}
	var m *mnemonic
	if t.text == "lock" {
		if m, err = p.atomicMnemonic(); err != nil {
			a.report(err)
			a.slots++ // every atomic is one slot
			return
		}
	} else if m = mnemonicByName[t.text]; m == nil || m.form == formAtomic {
		a.errorf(lineNo, t.col, "unknown mnemonic %q", t.text)
		a.unknownWidth = true
		return
	}
	slot := a.slots
	if m.form == formExit && a.firstExit < 0 {
		a.firstExit = slot
	}
	// The mnemonic fixes the width, so a line with bad operands still takes
	// its slots and the targets of the others can be checked.
	a.slots++
	if m.form == formLoadImm64 {
		a.wide[a.slots] = true
		a.slots++
	}
	ins, tgt, hasTarget, err := p.operands(m)
	if err != nil {
		a.report(err)
		return
	}
	a.stmts = append(a.stmts, stmt{
		ins: ins, form: m.form, line: lineNo, col: t.col, slot: slot,
		target: tgt, hasTarget: hasTarget,
	})
}

// resolve is pass 2: labels become offsets, and every target must land on
// an instruction. A line rejected in pass 1 still holds its slots when its
// mnemonic was known; when one was not, the slot numbers may be off, and
// only undefined labels are reported (checkTargets false).
func (a *assembler) resolve(checkTargets bool) {
	for i := range a.stmts {
		s := &a.stmts[i]
		if !s.hasTarget {
			continue
		}
		what := "jump"
		if s.form == formCall {
			what = "call"
		}
		bits := 16
		if s.form == formCall || s.form == formJa32 {
			bits = 32
		}
		delta := s.target.delta
		if name := s.target.label; name != "" {
			def, ok := a.labels[name]
			switch {
			case ok:
			case name == "exit" && a.firstExit >= 0:
				def.slot = a.firstExit
			default:
				a.errorf(s.line, s.target.col, "undefined label %q", name)
				continue
			}
			delta = int64(def.slot - (s.slot + 1))
			if bits == 16 && (delta < -1<<15 || delta >= 1<<15) {
				a.errorf(s.line, s.target.col, "label %q is %+d slots away, out of int16 range for a %s offset", name, delta, what)
				continue
			}
		}
		if !checkTargets {
			continue
		}
		switch dst := int64(s.slot) + 1 + delta; {
		case dst < 0 || dst >= int64(a.slots):
			a.errorf(s.line, s.target.col, "%s target is slot %d, outside the program (slots 0 to %d)", what, dst, a.slots-1)
			continue
		case a.wide[int(dst)]:
			a.errorf(s.line, s.target.col, "%s target is slot %d, the second slot of lddw", what, dst)
			continue
		}
		if bits == 32 {
			s.ins.Constant = delta
		} else {
			s.ins.Offset = int16(delta)
		}
	}
}

// validate runs the structural checks of Validate as a safety net; the
// parser already rules out what it can, with better positions.
func (a *assembler) validate() {
	insns := make(asm.Instructions, len(a.stmts))
	bySlot := make(map[int]*stmt, len(a.stmts))
	for i := range a.stmts {
		insns[i] = a.stmts[i].ins
		bySlot[a.stmts[i].slot] = &a.stmts[i]
	}
	for _, err := range validateAll(insns, maxErrors) {
		var ie *InsnError
		if errors.As(err, &ie) && bySlot[ie.Insn] != nil {
			s := bySlot[ie.Insn]
			msg := ie.Msg
			if msg == "" {
				msg = ie.Err.Error()
			}
			a.errorf(s.line, s.col, "%s", msg)
			continue
		}
		a.errorf(1, 1, "%v", err)
	}
}
