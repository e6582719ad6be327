package bytecode

import "github.com/cilium/ebpf/asm"

// form is the operand shape of a mnemonic; the assembler parses and the
// disassembler prints by form, so the two cannot drift apart.
type form uint8

const (
	formALU       form = iota // add %rD, %rS | add %rD, imm
	formNeg                   // neg %rD
	formEndian                // be16 %rD (the width lives in imm)
	formMovSX                 // movsx832 %rD, %rS (register source only)
	formLoadImm64             // lddw %rD, imm64 | lddw %rD, region[IDX]+OFF
	formLoad                  // ldxw %rD, [%rS+off]
	formStoreImm              // stw [%rD+off], imm
	formStore                 // stxw [%rD+off], %rS
	formAtomic                // lock add [%rD+off], %rS
	formJumpCond              // jeq %rD, %rS | imm, target
	formJa                    // ja target (16-bit offset)
	formJa32                  // ja32 target (gotol: 32-bit offset in imm)
	formCall                  // call N | call local target | call %rN
	formExit                  // exit
)

// mnemonic is one entry of the instruction table. op never has the source
// bit (0x08) set for ALU and jump classes, except for byte swaps, where that
// bit chooses big endian.
type mnemonic struct {
	name  string
	form  form
	op    asm.OpCode
	width int64 // byte-swap width (formEndian only)
	alias bool  // accepted by Assemble, never printed
}

// opKey identifies a mnemonic from a decoded instruction.
type opKey struct {
	op    asm.OpCode
	width int64
}

var (
	mnemonicTable  = buildMnemonics()
	mnemonicByName = indexByName(mnemonicTable)
	mnemonicByOp   = indexByOp(mnemonicTable)
)

