package bytecode

import (
	"encoding/hex"
	"strings"
	"testing"
)

func TestLayoutSize(t *testing.T) {
	tests := []struct {
		have []Field
		want uint64
	}{
		{nil, 0},
		{[]Field{{Name: "a", Type: "u32", Size: 4}}, 4},
		{[]Field{{Name: "a", Type: "u64", Size: 8}, {Name: "b", Type: "u8", Offset: 8, Size: 1}}, 16},
		{[]Field{{Name: "k", Type: "[u8; 16]", Size: 16}, {Name: "n", Type: "u32", Offset: 16, Size: 4}, {Name: "v", Type: "[u8; 64]", Offset: 20, Size: 64}}, 84},
		{[]Field{{Name: "m", Type: "[[u16; 3]; 2]", Size: 12}, {Name: "b", Type: "bool", Offset: 12, Size: 1}}, 14},
		// A struct's alignment is bounded by its offset and size.
		{[]Field{{Name: "s", Type: "Bucket", Size: 32}, {Name: "b", Type: "bool", Offset: 32, Size: 1}}, 40},
		{[]Field{{Name: "s", Type: "[P; 3]", Size: 6}, {Name: "b", Type: "u8", Offset: 6, Size: 1}}, 8},
	}
	for _, tt := range tests {
		l, err := ParseLayout(tt.have)
		if err != nil {
			t.Errorf("%v: %v", tt.have, err)
			continue
		}
		if l.Size != tt.want {
			t.Errorf("%v: size %d, want %d", tt.have, l.Size, tt.want)
		}
	}
}

func TestEncodeText(t *testing.T) {
	tests := []struct {
		typ   string
		size  uint32
		value string
		want  string // hex, or "error: substring"
	}{
		{"u8", 1, "255", "ff"},
		{"u8", 1, "256", "error: not a u8"},
		{"u16", 2, "0x1234", "3412"},
		{"u32", 4, "-1", "error: not a u32"},
		{"i32", 4, "-2", "feffffff"},
		{"i8", 1, "-128", "80"},
		{"i8", 1, "128", "error: not an i8"},
		{"u64", 8, "0b101", "0500000000000000"},
		{"bool", 1, "true", "01"},
		{"bool", 1, "false", "00"},
		{"bool", 1, "1", "error: not a bool"},
		{"[u8; 4]", 4, "hi", "68690000"},
		{"[u8; 4]", 4, "0x0102", "01020000"},
		{"[u8; 4]", 4, "hello", "error: 5 bytes do not fit 4"},
		{"[u8; 2]", 2, "0x010203", "error: 3 bytes do not fit 2"},
		{"[u8; 2]", 2, "0xzz", "error: bad hex"},
		{"[u16; 3]", 6, "1, 2", "010002000000"},
		{"[u16; 3]", 6, "", "000000000000"},
		{"Point", 4, " ", "00000000"},
		{"[i8; 2]", 2, "-1,1", "ff01"},
		{"[u16; 2]", 4, "1,2,3", "error: 3 values do not fit 2"},
		{"[u16; 2]", 4, "1,x", "error: element 1: \"x\" is not a u16"},
		{"[[u8; 2]; 2]", 4, "1,2,3", "01020300"},
		{"[bool; 2]", 2, "false,true", "0001"},
		{"Pair", 8, "0x0102", "0102000000000000"},
		{"Pair", 8, "3", "error: a Pair is given as 0x and hex bytes"},
		{"[Pair; 2]", 16, "0x01", "01000000000000000000000000000000"},
	}
	for _, tt := range tests {
		ft, err := ParseFieldType(Field{Name: "f", Type: tt.typ, Size: tt.size})
		if err != nil {
			t.Errorf("%s: %v", tt.typ, err)
			continue
		}
		b := make([]byte, tt.size)
		err = ft.EncodeText(tt.value, b)
		if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s %q: error %v, want one containing %q", tt.typ, tt.value, err, want)
			}
			continue
		}
		if err != nil || hex.EncodeToString(b) != tt.want {
			t.Errorf("%s %q: %x, %v; want %s", tt.typ, tt.value, b, err, tt.want)
		}
	}
}

func TestFormatText(t *testing.T) {
	tests := []struct {
		typ  string
		size uint32
		have string // hex
		want string
	}{
		{"u32", 4, "feffffff", "4294967294"},
		{"i32", 4, "feffffff", "-2"},
		{"i8", 1, "80", "-128"},
		{"i64", 8, "ffffffffffffffff", "-1"},
		{"bool", 1, "01", "true"},
		{"bool", 1, "00", "false"},
		{"[u8; 8]", 8, "68656c6c6f000000", `"hello"`},
		{"[u8; 4]", 4, "00000000", `""`},
		{"[u8; 4]", 4, "0068690a", "0x0068690a"},
		{"[u16; 3]", 6, "010002000300", "[1, 2, 3]"},
		{"[[u8; 2]; 2]", 4, "68690001", `["hi", 0x0001]`},
		{"Pair", 4, "01020304", "0x01020304"},
	}
	for _, tt := range tests {
		ft, err := ParseFieldType(Field{Name: "f", Type: tt.typ, Size: tt.size})
		if err != nil {
			t.Errorf("%s: %v", tt.typ, err)
			continue
		}
		b, _ := hex.DecodeString(tt.have)
		if got := ft.FormatText(b); got != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.typ, tt.have, got, tt.want)
		}
	}
}

// FuzzFieldText: any type text and value text parse, encode and format
// without a panic, and what EncodeText wrote formats back to the same
// bytes for scalars.
func FuzzFieldText(f *testing.F) {
	f.Add("u32", uint32(4), "7")
	f.Add("[u8; 4]", uint32(4), "hi")
	f.Add("[[i16; 2]; 2]", uint32(8), "-1, 2")
	f.Add("[P; 2]", uint32(8), "0x0102")
	f.Add("bool", uint32(1), "true")
	f.Fuzz(func(t *testing.T, typ string, size uint32, v string) {
		if size > 1<<16 {
			return
		}
		ft, err := ParseFieldType(Field{Name: "f", Type: typ, Size: size})
		if err != nil {
			return
		}
		b := make([]byte, ft.Size)
		if err := ft.EncodeText(v, b); err != nil {
			return
		}
		out := ft.FormatText(b)
		if ft.Scalar != "" {
			b2 := make([]byte, ft.Size)
			if err := ft.EncodeText(out, b2); err != nil || string(b2) != string(b) {
				t.Fatalf("%s %q: %x formats as %q, which encodes as %x (%v)", typ, v, b, out, b2, err)
			}
		}
	})
}

// TestParseFieldTypeTooLarge: a type whose size passes 2^32 bytes (it
// could come in a describe reply) is an error, not a wrapped size.
func TestParseFieldTypeTooLarge(t *testing.T) {
	for _, f := range []Field{
		{Name: "f", Type: "[[u64; 2147483648]; 2147483648]", Size: 0},
		{Name: "f", Type: "[u64; 4294967295]", Size: 4294967288},
	} {
		if _, err := ParseFieldType(f); err == nil || !strings.Contains(err.Error(), "larger than any field") {
			t.Errorf("%s: %v", f.Type, err)
		}
	}
}
