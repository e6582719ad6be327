package nicrt

import (
	"errors"
	"strings"
	"testing"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
)

// TestInstallBindsRegions: InstallOptions.Regions links an object region
// to a registered region of another name; errors name both.
func TestInstallBindsRegions(t *testing.T) {
	n := newNIC(t, Config{})
	hot := register(t, n, 1, "hot", 8, RegionOptions{})
	cold := register(t, n, 1, "cold", 8, RegionOptions{})
	register(t, n, 1, "small", 4, RegionOptions{})
	register(t, n, 1, "ro", 8, RegionOptions{})
	binaryPut(hot.Bytes(), 1)
	binaryPut(cold.Bytes(), 2)
	read := []bytecode.Region{{Name: "v", Size: 8}}
	for _, tc := range []struct {
		name    string
		regions []bytecode.Region
		code    string
		bind    map[string]string
		want    error
		wantMsg string
		value   uint64 // what the handler reads when installed
	}{
		{name: "to hot", regions: read, code: testprog.ValueAsm(0), bind: map[string]string{"v": "hot"}, value: 1},
		{name: "to cold", regions: read, code: testprog.ValueAsm(0), bind: map[string]string{"v": "cold"}, value: 2},
		{name: "missing", regions: read, code: testprog.ValueAsm(0), bind: map[string]string{"v": "nope"},
			want: ErrRegionMissing, wantMsg: `regions[0] "v" (bound to "nope") (tenant 1)`},
		{name: "unbound", regions: read, code: testprog.ValueAsm(0),
			want: ErrRegionMissing, wantMsg: `regions[0] "v" (tenant 1)`},
		{name: "too small", regions: read, code: testprog.ValueAsm(0), bind: map[string]string{"v": "small"},
			want: ErrRegionTooSmall, wantMsg: `regions[0] "v" (bound to "small"): the object needs 8 bytes, 4 are registered`},
		{name: "read-only", regions: []bytecode.Region{{Name: "v", Size: 8, Writable: true}}, code: testprog.IncrAsm, bind: map[string]string{"v": "ro"},
			want: ErrRegionReadOnly, wantMsg: `regions[0] "v" (bound to "ro")`},
		{name: "not the object's", regions: read, code: testprog.ValueAsm(0), bind: map[string]string{"v": "hot", "w": "cold"},
			want: ErrBadBinding, wantMsg: `"w" (bound to "cold") is not a region of the object`},
		{name: "two to one", regions: []bytecode.Region{{Name: "v", Size: 8}, {Name: "hot", Size: 8}}, code: testprog.ValueAsm(0), bind: map[string]string{"v": "hot"},
			want: ErrBadBinding, wantMsg: `regions "v" and "hot" would both link to "hot"`},
		{name: "swapped", regions: []bytecode.Region{{Name: "hot", Size: 8}, {Name: "cold", Size: 8}}, code: testprog.ValueAsm(0),
			bind: map[string]string{"hot": "cold", "cold": "hot"}, value: 2},
		{name: "to itself", regions: []bytecode.Region{{Name: "hot", Size: 8}}, code: testprog.ValueAsm(0), bind: map[string]string{"hot": "hot"}, value: 1},
	} {
		p, err := n.InstallWith(1, testprog.Object(t, tc.regions, testprog.Src{Name: "h", Asm: tc.code}), InstallOptions{Regions: tc.bind})
		if tc.want != nil {
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.wantMsg) {
				t.Errorf("%s: err = %v, want %v with %q", tc.name, err, tc.want, tc.wantMsg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, "h"), RequestID: 1, SrcNode: 2})
		if rep.Status != StatusOK || len(rep.Data) != 8 || u64(rep.Data) != tc.value {
			t.Errorf("%s: %+v, want the value %d", tc.name, rep, tc.value)
		}
		if err := n.Uninstall(p); err != nil {
			t.Fatal(err)
		}
	}
}
