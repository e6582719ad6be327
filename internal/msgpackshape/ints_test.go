package msgpackshape

import (
	"bytes"
	"strings"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

type inner struct {
	ID   uint32 `msgpack:"id"`
	Name string `msgpack:"name"`
}

type outer struct {
	Small  uint8            `msgpack:"small"`
	Signed int16            `msgpack:"signed"`
	Big    uint64           `msgpack:"big"`
	Inner  inner            `msgpack:"inner"`
	List   []inner          `msgpack:"list"`
	Words  []uint16         `msgpack:"words"`
	ByName map[string]int32 `msgpack:"by_name"`
	Ptr    *inner           `msgpack:"ptr"`
	Skip   uint8            `msgpack:"-"`
	Plain  uint8
	Blob   []byte  `msgpack:"blob"`
	Float  float64 `msgpack:"float"`
}

func encode(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestCheckInts(t *testing.T) {
	tests := []struct {
		name string
		have any    // what the sender encodes
		want string // substring of the error; "" accepts
	}{
		{"all in range", map[string]any{"small": 255, "signed": -32768, "big": uint64(1<<64 - 1),
			"inner": map[string]any{"id": uint32(1<<32 - 1), "name": "x"}, "list": []any{map[string]any{"id": 7}},
			"words": []any{65535}, "by_name": map[string]any{"a": -5}, "Plain": 9, "blob": []byte{1, 2}, "float": 1.5}, ""},
		{"uint8 over", map[string]any{"small": 256}, "x.small: 256 does not fit uint8"},
		{"uint8 negative", map[string]any{"small": -1}, "x.small: -1 does not fit uint8"},
		{"int16 under", map[string]any{"signed": -32769}, "x.signed: -32769 does not fit int16"},
		{"int16 over", map[string]any{"signed": 32768}, "x.signed: 32768 does not fit int16"},
		{"uint64 negative", map[string]any{"big": int64(-1)}, "x.big: -1 does not fit uint64"},
		{"nested struct", map[string]any{"inner": map[string]any{"id": uint64(1<<32 + 5)}}, "x.inner.id: 4294967301 does not fit uint32"},
		{"slice of structs", map[string]any{"list": []any{map[string]any{"id": 1}, map[string]any{"id": uint64(1 << 40)}}}, "x.list[1].id: 1099511627776 does not fit uint32"},
		{"slice of words", map[string]any{"words": []any{1, 70000}}, "x.words[1]: 70000 does not fit uint16"},
		{"map values", map[string]any{"by_name": map[string]any{"k": int64(1 << 31)}}, `x.by_name["k"]: 2147483648 does not fit int32`},
		{"through a pointer", map[string]any{"ptr": map[string]any{"id": int64(-3)}}, "x.ptr.id: -3 does not fit uint32"},
		{"untagged field", map[string]any{"Plain": 300}, "x.Plain: 300 does not fit uint8"},
		{"skipped field is the decoder's", map[string]any{"-": 300}, ""},
		{"unknown key is the decoder's", map[string]any{"other": uint64(1 << 40)}, ""},
		{"ints inside a skipped value", map[string]any{"other": []any{uint64(1 << 40), -1, map[string]any{"a": 1}}, "small": 1}, ""},
	}
	for _, tt := range tests {
		b := encode(t, tt.have)
		if err := Check(b, 8, "x"); err != nil {
			t.Fatalf("%s: Check: %v", tt.name, err)
		}
		var o outer
		err := CheckInts(b, &o, "x")
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error containing %q", tt.name, err, tt.want)
		}
	}
}

// FuzzCheckInts: whatever Check accepts, CheckInts never panics, and
// when it accepts, the decoder's integers are the encoded ones: decoding
// the same bytes into an all-int64 twin gives the same values.
func FuzzCheckInts(f *testing.F) {
	f.Add(encode(&testing.T{}, map[string]any{"small": 1, "list": []any{map[string]any{"id": 2}}}))
	f.Add(encode(&testing.T{}, map[string]any{"small": 300}))
	f.Add([]byte{0x81, 0xa5, 's', 'm', 'a', 'l', 'l', 0xd0, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if Check(b, 8, "x") != nil {
			return
		}
		var o outer
		if CheckInts(b, &o, "x") != nil {
			return
		}
		type wide struct {
			Small  int64 `msgpack:"small"`
			Signed int64 `msgpack:"signed"`
		}
		var narrow outer
		var w wide
		if msgpack.Unmarshal(b, &narrow) != nil || msgpack.Unmarshal(b, &w) != nil {
			return
		}
		if int64(narrow.Small) != w.Small || int64(narrow.Signed) != w.Signed {
			t.Fatalf("accepted, but the decoder cut small %d→%d or signed %d→%d", w.Small, narrow.Small, w.Signed, narrow.Signed)
		}
	})
}
