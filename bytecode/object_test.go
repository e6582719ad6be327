package bytecode

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// smallSource is a key-value lookup: get(key) replies with table[key & 63].
// Slots: 0–2 context loads, 3–5 bounds check, 6–8 index, 9–10 lddw,
// 11–15 load and reply, 16–17 error exit, 18–19 the put handler, which is
// also get's access function (it declares no ranges).
// (The reply is not bounds-checked: the object only has to be well formed.)
const smallSource = `ldxdw %r2, [%r1+0]
ldxdw %r3, [%r1+8]
ldxdw %r4, [%r1+16]
mov %r0, %r2
add %r0, 8
jgt %r0, %r3, +10
ldxdw %r5, [%r2]
and %r5, 63
lsh %r5, 3
lddw %r6, region[0]
add %r6, %r5
ldxdw %r7, [%r6]
stxdw [%r4], %r7
mov %r0, 8
exit
mov %r0, -1
exit
mov %r0, 0
exit
`

// smallObject returns a fresh valid object; tests may change it freely.
func smallObject(t testing.TB) *Object {
	t.Helper()
	return &Object{
		Magic:   ObjectMagic,
		Version: ObjectVersion,
		Source:  "kv.naam",
		Code:    assembleBytes(t, smallSource),
		Handlers: []Handler{
			{
				Name: "get", ID: 1, Entry: 0,
				Args:      []Field{{Name: "key", Type: "u64", Offset: 0, Size: 8}},
				Results:   []Field{{Name: "value", Type: "u64", Offset: 0, Size: 8}},
				MaxRanges: 1, Access: 18,
			},
			{
				Name: "put", ID: 2, Entry: 18,
				Args: []Field{
					{Name: "key", Type: "u64", Offset: 0, Size: 8},
					{Name: "value", Type: "[u8; 8]", Offset: 8, Size: 8},
					{Name: "meta", Type: "Meta", Offset: 16, Size: 12},
				},
			},
		},
		Regions: []Region{{Name: "table", Size: 512, Writable: true}},
		Lines: []Line{
			{Insn: 0, File: "kv.naam", Line: 3, Col: 5},
			{Insn: 3, File: "kv.naam", Line: 4, Col: 2},
			{Insn: 6, File: "kv.naam", Line: 5},
			{Insn: 16, File: "kv.naam", Line: 7, Col: 9},
			{Insn: 18},
		},
		Sources: []SourceFile{{Name: "kv.naam", Text: "handler get(key u64) -> u64 {\n  ...\n}\n"}},
	}
}

func TestObjectRoundTrip(t *testing.T) {
	tests := map[string]*Object{
		"small": smallObject(t),
		"minimal": {
			Magic: ObjectMagic, Version: ObjectVersion,
			Code: assembleBytes(t, "mov %r0, 0\nexit\n"),
		},
	}
	for name, have := range tests {
		t.Run(name, func(t *testing.T) {
			b, err := have.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			got, err := UnmarshalObject(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, have) {
				t.Errorf("round trip changed the object:\ngot  %+v\nwant %+v", got, have)
			}
			again, err := got.Marshal()
			if err != nil || !bytes.Equal(again, b) {
				t.Errorf("marshalling the decoded object gave other bytes (%v)", err)
			}
		})
	}
}

func TestObjectDeterministic(t *testing.T) {
	a, b := smallObject(t), smallObject(t)
	ba, err := a.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if bb := must(b.Marshal()); !bytes.Equal(ba, bb) {
			t.Fatalf("equal objects marshal differently:\n% x\n% x", ba, bb)
		}
	}
	// Empty and nil lists are the same object.
	code := assembleBytes(t, "mov %r0, 0\nexit\n")
	withNil := &Object{
		Magic: ObjectMagic, Version: ObjectVersion, Code: code,
		Handlers: []Handler{{Name: "h", ID: 9}},
	}
	withEmpty := &Object{
		Magic: ObjectMagic, Version: ObjectVersion, Code: code,
		Handlers: []Handler{{Name: "h", ID: 9, Args: []Field{}, Results: []Field{}}},
		Regions:  []Region{}, Lines: []Line{}, Sources: []SourceFile{},
	}
	if bn, be := must(withNil.Marshal()), must(withEmpty.Marshal()); !bytes.Equal(bn, be) {
		t.Errorf("nil and empty lists marshal differently:\n% x\n% x", bn, be)
	}
}

