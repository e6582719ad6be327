package bytecode

import (
	"strings"
	"testing"
)

func TestProgramLabels(t *testing.T) {
	for _, tc := range []struct {
		ids     []uint64
		sources []string
		want    []string
	}{
		{nil, nil, []string{}},
		{[]uint64{1}, []string{"kv.naam"}, []string{"kv"}},
		{[]uint64{1, 2}, []string{"dir/kv.naam", `c:\x\chase.naam`}, []string{"kv", "chase"}},
		{[]uint64{3, 5, 6}, []string{"counter.naam", "a/counter.naam", "kv"}, []string{"counter#3", "counter#5", "kv"}},
	} {
		got := ProgramLabels(tc.ids, tc.sources)
		if strings.Join(got, ",") != strings.Join(tc.want, ",") {
			t.Errorf("ProgramLabels(%v, %q) = %q, want %q", tc.ids, tc.sources, got, tc.want)
		}
	}
}
