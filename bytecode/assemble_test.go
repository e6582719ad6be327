package bytecode

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// Encodings checked by hand against the opcode tables of RFC 9669 (the
// register byte is src<<4 | dst; offset and imm are little-endian).
func TestAssembleEncodings(t *testing.T) {
	tests := []struct {
		have string
		want string
	}{
		// ALU64 and ALU with immediate (K) and register (X) sources.
		{"mov %r0, 1", "b7 00 00 00 01 00 00 00"},
		{"mov %r1, %r2", "bf 21 00 00 00 00 00 00"},
		{"mov32 %r1, -1", "b4 01 00 00 ff ff ff ff"},
		{"mov32 %r1, 0xffffffff", "b4 01 00 00 ff ff ff ff"},
		{"mov32 %r1, 0x00000080", "b4 01 00 00 80 00 00 00"},
		{"add %r1, %r2", "0f 21 00 00 00 00 00 00"},
		{"add32 %r1, -3", "04 01 00 00 fd ff ff ff"},
		{"sub %r3, -0x80", "17 03 00 00 80 ff ff ff"},
		{"mul32 %r0, %r3", "2c 30 00 00 00 00 00 00"},
		{"div %r3, %r2", "3f 23 00 00 00 00 00 00"},
		{"or32 %r0, 0x10", "44 00 00 00 10 00 00 00"},
		{"and %r0, 0xffff", "57 00 00 00 ff ff 00 00"},
		{"lsh %r1, 32", "67 01 00 00 20 00 00 00"},
		{"rsh32 %r1, %r9", "7c 91 00 00 00 00 00 00"},
		{"mod %r1, 7", "97 01 00 00 07 00 00 00"},
		{"xor32 %r1, %r1", "ac 11 00 00 00 00 00 00"},
		{"arsh %r7, 2", "c7 07 00 00 02 00 00 00"},
		{"neg %r1", "87 01 00 00 00 00 00 00"},
		{"neg32 %r1", "84 01 00 00 00 00 00 00"},
		// Signed division and modulo: offset 1.
		{"sdiv %r1, %r2", "3f 21 01 00 00 00 00 00"},
		{"sdiv32 %r1, -2", "34 01 01 00 fe ff ff ff"},
		{"smod %r1, %r2", "9f 21 01 00 00 00 00 00"},
		{"smod32 %r1, 3", "94 01 01 00 03 00 00 00"},
		// Sign-extending moves: offset 8, 16 or 32.
		{"movsx832 %r2, %r1", "bc 12 08 00 00 00 00 00"},
		{"movsx1632 %r4, %r3", "bc 34 10 00 00 00 00 00"},
		{"movsx864 %r6, %r5", "bf 56 08 00 00 00 00 00"},
		{"movsx1664 %r8, %r7", "bf 78 10 00 00 00 00 00"},
		{"movsx3264 %r0, %r9", "bf 90 20 00 00 00 00 00"},
		// Byte swaps: ALU END with the BE bit, or ALU64 END for bswap.
		{"be16 %r1", "dc 01 00 00 10 00 00 00"},
		{"be32 %r1", "dc 01 00 00 20 00 00 00"},
		{"be64 %r1", "dc 01 00 00 40 00 00 00"},
		{"le16 %r1", "d4 01 00 00 10 00 00 00"},
		{"le32 %r2", "d4 02 00 00 20 00 00 00"},
		{"le64 %r1", "d4 01 00 00 40 00 00 00"},
		{"bswap16 %r1", "d7 01 00 00 10 00 00 00"},
		{"bswap32 %r1", "d7 01 00 00 20 00 00 00"},
		{"bswap64 %r1", "d7 01 00 00 40 00 00 00"},
		{"swap16 %r1", "d7 01 00 00 10 00 00 00"},
		{"swap64 %r1", "d7 01 00 00 40 00 00 00"},
		// lddw: low half in the first slot, high half in the second.
		{"lddw %r0, 0x1122334455667788", "18 00 00 00 88 77 66 55 00 00 00 00 44 33 22 11"},
		{"lddw %r0, 0xfedcba987654321", "18 00 00 00 21 43 65 87 00 00 00 00 a9 cb ed 0f"},
		{"lddw %r1, -1", "18 01 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff"},
		{"lddw %r1, -0x8000000000000000", "18 01 00 00 00 00 00 00 00 00 00 00 00 00 00 80"},
		{"lddw %r1, region[2]+16", "18 21 00 00 02 00 00 00 00 00 00 00 10 00 00 00"},
		{"lddw %r9, region[0]", "18 29 00 00 00 00 00 00 00 00 00 00 00 00 00 00"},
		// Loads, including sign-extending ones (mode 0x80).
		{"ldxb %r0, [%r1]", "71 10 00 00 00 00 00 00"},
		{"ldxh %r0, [%r1+2]", "69 10 02 00 00 00 00 00"},
		{"ldxw %r0, [%r1+0x10]", "61 10 10 00 00 00 00 00"},
		{"ldxdw %r0, [%r1+8]", "79 10 08 00 00 00 00 00"},
		{"ldxsb %r0, [%r10-1]", "91 a0 ff ff 00 00 00 00"},
		{"ldxsh %r0, [%r10-2]", "89 a0 fe ff 00 00 00 00"},
		{"ldxsw %r0, [%r10-4]", "81 a0 fc ff 00 00 00 00"},
		{"ldxdw %r0, [%r10-32768]", "79 a0 00 80 00 00 00 00"},
		// Stores of an immediate and of a register.
		{"stb [%r10-1], 0x7f", "72 0a ff ff 7f 00 00 00"},
		{"sth [%r0], 0x1234", "6a 00 00 00 34 12 00 00"},
		{"stw [%r1+2], 0x1234", "62 01 02 00 34 12 00 00"},
		{"stdw [%r10-8], -1", "7a 0a f8 ff ff ff ff ff"},
		{"stxb [%r10-1], %r2", "73 2a ff ff 00 00 00 00"},
		{"stxh [%r10-2], %r2", "6b 2a fe ff 00 00 00 00"},
		{"stxw [%r1+32767], %r2", "63 21 ff 7f 00 00 00 00"},
		{"stxdw [%r10-8], %r0", "7b 0a f8 ff 00 00 00 00"},
		// Atomics: the operation is in imm, 0x01 is the fetch flag.
		{"lock add [%r10-8], %r1", "db 1a f8 ff 00 00 00 00"},
		{"lock add32 [%r10-4], %r1", "c3 1a fc ff 00 00 00 00"},
		{"lock fetch add [%r1], %r2", "db 21 00 00 01 00 00 00"},
		{"lock fetch add32 [%r1], %r2", "c3 21 00 00 01 00 00 00"},
		{"lock or [%r1], %r2", "db 21 00 00 40 00 00 00"},
		{"lock fetch or32 [%r1], %r2", "c3 21 00 00 41 00 00 00"},
		{"lock and [%r1], %r2", "db 21 00 00 50 00 00 00"},
		{"lock fetch and [%r1], %r2", "db 21 00 00 51 00 00 00"},
		{"lock xor32 [%r1], %r2", "c3 21 00 00 a0 00 00 00"},
		{"lock fetch xor [%r1], %r2", "db 21 00 00 a1 00 00 00"},
		{"lock xchg [%r10-8], %r1", "db 1a f8 ff e1 00 00 00"},
		{"lock xchg32 [%r10-8], %r1", "c3 1a f8 ff e1 00 00 00"},
		{"lock cmpxchg [%r10-8], %r1", "db 1a f8 ff f1 00 00 00"},
		{"lock cmpxchg32 [%r10-8], %r1", "c3 1a f8 ff f1 00 00 00"},
		{"lock cmpxchg [%r1], %r10", "db a1 00 00 f1 00 00 00"}, // writes r0, not src
		// Jumps (JMP 0x05, JMP32 0x06); the offset counts slots after this one.
		{"jeq %r1, 5, +3", "15 01 03 00 05 00 00 00"},
		{"jeq %r1, %r2, +3", "1d 21 03 00 00 00 00 00"},
		{"jgt32 %r1, 0xb, +0", "26 01 00 00 0b 00 00 00"},
		{"jge %r1, %r2, -1", "3d 21 ff ff 00 00 00 00"},
		{"jset32 %r1, 0x80000000, +1", "46 01 01 00 00 00 00 80"},
		{"jne32 %r1, %r2, -4", "5e 21 fc ff 00 00 00 00"},
		{"jsgt %r1, -1, +2", "65 01 02 00 ff ff ff ff"},
		{"jsge32 %r1, %r2, +2", "7e 21 02 00 00 00 00 00"},
		{"jlt %r1, 1, +1", "a5 01 01 00 01 00 00 00"},
		{"jle32 %r1, %r2, +1", "be 21 01 00 00 00 00 00"},
		{"jslt %r1, %r2, +1", "cd 21 01 00 00 00 00 00"},
		{"jsle32 %r1, -2, +1", "d6 01 01 00 fe ff ff ff"},
		{"ja +3", "05 00 03 00 00 00 00 00"},
		{"ja -2", "05 00 fe ff 00 00 00 00"},
		{"ja32 +5", "06 00 00 00 05 00 00 00"},
		{"ja32 -4", "06 00 00 00 fc ff ff ff"},
		// Calls: helper, local (src = 1, imm = offset) and callx (register in dst).
		{"call 5", "85 00 00 00 05 00 00 00"},
		{"call helper 0x10", "85 00 00 00 10 00 00 00"},
		{"call local +1", "85 10 00 00 01 00 00 00"},
		{"call local -3", "85 10 00 00 fd ff ff ff"},
		{"call %r2", "8d 02 00 00 00 00 00 00"},
		{"exit", "95 00 00 00 00 00 00 00"},
	}
	// Pad with exits so that every relative target lands on an instruction.
	const before, after = 4, 8
	for _, tt := range tests {
		t.Run(tt.have, func(t *testing.T) {
			src := strings.Repeat("exit\n", before) + tt.have + "\n" + strings.Repeat("exit\n", after)
			raw := assembleBytes(t, src)
			want := hexBytes(t, tt.want)
			equalBytes(t, raw[before*SlotSize:before*SlotSize+len(want)], want)
		})
	}
}

