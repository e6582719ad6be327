package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// TestInstallRegions: the optional bindings of an install round-trip, are
// absent from the bytes of an install without them, and are validated.
func TestInstallRegions(t *testing.T) {
	m := &Install{Upload: 1, Total: 3, Data: []byte{1, 2, 3}, Regions: []RegionBinding{{"kv", "kv_hot"}, {"log", "log2"}}}
	b, err := AppendControl(nil, m)
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseControl(OpInstall, b)
	if err != nil || !reflect.DeepEqual(back, m) {
		t.Fatalf("round trip: %#v, %v", back, err)
	}
	if !bytes.Contains(b, []byte("\xa7regions")) {
		t.Error("no regions key")
	}

	// Without bindings: the four keys of before, and nothing else.
	plain, err := AppendControl(nil, &Install{Upload: 1, Total: 1, Data: []byte{7}})
	if err != nil {
		t.Fatal(err)
	}
	const want = "84a675706c6f616401a5746f74616c01a66f666673657400a464617461c40107"
	if hex.EncodeToString(plain) != want {
		t.Errorf("an install without bindings encodes as\n%x\nwant\n%s", plain, want)
	}
	// An empty list decodes as none.
	empty, _ := AppendControl(nil, &Install{Upload: 1, Total: 1, Data: []byte{7}, Regions: []RegionBinding{}})
	if got, err := ParseControl(OpInstall, empty); err != nil || got.(*Install).Regions != nil {
		t.Errorf("empty bindings: %#v, %v", got, err)
	}

	many := make([]RegionBinding, MaxRegionBindings+1)
	for i := range many {
		many[i] = RegionBinding{Object: string(rune('a'+i/26)) + string(rune('a'+i%26)), Region: "r"}
	}
	for _, tc := range []struct {
		name  string
		have  []RegionBinding
		off   uint64
		field string
		msg   string
	}{
		{"later chunk", []RegionBinding{{"a", "b"}}, 1, "install.regions", "only the chunk at 0 carries them"},
		{"no object", []RegionBinding{{"", "b"}}, 0, "install.regions[0].object", "empty"},
		{"no region", []RegionBinding{{"a", ""}}, 0, "install.regions[0].region", "empty"},
		{"unsorted", []RegionBinding{{"b", "x"}, {"a", "y"}}, 0, "install.regions[1].object", `"a" does not follow "b"`},
		{"twice", []RegionBinding{{"a", "x"}, {"a", "y"}}, 0, "install.regions[1].object", "sorted and unique"},
		{"too many", many, 0, "install.regions", "249 bindings, at most 248"},
	} {
		m := &Install{Upload: 1, Total: 3, Offset: tc.off, Data: []byte{1}, Regions: tc.have}
		_, err := AppendControl(nil, m)
		var werr *Error
		if !errors.As(err, &werr) || werr.Field != tc.field || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want field %s with %q", tc.name, err, tc.field, tc.msg)
		}
	}
}
