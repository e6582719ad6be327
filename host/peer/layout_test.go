package peer

import (
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/bytecode"
)

func testHandler(t *testing.T, args, results []bytecode.Field) *Handler {
	t.Helper()
	h, err := newHandler("t.naam", "h", 16, args, results)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

var mixArgs = []bytecode.Field{
	{Name: "a", Type: "u32", Offset: 0, Size: 4},
	{Name: "b", Type: "i16", Offset: 4, Size: 2},
	{Name: "flag", Type: "bool", Offset: 6, Size: 1},
	{Name: "name", Type: "[u8; 8]", Offset: 7, Size: 8},
	{Name: "words", Type: "[u16; 3]", Offset: 16, Size: 6},
	{Name: "blob", Type: "Point", Offset: 24, Size: 8},
}

func TestEncode(t *testing.T) {
	h := testHandler(t, mixArgs, nil)
	type full struct {
		A     uint32
		B     int
		Flag  bool
		Name  string
		Words []uint16
		Blob  [8]byte
	}
	b, err := h.Encode(nil, full{A: 0x01020304, B: -2, Flag: true, Name: "ab", Words: []uint16{1, 0x203}, Blob: [8]byte{9}})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{4, 3, 2, 1, 0xfe, 0xff, 1, 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 2, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}
	if string(b) != string(want) {
		t.Errorf("encoded\n%x, want\n%x", b, want)
	}
	// A tag renames; a pointer works; dst is appended to.
	type tagged struct {
		X     uint8 `naam:"a"`
		B     int16
		Flag  bool
		Name  []byte
		Words [3]uint16
		Blob  []byte
		Skip  string `naam:"-"`
	}
	b2, err := h.Encode([]byte("pre"), &tagged{X: 4, B: -2, Flag: true, Name: []byte("ab"), Words: [3]uint16{1, 0x203}, Blob: []byte{9}})
	if err != nil || !strings.HasPrefix(string(b2), "pre") || len(b2) != 3+32 || b2[3] != 4 {
		t.Fatalf("%x %v", b2, err)
	}
}

func TestEncodeErrors(t *testing.T) {
	h := testHandler(t, mixArgs, nil)
	one := testHandler(t, []bytecode.Field{{Name: "key", Type: "u16", Offset: 0, Size: 2}}, nil)
	type missing struct {
		A uint32
	}
	type extra struct {
		A     uint32
		B     int16
		Flag  bool
		Name  string
		Words []uint16
		Blob  []byte
		Typo  int
	}
	type wrong struct {
		A     uint32
		B     int16
		Flag  int
		Name  string
		Words []uint16
		Blob  []byte
	}
	type dup struct {
		A     uint32
		AA    uint32 `naam:"a"`
		B     int16
		Flag  bool
		Name  string
		Words []uint16
		Blob  []byte
	}
	type good struct {
		A     uint32
		B     int64
		Flag  bool
		Name  string
		Words []uint16
		Blob  []byte
	}
	for _, tc := range []struct {
		name string
		h    *Handler
		args any
		want string
	}{
		{"nil args", h, nil, "got no arguments"},
		{"nil pointer", h, (*good)(nil), "nil *peer.good"},
		{"field missing", h, missing{}, `has no Go field for "b"`},
		{"field unknown", h, extra{}, "Typo names no field"},
		{"wrong type", h, wrong{}, "Go field peer.wrong.Flag (flag bool): a int does not fit"},
		{"taken twice", h, dup{}, "already taken"},
		{"too big", h, good{B: 40000}, "b: 40000 does not fit"},
		{"negative to unsigned", one, -1, "key: -1 does not fit"},
		{"string too long", h, good{Name: "123456789"}, "name: 9 bytes, the field holds 8"},
		{"array too long", h, good{Words: []uint16{1, 2, 3, 4}}, "words: 4 elements, the field holds 3"},
		{"scalar for many", h, 5, "use a struct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.h.Encode(nil, tc.args)
			if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want ErrLayout with %q", err, tc.want)
			}
		})
	}
	if b, err := one.Encode(nil, uint8(7)); err != nil || string(b) != "\x07\x00" {
		t.Errorf("single scalar: %x %v", b, err)
	}
}