func TestAssembleLabels(t *testing.T) {
	tests := []struct {
		name string
		have string
		want string // the same program with numeric targets
	}{
		{
			name: "forward and backward",
			have: "L1: mov %r0, 0\njeq %r0, 0, L2\nja L1\nL2:\nexit",
			want: "mov %r0, 0\njeq %r0, 0, +1\nja -3\nexit",
		},
		{
			name: "lddw counts two slots",
			have: "ja done\nlddw %r0, 1\nlddw %r1, 2\ndone: exit",
			want: "ja +4\nlddw %r0, 1\nlddw %r1, 2\nexit",
		},
		{
			name: "exit is the first exit unless defined",
			have: "jne %r1, 0, exit\nmov %r0, 1\nexit\nmov %r0, 2\nexit",
			want: "jne %r1, 0, +1\nmov %r0, 1\nexit\nmov %r0, 2\nexit",
		},
		{
			name: "a defined exit label wins",
			have: "jne %r1, 0, exit\nexit\nexit:\nexit",
			want: "jne %r1, 0, +1\nexit\nexit",
		},
		{
			name: "ja32 and local call",
			have: "call local fn\nja32 end\nfn:\nexit\nend:\nexit",
			want: "call local +1\nja32 +1\nexit\nexit",
		},
		{
			name: "comments, blank lines, CRLF and tabs",
			have: "# header\r\n\r\n\tmov %r0, 1 # one\r\nL:\r\n  exit\r\n",
			want: "mov %r0, 1\nexit",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			equalBytes(t, assembleBytes(t, tt.have), assembleBytes(t, tt.want))
		})
	}
}