// The bytes of smallObject are fixed: a change to them is a format change
// (regenerate with go test ./bytecode -run Golden -update, and say so in
// spec/object.md).
func TestObjectGolden(t *testing.T) {
	got := must(smallObject(t).Marshal())
	path := filepath.Join("testdata", "small.nobj")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("Marshal differs from %s (run with -update if the change is intended):\ngot  % x\nwant % x", path, got, want)
	}
	o, err := UnmarshalObject(want)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, smallObject(t)) {
		t.Errorf("%s decodes to %+v", path, o)
	}
}

// TestObjectVersion1 reads a file of the previous version, written before
// handlers had access functions: it decodes to the same object without
// them.
func TestObjectVersion1(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "small-v1.nobj"))
	if err != nil {
		t.Fatal(err)
	}
	o, err := UnmarshalObject(b)
	if err != nil {
		t.Fatal(err)
	}
	want := smallObject(t)
	want.Version = ObjectVersionNoAccess
	want.Handlers[0].MaxRanges, want.Handlers[0].Access = 0, 0
	if !reflect.DeepEqual(o, want) {
		t.Errorf("small-v1.nobj decodes to %+v", o)
	}
}

func TestObjectInvalid(t *testing.T) {
	tests := []struct {
		name   string
		change func(o *Object)
		want   string // the whole message, or its start when it ends in "…"
	}{
		{"magic", func(o *Object) { o.Magic = "naam-ob" }, `object: magic: "naam-ob" is not "naam-obj"`},
		{"version", func(o *Object) { o.Version = 3 }, `object: version: 3 is not supported (only 1 or 2)`},
		{"version 1 with access", func(o *Object) { o.Version = 1 }, `object: handlers[0].max_ranges: 1, but version 1 objects have no access functions`},
		{"access without ranges", func(o *Object) { o.Handlers[0].MaxRanges = 0 }, `object: handlers[0].access: slot 18, but max_ranges is 0 (no access function)`},
		{"too many ranges", func(o *Object) { o.Handlers[0].MaxRanges = 65 }, `object: handlers[0].max_ranges: 65 is outside 0..64`},
		{"access past end", func(o *Object) { o.Handlers[0].Access = 20 }, `object: handlers[0].access: slot 20 is outside the code (0..19)`},
		{"access in lddw", func(o *Object) { o.Handlers[0].Access = 10 }, `object: handlers[0].access: slot 10 is the second slot of lddw`},
		{"code empty", func(o *Object) { o.Code = nil }, `object: code: empty program`},
		{"code truncated", func(o *Object) { o.Code = o.Code[:len(o.Code)-1] }, `object: code: truncated instruction stream: 159 bytes is not a multiple of 8`},
		{"code invalid", func(o *Object) { o.Code[3*8] = 0xff }, `object: code: insn 3: unknown opcode 0xff`},
		{"region index", func(o *Object) { o.Code[9*8+4] = 1 }, `object: code: insn 9: lddw region[1], but the object has 1 regions`},
		{"no regions", func(o *Object) { o.Regions = nil }, `object: code: insn 9: lddw region[0], but the object has 0 regions`},
		{"handler name empty", func(o *Object) { o.Handlers[1].Name = "" }, `object: handlers[1].name: empty`},
		{"handler name twice", func(o *Object) { o.Handlers[1].Name = "get" }, `object: handlers[1].name: "get" defined twice (first at handlers[0])`},
		{"handler id twice", func(o *Object) { o.Handlers[1].ID = 1 }, `object: handlers[1].id: 1 used twice (first at handlers[0])`},
		{"entry negative", func(o *Object) { o.Handlers[0].Entry = -1 }, `object: handlers[0].entry: slot -1 is outside the code (0..19)`},
		{"entry past end", func(o *Object) { o.Handlers[1].Entry = 20 }, `object: handlers[1].entry: slot 20 is outside the code (0..19)`},
		{"entry in lddw", func(o *Object) { o.Handlers[1].Entry = 10 }, `object: handlers[1].entry: slot 10 is the second slot of lddw`},
		{"region name empty", func(o *Object) { o.Regions[0].Name = "" }, `object: regions[0].name: empty`},
		{"region name twice", func(o *Object) { o.Regions = append(o.Regions, o.Regions[0]) }, `object: regions[1].name: "table" defined twice (first at regions[0])`},
		{"region size 0", func(o *Object) { o.Regions[0].Size = 0 }, `object: regions[0].size: 0 is outside 1..4294967295`},
		{"region size 2^32", func(o *Object) { o.Regions[0].Size = 1 << 32 }, `object: regions[0].size: 4294967296 is outside 1..4294967295`},
		{"too many regions", func(o *Object) {
			for i := range MaxRegions {
				o.Regions = append(o.Regions, Region{Name: fmt.Sprint("r", i), Size: 1})
			}
		}, `object: regions: 249 regions, at most 248 are allowed`},
		{"line outside", func(o *Object) { o.Lines[4].Insn = 20 }, `object: lines[4].insn: slot 20 is outside the code (0..19)`},
		{"line in lddw", func(o *Object) { o.Lines[2].Insn = 10 }, `object: lines[2].insn: slot 10 is the second slot of lddw`},
		{"lines unsorted", func(o *Object) { o.Lines[2].Insn = 1 }, `object: lines[2].insn: slot 1 does not follow lines[1].insn (3): …`},
		{"lines repeated", func(o *Object) { o.Lines[1].Insn = 0 }, `object: lines[1].insn: slot 0 does not follow lines[0].insn (0): …`},
		{"line negative", func(o *Object) { o.Lines[0].Line = -3 }, `object: lines[0].line: -3 is negative`},
		{"col negative", func(o *Object) { o.Lines[0].Col = -1 }, `object: lines[0].col: -1 is negative`},
		{"line without file", func(o *Object) { o.Lines[0].File = "" }, `object: lines[0].file: empty`},
		{"line 0 with file", func(o *Object) { o.Lines[4].File = "kv.naam" }, `object: lines[4]: line 0 (no position) with a file or column`},
		{"source name twice", func(o *Object) { o.Sources = append(o.Sources, o.Sources[0]) }, `object: sources[1].name: "kv.naam" defined twice (first at sources[0])`},
		{"field name empty", func(o *Object) { o.Handlers[0].Args[0].Name = "" }, `object: handlers[0].args[0].name: empty`},
		{"field name twice", func(o *Object) { o.Handlers[1].Args[1].Name = "key" }, `object: handlers[1].args[1].name: "key" defined twice (first at args[0])`},
		{"field size", func(o *Object) { o.Handlers[0].Results[0].Type = "u32" }, `object: handlers[0].results[0].type: u32 is 4 bytes, but size is 8`},
		{"array size", func(o *Object) { o.Handlers[1].Args[1].Type = "[u16; 8]" }, `object: handlers[1].args[1].type: [u16; 8] is 16 bytes, but size is 8`},
		{"nested array size", func(o *Object) { o.Handlers[1].Args[1].Type = "[[u8; 2]; 2]" }, `object: handlers[1].args[1].type: [[u8; 2]; 2] is 4 bytes, but size is 8`},
		{"bad type", func(o *Object) { o.Handlers[0].Args[0].Type = "*u8" }, `object: handlers[0].args[0].type: "*u8" is not a type (want u8…u64, i8…i64, bool, [T; N] or a struct name)`},
		{"array syntax", func(o *Object) { o.Handlers[1].Args[1].Type = "[u8;8]" }, `object: handlers[1].args[1].type: "[u8;8]" is not a type (arrays are written [T; N])`},
		{"array length", func(o *Object) { o.Handlers[1].Args[1].Type = "[u8; 08]" }, `object: handlers[1].args[1].type: "[u8; 08]": array length "08" is not a decimal number below 2^32`},
		{"array too large", func(o *Object) { o.Handlers[1].Args[1].Type = "[[S; 65536]; 65537]" }, `object: handlers[1].args[1].type: "[[S; 65536]; 65537]": type has more than 2^32 elements`},
		{"empty array with size", func(o *Object) { o.Handlers[1].Args[1].Type = "[S; 0]" }, `object: handlers[1].args[1].type: [S; 0] is 0 bytes, but size is 8`},
		{"struct of 0 bytes", func(o *Object) { o.Handlers[1].Args[2].Size = 0 }, `object: handlers[1].args[2].type: Meta cannot be 0 bytes`},
		{"struct array size", func(o *Object) { o.Handlers[1].Args[2].Type = "[Meta; 5]" }, `object: handlers[1].args[2].type: size 12 is not a multiple of the 5 elements of [Meta; 5]`},
		{"field past 2^32", func(o *Object) { o.Handlers[1].Args[2].Offset = 1<<32 - 4 }, `object: handlers[1].args[2].offset: field ends at byte 4294967304, past 2^32`},
		{"fields overlap", func(o *Object) { o.Handlers[1].Args[0].Offset = 12 }, `object: handlers[1].args[1]: "value" (bytes 8..16) overlaps args[0] "key" (bytes 12..20)`},
		{"fields overlap out of order", func(o *Object) { o.Handlers[1].Args[2].Offset = 4 }, `object: handlers[1].args[2]: "meta" (bytes 4..16) overlaps args[0] "key" (bytes 0..8)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := smallObject(t)
			tt.change(o)
			err := o.Validate()
			checkObjectError(t, err, tt.want)
			if _, err := o.Marshal(); err == nil {
				t.Error("Marshal accepted an invalid object")
			}
		})
	}
}

func checkObjectError(t *testing.T, err error, want string) {
	t.Helper()
	var oerr *ObjectError
	if !errors.As(err, &oerr) {
		t.Fatalf("error %v (%T) is not an *ObjectError", err, err)
	}
	if prefix, ok := strings.CutSuffix(want, "…"); ok {
		if !strings.HasPrefix(err.Error(), prefix) {
			t.Errorf("error\n%s\ndoes not start with\n%s", err, prefix)
		}
	} else if err.Error() != want {
		t.Errorf("error\n%s\nwant\n%s", err, want)
	}
}

// Zero-sized fields may sit anywhere; fields may leave gaps and come in any order.
func TestObjectFieldsValid(t *testing.T) {
	o := smallObject(t)
	o.Handlers[1].Args = []Field{
		{Name: "c", Type: "[[i16; 3]; 2]", Offset: 20, Size: 12},
		{Name: "a", Type: "bool", Offset: 0, Size: 1},
		{Name: "empty", Type: "[u64; 0]", Offset: 0, Size: 0},
		{Name: "b", Type: "[Pair; 2]", Offset: 4, Size: 16},
		{Name: "nothing", Type: "[Pair; 0]", Offset: 4, Size: 0},
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestObjectCodeError(t *testing.T) {
	o := smallObject(t)
	o.Code[5*8] = 0xff
	var ierr *InsnError
	if err := o.Validate(); !errors.As(err, &ierr) || ierr.Insn != 5 {
		t.Errorf("Validate = %v, want an *InsnError for slot 5 inside", err)
	}
}

func TestUnmarshalObjectMalformed(t *testing.T) {
	good := must(smallObject(t).Marshal())
	tests := []struct {
		name string
		have []byte
		want string
	}{
		{"empty", nil, "object: malformed msgpack: unexpected end of data at byte 0"},
		{"truncated", good[:len(good)-1], "object: malformed msgpack: byte …"},
		{"trailing", append(append([]byte{}, good...), 0xc0), "object: malformed msgpack: 1 bytes of trailing data after the object"},
		{"not a map", []byte{0x93, 1, 2, 3}, "object: malformed msgpack: …"},
		{"huge array", []byte{0x81, 0xa8, 'h', 'a', 'n', 'd', 'l', 'e', 'r', 's', 0xdd, 0xff, 0xff, 0xff, 0xff}, "object: malformed msgpack: byte 10: 4294967295 elements claimed but only 0 bytes left"},
		{"huge string", []byte{0x81, 0xa6, 's', 'o', 'u', 'r', 'c', 'e', 0xdb, 0xff, 0xff, 0xff, 0xff, 'x'}, "object: malformed msgpack: byte 8: value of 4294967295 bytes runs past the end (1 left)"},
		{"deep", bytes.Repeat([]byte{0x91}, 20), "object: malformed msgpack: byte 7: nested deeper than 8 levels"},
		{"0xc1", []byte{0xc1}, "object: malformed msgpack: byte 0: 0xc1 is not a msgpack type"},
		{"unknown field", []byte{0x81, 0xa3, 'f', 'o', 'o', 0x01}, `object: malformed msgpack: msgpack: unknown field "foo"`},
		{"wrong type", []byte{0x81, 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0xa1, 'x'}, "object: malformed msgpack: msgpack: invalid code=a1 decoding …"},
		{"valid msgpack, invalid object", []byte{0x80}, `object: magic: "" is not "naam-obj"`},
		{"version past uint32", []byte{0x81, 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0xcf, 0, 0, 0, 1, 0, 0, 0, 1}, "object: malformed msgpack: object.version: 4294967297 does not fit uint32"},
		{"negative version", []byte{0x81, 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0xff}, "object: malformed msgpack: object.version: -1 does not fit uint32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := UnmarshalObject(tt.have)
			if o != nil {
				t.Errorf("UnmarshalObject returned an object: %+v", o)
			}
			checkObjectError(t, err, tt.want)
		})
	}
}

func TestObjectPosition(t *testing.T) {
	o := smallObject(t)
	tests := []struct {
		insn int
		want string // "" when there is no position
	}{
		{-1, ""}, {0, "kv.naam:3:5"}, {2, "kv.naam:3:5"}, {3, "kv.naam:4:2"},
		{10, "kv.naam:5"}, {15, "kv.naam:5"}, {16, "kv.naam:7:9"}, {17, "kv.naam:7:9"}, {18, ""}, {19, ""}, {20, ""},
	}
	for _, tt := range tests {
		pos, ok := o.Position(tt.insn)
		if got := pos.String(); ok != (tt.want != "") || ok && got != tt.want {
			t.Errorf("Position(%d) = %s, %v, want %q", tt.insn, got, ok, tt.want)
		}
	}
	o.Lines = o.Lines[1:]
	if pos, ok := o.Position(1); ok {
		t.Errorf("Position(1) before the first line entry = %v", pos)
	}
}

func TestObjectInsns(t *testing.T) {
	o := smallObject(t)
	insns, err := o.Insns()
	if err != nil {
		t.Fatal(err)
	}
	if _, total := Slots(insns); total != 20 {
		t.Errorf("%d slots, want 20", total)
	}
	if got := must(Encode(insns)); !bytes.Equal(got, o.Code) {
		t.Error("Insns does not encode back to Code")
	}
}

// FuzzUnmarshalObject: UnmarshalObject never panics, and an object it
// accepts marshals to bytes that decode to the same object and marshal to
// themselves.
func FuzzUnmarshalObject(f *testing.F) {
	f.Add(must(smallObject(f).Marshal()))
	minimal := &Object{Magic: ObjectMagic, Version: ObjectVersion, Code: assembleBytes(f, "mov %r0, 0\nexit\n")}
	f.Add(must(minimal.Marshal()))
	f.Add([]byte{0x80})
	f.Add([]byte{0x98, 0xa8, 'n', 'a', 'a', 'm', '-', 'o', 'b', 'j', 1, 0xa0, 0xc4, 8, 0xb7, 0, 0, 0, 0, 0, 0, 0, 0xc0, 0x90, 0x90, 0x90, 0x90})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, err := UnmarshalObject(b)
		if err != nil {
			var oerr *ObjectError
			if o != nil || !errors.As(err, &oerr) {
				t.Fatalf("UnmarshalObject = %v, %v (%T)", o, err, err)
			}
			return
		}
		again, err := o.Marshal()
		if err != nil {
			t.Fatalf("Marshal of an accepted object: %v", err)
		}
		o2, err := UnmarshalObject(again)
		if err != nil {
			t.Fatalf("UnmarshalObject of Marshal output: %v", err)
		}
		if !reflect.DeepEqual(o, o2) {
			t.Fatalf("round trip changed the object:\n%+v\n%+v", o, o2)
		}
		if third := must(o2.Marshal()); !bytes.Equal(third, again) {
			t.Fatalf("Marshal is not stable:\n% x\n% x", again, third)
		}
	})
}