func TestDecode(t *testing.T) {
	results := []bytecode.Field{
		{Name: "sum", Type: "i64", Offset: 0, Size: 8},
		{Name: "not_flag", Type: "bool", Offset: 8, Size: 1},
		{Name: "same_name", Type: "[u8; 8]", Offset: 9, Size: 8},
		{Name: "next", Type: "[u16; 3]", Offset: 18, Size: 6},
	}
	h := testHandler(t, nil, results)
	reply := []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 'h', 'i', 0, 0, 0, 0, 0, 0, 0, 2, 0, 3, 0, 4, 0}
	var r struct {
		Sum      int64
		NotFlag  bool
		SameName string
		Next     [3]uint16
	}
	if err := h.Decode(reply, &r); err != nil {
		t.Fatal(err)
	}
	if r.Sum != -2 || !r.NotFlag || r.SameName != "hi\x00\x00\x00\x00\x00\x00" || r.Next != [3]uint16{2, 3, 4} {
		t.Errorf("%+v", r)
	}
	// A short reply reads as zero past its end; a struct may leave results out.
	var part struct {
		Next []uint32
	}
	if err := h.Decode(reply[:20], &part); err != nil || len(part.Next) != 3 || part.Next[0] != 2 || part.Next[1] != 0 {
		t.Errorf("short reply: %+v %v", part, err)
	}
	for _, tc := range []struct {
		name   string
		result any
		want   string
	}{
		{"not a pointer", r, "non-nil pointer"},
		{"too narrow", &struct{ Sum int32 }{}, "int32 cannot hold every value"},
		{"signed into unsigned", &struct{ Sum uint64 }{}, "uint64 cannot hold every value"},
		{"unknown", &struct{ Total int64 }{}, "Total names no field"},
		{"scalar for many", new(int64), "use a struct"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := h.Decode(reply, tc.result)
			if !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want ErrLayout with %q", err, tc.want)
			}
		})
	}
	one := testHandler(t, nil, []bytecode.Field{{Name: "result", Type: "u32", Offset: 0, Size: 4}})
	var u uint64
	if err := one.Decode([]byte{1, 2, 0, 0}, &u); err != nil || u != 0x201 {
		t.Errorf("single result: %d %v", u, err)
	}
	if err := one.Decode([]byte{1, 2, 0, 0}, nil); err != nil {
		t.Errorf("nil result: %v", err)
	}
}

func TestEncodeStrings(t *testing.T) {
	h := testHandler(t, mixArgs, []bytecode.Field{
		{Name: "sum", Type: "i64", Offset: 0, Size: 8},
		{Name: "name", Type: "[u8; 4]", Offset: 8, Size: 4},
		{Name: "raw", Type: "[u8; 2]", Offset: 12, Size: 2},
		{Name: "ws", Type: "[u16; 2]", Offset: 14, Size: 4},
	})
	b, err := h.EncodeStrings(map[string]string{"a": "0x01020304", "b": "-2", "flag": "true", "name": "ab", "words": "1, 0x203", "blob": "0x09"})
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{4, 3, 2, 1, 0xfe, 0xff, 1, 'a', 'b', 0, 0, 0, 0, 0, 0, 0, 1, 0, 3, 2, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}
	if string(b) != string(want) {
		t.Errorf("encoded\n%x, want\n%x", b, want)
	}
	for _, tc := range []struct {
		vals map[string]string
		want string
	}{
		{map[string]string{"a": "1"}, "needs argument b (i16)"},
		{map[string]string{"a": "1", "b": "1", "flag": "true", "name": "", "words": "", "blob": "", "zz": "1"}, `has no argument "zz"`},
		{map[string]string{"a": "-1", "b": "1", "flag": "true", "name": "", "words": "1", "blob": ""}, `argument a (u32): "-1" is not a u32`},
		{map[string]string{"a": "1", "b": "40000", "flag": "true", "name": "", "words": "1", "blob": ""}, `"40000" is not an i16`},
		{map[string]string{"a": "1", "b": "1", "flag": "yes", "name": "", "words": "1", "blob": ""}, `"yes" is not a bool (true or false)`},
		{map[string]string{"a": "1", "b": "1", "flag": "true", "name": "0xzz", "words": "1", "blob": ""}, `bad hex "0xzz"`},
	} {
		if _, err := h.EncodeStrings(tc.vals); !errors.Is(err, ErrLayout) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err %v, want %q", tc.vals, err, tc.want)
		}
	}
	got := h.FormatResults([]byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 'o', 'k', 0, 0, 0xff, 1, 5, 0, 6, 0})
	if want := "sum = -2\nname = \"ok\"\nraw = 0xff01\nws = [5, 6]\n"; got != want {
		t.Errorf("FormatResults:\n%s\nwant\n%s", got, want)
	}
}