func TestAssembleLines(t *testing.T) {
	insns, lines, err := AssembleLines("# comment\nmov %r0, 1\n\nL: lddw %r1, 2\nexit\n")
	if err != nil {
		t.Fatal(err)
	}
	if len(insns) != 3 || !reflect.DeepEqual(lines, []int{2, 4, 5}) {
		t.Errorf("got %d instructions on lines %v, want 3 on [2 4 5]", len(insns), lines)
	}
}

// Assembled instructions are the values Decode would produce, so the two
// can be compared directly (atomics keep their imm, sdiv its ALU op).
func TestAssembleMatchesDecode(t *testing.T) {
	src := "sdiv %r1, 3\nmovsx864 %r1, %r2\nlock fetch add [%r1], %r2\nlock cmpxchg32 [%r1], %r2\n" +
		"call 1\ncall local +0\nlddw %r1, region[3]+4\nbe16 %r1\nexit\n"
	insns := must(Assemble(src))
	decoded := must(Decode(must(Encode(insns))))
	if !reflect.DeepEqual(decoded, insns) {
		t.Errorf("assembled:\n%v\ndecoded:\n%v", insns, decoded)
	}
}

func TestAssembleErrors(t *testing.T) {
	tests := []struct {
		name string
		have string
		want []string
	}{
		{"register without %", "mov %r0, 1\nadd r1, 2\nexit", []string{`2:5: expected register like %r1, found "r1"`}},
		{"unknown mnemonic", "addd %r0, 1\nexit", []string{`1:1: unknown mnemonic "addd"`}},
		{"undefined label", "mov %r0, 0\njeq %r0, 1, fail\nexit", []string{`2:13: undefined label "fail"`}},
		{"label defined twice", "L1:\nL1: exit", []string{`2:1: label "L1" defined twice (first at 1:1)`}},
		{"imm too large", "mov %r0, 0x100000000\nexit", []string{`1:10: immediate 0x100000000 is out of range for 32 bits`}},
		{"imm too small", "mov %r0, -2147483649\nexit", []string{`1:10: immediate -2147483649 is out of range for 32 bits`}},
		{"lddw too large", "lddw %r0, 0x10000000000000000\nexit", []string{`1:11: number 0x10000000000000000 is out of range for 64 bits`}},
		{"lddw too small", "lddw %r0, -0x8000000000000001\nexit", []string{`1:11: immediate -0x8000000000000001 is out of range for 64 bits`}},
		{"offset too large", "ldxb %r0, [%r1+32768]\nexit", []string{`1:15: offset +32768 is out of int16 range`}},
		{"offset too small", "stb [%r1-32769], 1\nexit", []string{`1:9: offset -32769 is out of int16 range`}},
		{"jump offset too large", "ja +32768\nexit", []string{`1:4: jump offset +32768 is out of int16 range`}},
		{"ja32 offset too large", "ja32 +2147483648\nexit", []string{`1:6: jump offset +2147483648 is out of int32 range`}},
		{"jump outside", "ja +5\nexit", []string{`1:4: jump target is slot 6, outside the program (slots 0 to 1)`}},
		{"jump before start", "exit\nja -3", []string{`2:4: jump target is slot -1, outside the program (slots 0 to 1)`}},
		{"label past the end", "ja end\nexit\nend:", []string{`1:4: jump target is slot 2, outside the program (slots 0 to 1)`}},
		{"jump into lddw", "ja +1\nlddw %r0, 1\nexit", []string{`1:4: jump target is slot 2, the second slot of lddw`}},
		{"call outside", "call local +7\nexit", []string{`1:12: call target is slot 8, outside the program (slots 0 to 1)`}},
		{"bare number target", "ja 3\nexit", []string{`1:4: expected jump target like +2, -1 or a label, found "3"`}},
		{"write r10", "mov %r10, 1\nexit", []string{`1:5: %r10 is the read-only frame pointer`}},
		{"load into r10", "ldxdw %r10, [%r1]\nexit", []string{`1:7: %r10 is the read-only frame pointer`}},
		{"fetch into r10", "lock fetch add [%r1], %r10\nexit", []string{`1:23: %r10 is the read-only frame pointer`}},
		{"register out of range", "mov %r11, 1\nexit", []string{`1:5: unknown register "%r11" (registers are %r0 to %r10)`}},
		{"register with leading zero", "mov %r01, 1\nexit", []string{`1:5: unknown register "%r01" (registers are %r0 to %r10)`}},
		{"bad character", "mov %r0, $1\nexit", []string{`1:10: unexpected character '$'`}},
		{"missing comma", "mov %r0 1\nexit", []string{`1:9: expected ",", found "1"`}},
		{"missing operand", "mov %r0,\nexit", []string{`1:9: expected immediate, found end of line`}},
		{"trailing operand", "exit 1", []string{`1:6: expected end of line, found "1"`}},
		{"bad number", "mov %r0, 12ab\nexit", []string{`1:10: invalid number "12ab"`}},
		{"underscore in number", "mov %r0, 1_000\nexit", []string{`1:10: invalid number "1_000"`}},
		{"movsx needs a register", "movsx832 %r1, 5\nexit", []string{`1:15: expected register like %r1, found "5"`}},
		{"memory operand", "ldxw %r0, %r1\nexit", []string{`1:11: expected memory operand like [%r1+8], found "%r1"`}},
		{"memory operand end", "ldxw %r0, [%r1*4]\nexit", []string{`1:15: unexpected character '*'`}},
		{"unclosed memory operand", "ldxw %r0, [%r1+4\nexit", []string{`1:17: expected "+", "-" or "]" in memory operand, found end of line`}},
		{"fetch xchg", "lock fetch xchg [%r1], %r2\nexit", []string{`1:6: unknown atomic operation "lock fetch xchg"`}},
		{"lock alone", "lock\nexit", []string{`1:5: expected atomic operation like add or cmpxchg after lock, found end of line`}},
		{"atomic without lock", "add32 [%r1], %r2\nexit", []string{`1:7: expected register like %r1, found "["`}},
		{"helper negative", "call -1\nexit", []string{`1:6: helper number -1 is out of range (0 to 268435455)`}},
		{"helper too large", "call 0x10000000\nexit", []string{`1:6: helper number 0x10000000 is out of range (0 to 268435455)`}},
		{"call without operand", "call\nexit", []string{`1:5: expected helper number, local TARGET or register after call, found end of line`}},
		{"region without bracket", "lddw %r1, region 2\nexit", []string{`1:18: expected "[", found "2"`}},
		{"region index too large", "lddw %r1, region[0x100000000]\nexit", []string{`1:18: region index 0x100000000 is out of range for 32 bits`}},
		{"label on a number", "1:\nexit", []string{`1:1: expected mnemonic or label, found "1"`}},
		{"empty program", "# nothing here\n\n", []string{`1:1: empty program: no instructions`}},
		// A line with bad operands keeps its slots, so jump targets are
		// still checked; after an unknown mnemonic (width unknown) they are not.
		{"target checked beside an operand error", "mov %r0, %r11\nja +5\nexit", []string{
			`1:10: unknown register "%r11" (registers are %r0 to %r10)`,
			`2:4: jump target is slot 7, outside the program (slots 0 to 2)`,
		}},
		{"rejected lddw keeps two slots", "lddw %r0, zz\nja -2\nexit", []string{
			`1:11: expected 64-bit immediate, found "zz"`,
			`2:4: jump target is slot 1, the second slot of lddw`,
		}},
		{"rejected atomic keeps one slot", "lock foo [%r1], %r2\nja +1\nexit", []string{
			`1:6: unknown atomic operation "lock foo"`,
			`2:4: jump target is slot 3, outside the program (slots 0 to 2)`,
		}},
		{"rejected exit still names the label exit", "exit 1\nja exit", []string{`1:6: expected end of line, found "1"`}},
		{"targets unchecked after an unknown mnemonic", "addd\nja +5\nexit", []string{`1:1: unknown mnemonic "addd"`}},
		{
			name: "all errors, sorted across passes",
			have: "ja nowhere\naddd\nmov %r0\nexit",
			want: []string{
				`1:4: undefined label "nowhere"`,
				`2:1: unknown mnemonic "addd"`,
				`3:8: expected ",", found end of line`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			insns, err := Assemble(tt.have)
			var list ErrorList
			if !errors.As(err, &list) || insns != nil {
				t.Fatalf("got %v, %v; want an ErrorList and no instructions", insns, err)
			}
			var got []string
			for _, e := range list {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestAssembleLabelTooFar(t *testing.T) {
	body := strings.Repeat("mov %r0, 0\n", 40000)
	_, err := Assemble("ja far\n" + body + "far:\nexit\n")
	want := `1:4: label "far" is +40000 slots away, out of int16 range for a jump offset`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}

	// ja32 reaches it.
	insns := must(Assemble("ja32 far\n" + body + "far:\nexit\n"))
	if insns[0].Constant != 40000 {
		t.Errorf("ja32 offset %d, want 40000", insns[0].Constant)
	}
}

func TestAssembleStopsAfterTenErrors(t *testing.T) {
	// The label defined after the limit must not be reported as undefined.
	src := "ja end\n" + strings.Repeat("bogus\n", 25) + "end: exit\n"
	_, err := Assemble(src)
	var list ErrorList
	if !errors.As(err, &list) || len(list) != maxErrors {
		t.Fatalf("got %v, want %d errors", err, maxErrors)
	}
	if got, want := err.Error(), `2:1: unknown mnemonic "bogus" (and 9 more errors)`; got != want {
		t.Errorf("Error() = %s, want %s", got, want)
	}
	full := fmt.Sprintf("%+v", err)
	if strings.Count(full, "\n")+1 != maxErrors || !strings.HasPrefix(full, "2:1: unknown mnemonic \"bogus\"\n3:1: ") {
		t.Errorf("%%+v = %s", full)
	}
	var first *SyntaxError
	if !errors.As(err, &first) || *first != (SyntaxError{Line: 2, Col: 1, Msg: `unknown mnemonic "bogus"`}) {
		t.Errorf("errors.As found %v", first)
	}
}

func TestErrorList(t *testing.T) {
	l := ErrorList{{Line: 3, Col: 2, Msg: "c"}, {Line: 1, Col: 9, Msg: "b"}, {Line: 1, Col: 1, Msg: "a"}}
	l.Sort()
	for _, tt := range []struct{ have, want string }{
		{l.Error(), "1:1: a (and 2 more errors)"},
		{fmt.Sprintf("%+v", l), "1:1: a\n1:9: b\n3:2: c"},
		{fmt.Sprintf("%v", l), "1:1: a (and 2 more errors)"},
		{l[:2].Error(), "1:1: a (and 1 more error)"},
		{ErrorList(nil).Error(), "no errors"},
	} {
		if tt.have != tt.want {
			t.Errorf("got %q, want %q", tt.have, tt.want)
		}
	}
	if err := ErrorList(nil).Err(); err != nil {
		t.Errorf("empty list Err() = %v", err)
	}
}

// Every mnemonic in the table assembles, and the canonical ones print back
// as written.
func TestMnemonicTableRoundTrip(t *testing.T) {
	for _, m := range mnemonicTable {
		var line string
		switch m.form {
		case formALU:
			line = m.name + " %r3, -7"
		case formNeg, formEndian:
			line = m.name + " %r3"
		case formMovSX:
			line = m.name + " %r3, %r4"
		case formLoadImm64:
			line = m.name + " %r3, 0x123456789"
		case formLoad:
			line = m.name + " %r3, [%r4-6]"
		case formStoreImm:
			line = m.name + " [%r3+6], 0x12345"
		case formStore, formAtomic:
			line = m.name + " [%r3+6], %r4"
		case formJumpCond:
			line = m.name + " %r3, %r4, +1"
		case formJa, formJa32:
			line = m.name + " +1"
		case formCall:
			line = m.name + " local +1"
		case formExit:
			line = m.name
		}
		t.Run(m.name, func(t *testing.T) {
			src := line + "\nexit\nexit\n"
			insns, err := Assemble(src)
			if err != nil {
				t.Fatalf("%+v", err)
			}
			text, err := Disassemble(insns[:1])
			if err != nil {
				t.Fatal(err)
			}
			if m.alias {
				// An alias prints as its canonical name, with the same bytes.
				if text == line+"\n" {
					t.Errorf("alias %s printed as itself", m.name)
				}
				equalBytes(t, assembleBytes(t, text+"exit\nexit\n"), assembleBytes(t, src))
				return
			}
			if text != line+"\n" {
				t.Errorf("printed %q, want %q", text, line+"\n")
			}
		})
	}
}
