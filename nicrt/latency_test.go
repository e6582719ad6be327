package nicrt

import (
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt/wire"
)

func TestRunTimesBuckets(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {1, 0}, {249, 0}, {250, 1}, {499, 1}, {500, 2}, {999, 2}, {1000, 3},
		{4095 * time.Microsecond, 14}, {4096 * time.Microsecond, 15}, {time.Hour, 15},
	} {
		var r runTimes
		r.observe(tc.d)
		s := r.snapshot()
		if s.Counts[tc.want] != 1 || s.Sum != tc.d {
			t.Errorf("%v: %+v, want bucket %d", tc.d, s, tc.want)
		}
		if b := LatencyBound(tc.want); tc.want < LatencyBuckets-1 && tc.d >= b {
			t.Errorf("%v is not below bucket %d's bound %v", tc.d, tc.want, b)
		}
		if tc.want > 0 && tc.d < LatencyBound(tc.want-1) {
			t.Errorf("%v belongs below bucket %d", tc.d, tc.want)
		}
	}
}

func TestHandlerRunTimesCounted(t *testing.T) {
	n := newNIC(t, Config{})
	r, err := n.Register(1, "counters", 64, RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		rep := n.Call(&Message{Tenant: 1, Handler: HandlerFetchAdd, Payload: wire.AppendFetchAdd(nil, r.Ref(), 0, 1)})
		if rep.Status != StatusOK {
			t.Fatal(rep)
		}
	}
	hs, _ := n.HandlerStats(HandlerFetchAdd)
	total := uint64(0)
	for _, c := range hs.RunTimes.Counts {
		total += c
	}
	if total != 5 || hs.RunTimes.Sum <= 0 {
		t.Errorf("run times %+v after 5 runs", hs.RunTimes)
	}
}