func buildMnemonics() []mnemonic {
	var ms []mnemonic
	add := func(m mnemonic) { ms = append(ms, m) }

	alu := []struct {
		name string
		op   asm.ALUOp
	}{
		{"add", asm.Add}, {"sub", asm.Sub}, {"mul", asm.Mul}, {"div", asm.Div},
		{"sdiv", asm.SDiv}, {"or", asm.Or}, {"and", asm.And}, {"lsh", asm.LSh},
		{"rsh", asm.RSh}, {"mod", asm.Mod}, {"smod", asm.SMod}, {"xor", asm.Xor},
		{"mov", asm.Mov}, {"arsh", asm.ArSh},
	}
	for _, a := range alu {
		add(mnemonic{name: a.name, form: formALU, op: a.op.Op(asm.ImmSource)})
		add(mnemonic{name: a.name + "32", form: formALU, op: a.op.Op32(asm.ImmSource)})
	}
	add(mnemonic{name: "neg", form: formNeg, op: asm.Neg.Op(asm.ImmSource)})
	add(mnemonic{name: "neg32", form: formNeg, op: asm.Neg.Op32(asm.ImmSource)})

	// movsx<from><to>: sign-extend the low <from> bits of src into a <to>-bit result.
	add(mnemonic{name: "movsx832", form: formMovSX, op: asm.MovSX8.Op32(asm.ImmSource)})
	add(mnemonic{name: "movsx1632", form: formMovSX, op: asm.MovSX16.Op32(asm.ImmSource)})
	add(mnemonic{name: "movsx864", form: formMovSX, op: asm.MovSX8.Op(asm.ImmSource)})
	add(mnemonic{name: "movsx1664", form: formMovSX, op: asm.MovSX16.Op(asm.ImmSource)})
	add(mnemonic{name: "movsx3264", form: formMovSX, op: asm.MovSX32.Op(asm.ImmSource)})

	swap32 := asm.OpCode(asm.ALUClass).SetALUOp(asm.Swap)
	swap64 := asm.OpCode(asm.ALU64Class).SetALUOp(asm.Swap)
	for _, w := range []struct {
		suffix string
		width  int64
	}{{"16", 16}, {"32", 32}, {"64", 64}} {
		add(mnemonic{name: "be" + w.suffix, form: formEndian, op: swap32 | asm.OpCode(asm.BE), width: w.width})
		add(mnemonic{name: "le" + w.suffix, form: formEndian, op: swap32 | asm.OpCode(asm.LE), width: w.width})
		add(mnemonic{name: "bswap" + w.suffix, form: formEndian, op: swap64, width: w.width})
		add(mnemonic{name: "swap" + w.suffix, form: formEndian, op: swap64, width: w.width, alias: true})
	}

	add(mnemonic{name: "lddw", form: formLoadImm64, op: asm.LoadImmOp(asm.DWord)})

	sizes := []struct {
		suffix string
		size   asm.Size
	}{{"b", asm.Byte}, {"h", asm.Half}, {"w", asm.Word}, {"dw", asm.DWord}}
	for _, s := range sizes {
		add(mnemonic{name: "ldx" + s.suffix, form: formLoad, op: asm.LoadMemOp(s.size)})
		if s.size != asm.DWord {
			add(mnemonic{name: "ldxs" + s.suffix, form: formLoad, op: asm.LoadMemSXOp(s.size)})
		}
		add(mnemonic{name: "st" + s.suffix, form: formStoreImm, op: asm.StoreImmOp(s.size)})
		add(mnemonic{name: "stx" + s.suffix, form: formStore, op: asm.StoreMemOp(s.size)})
	}

	// Atomics are written "lock [fetch] op[32] [%rD+off], %rS"; the table
	// holds the whole phrase so that lookup and printing stay one step.
	atomics := []struct {
		name string
		op   asm.AtomicOp
	}{
		{"add", asm.AddAtomic}, {"fetch add", asm.FetchAdd},
		{"and", asm.AndAtomic}, {"fetch and", asm.FetchAnd},
		{"or", asm.OrAtomic}, {"fetch or", asm.FetchOr},
		{"xor", asm.XorAtomic}, {"fetch xor", asm.FetchXor},
		{"xchg", asm.Xchg}, {"cmpxchg", asm.CmpXchg},
	}
	for _, a := range atomics {
		add(mnemonic{name: "lock " + a.name, form: formAtomic, op: a.op.OpCode(asm.DWord)})
		add(mnemonic{name: "lock " + a.name + "32", form: formAtomic, op: a.op.OpCode(asm.Word)})
	}

	jumps := []struct {
		name string
		op   asm.JumpOp
	}{
		{"jeq", asm.JEq}, {"jgt", asm.JGT}, {"jge", asm.JGE}, {"jset", asm.JSet},
		{"jne", asm.JNE}, {"jsgt", asm.JSGT}, {"jsge", asm.JSGE}, {"jlt", asm.JLT},
		{"jle", asm.JLE}, {"jslt", asm.JSLT}, {"jsle", asm.JSLE},
	}
	for _, j := range jumps {
		add(mnemonic{name: j.name, form: formJumpCond, op: asm.OpCode(asm.JumpClass).SetJumpOp(j.op)})
		add(mnemonic{name: j.name + "32", form: formJumpCond, op: asm.OpCode(asm.Jump32Class).SetJumpOp(j.op)})
	}
	add(mnemonic{name: "ja", form: formJa, op: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Ja)})
	add(mnemonic{name: "ja32", form: formJa32, op: asm.OpCode(asm.Jump32Class).SetJumpOp(asm.Ja)})
	add(mnemonic{name: "call", form: formCall, op: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Call)})
	add(mnemonic{name: "exit", form: formExit, op: asm.OpCode(asm.JumpClass).SetJumpOp(asm.Exit)})
	return ms
}

func indexByName(ms []mnemonic) map[string]*mnemonic {
	idx := make(map[string]*mnemonic, len(ms))
	for i := range ms {
		if _, dup := idx[ms[i].name]; dup {
			panic("bytecode: duplicate mnemonic " + ms[i].name)
		}
		idx[ms[i].name] = &ms[i]
	}
	return idx
}

func indexByOp(ms []mnemonic) map[opKey]*mnemonic {
	idx := make(map[opKey]*mnemonic, len(ms))
	for i := range ms {
		if ms[i].alias {
			continue
		}
		k := opKey{ms[i].op, ms[i].width}
		if _, dup := idx[k]; dup {
			panic("bytecode: two mnemonics for opcode " + ms[i].name)
		}
		idx[k] = &ms[i]
	}
	return idx
}

// sourceBit is BPF_X: the second operand is a register (ALU and jump classes).
const sourceBit = asm.OpCode(asm.RegSource)

// lookupOp finds the mnemonic that prints ins. The caller has validated ins.
func lookupOp(ins *asm.Instruction) (*mnemonic, bool) {
	op := ins.OpCode
	k := opKey{op: op}
	switch {
	case op.Class().IsALU() && op.ALUOp() == asm.Swap:
		k.width = ins.Constant
	case op.Class().IsALU() || op.Class().IsJump():
		k.op = op &^ sourceBit
	}
	m, ok := mnemonicByOp[k]
	return m, ok
}