func TestLayoutSizeMismatch(t *testing.T) {
	if _, err := newHandler("x.naam", "h", 1, []bytecode.Field{{Name: "a", Type: "u32", Size: 8}}, nil); err == nil || !strings.Contains(err.Error(), "type u32 has 4 bytes, the object says 8") {
		t.Errorf("size mismatch: %v", err)
	}
}

// FuzzDecode: a reply of any bytes decodes into a struct of every kind
// of field without a panic (host.FuzzMeta does the same for a member's
// metadata).
func FuzzDecode(f *testing.F) {
	f.Add([]byte{1, 2, 3})
	f.Add(make([]byte, 40))
	f.Fuzz(func(t *testing.T, reply []byte) {
		h, err := newHandler("f.naam", "h", 16, nil, []bytecode.Field{
			{Name: "a", Type: "i16", Offset: 0, Size: 2},
			{Name: "b", Type: "bool", Offset: 2, Size: 1},
			{Name: "c", Type: "[u8; 5]", Offset: 3, Size: 5},
			{Name: "d", Type: "[u32; 3]", Offset: 8, Size: 12},
			{Name: "e", Type: "Blob", Offset: 20, Size: 4},
		})
		if err != nil {
			t.Fatal(err)
		}
		var r struct {
			A int64
			B bool
			C string
			D []uint64
			E [4]byte
		}
		if err := h.Decode(reply, &r); err != nil {
			t.Fatal(err)
		}
		_ = h.FormatResults(reply)
	})
}

// TestBytesFromOtherSlices: a [u8; N] field takes other integer slices
// element by element (range-checked), a struct field refuses them; none
// of it panics.
func TestBytesFromOtherSlices(t *testing.T) {
	h := testHandler(t, []bytecode.Field{{Name: "name", Type: "[u8; 4]", Size: 4}, {Name: "blob", Type: "P", Offset: 4, Size: 4}},
		[]bytecode.Field{{Name: "name", Type: "[u8; 4]", Size: 4}})
	b, err := h.Encode(nil, struct {
		Name []uint16
		Blob []byte
	}{[]uint16{1, 255}, nil})
	if err != nil || string(b) != "\x01\xff\x00\x00\x00\x00\x00\x00" {
		t.Errorf("[]uint16 into [u8; 4]: %x %v", b, err)
	}
	if _, err := h.Encode(nil, struct {
		Name []uint16
		Blob []byte
	}{[]uint16{256}, nil}); !errors.Is(err, ErrLayout) {
		t.Errorf("256 into a u8: %v", err)
	}
	if _, err := h.Encode(nil, struct {
		Name string
		Blob []uint16
	}{}); !errors.Is(err, ErrLayout) {
		t.Errorf("[]uint16 into a struct field: %v", err)
	}
	var r struct{ Name [4]uint16 }
	if err := h.Decode([]byte{9, 8, 7, 6}, &r); err != nil || r.Name != [4]uint16{9, 8, 7, 6} {
		t.Errorf("[u8; 4] into [4]uint16: %v %v", r, err)
	}
	big := []bytecode.Field{{Name: "x", Type: "[u8; 100000]", Size: 100000}}
	if _, err := newHandler("x.naam", "h", 1, nil, big); err == nil {
		t.Error("a 100,000-byte reply layout was accepted")
	}
}
