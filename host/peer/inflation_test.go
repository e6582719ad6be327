package peer

import (
	"testing"
	"time"

	"github.com/naam-project/naam/steer"
)

// TestAutoInflation: a caller whose node queues its load (a call takes
// 180 µs) probes the client idle (100 µs) and moves there; with every
// call there a run takes 550 µs, and it moves back. From then on the
// client's probes are inflated by what that stay taught (3.25×) and it
// stays at the node, until the node itself becomes slow enough (1 ms)
// that the client wins even inflated. The node's own stay taught nothing
// (180 µs, as entered).
func TestAutoInflation(t *testing.T) {
	st := newPlaceState()
	now := time.Unix(0, 0)
	for _, step := range []struct {
		what         string
		n            int
		every        time.Duration // between decisions
		node, client float64
		wantAt       steer.Location
		wantSwitches uint64
		wantInflated [2]float64 // the node's and the client's inflation after the step
	}{
		{"the first choice: the node", 1, time.Microsecond, 180e3, 360e3, steer.NIC, 0, [2]float64{1, 1}},
		{"an idle probe of the client beats the queued node", 10, time.Microsecond, 180e3, 100e3, steer.Client, 1, [2]float64{1, 1}},
		{"loaded, the client is slower: learnt after placeLearn", 2 * placeDwell, placeLearn / placeDwell, 180e3, 550e3, steer.NIC, 2, [2]float64{1, 3.25}},
		{"idle probes again: inflated, they lose", 100 * placeDwell, time.Microsecond, 180e3, 100e3, steer.NIC, 2, [2]float64{1, 3.25}},
		{"the node congests: the client wins, inflated", 10, time.Microsecond, 1e6, 100e3, steer.Client, 3, [2]float64{1, 3.25}},
		{"a stay shorter than placeLearn is learnt when it ends", 2 * placeDwell, time.Microsecond, 1e6, 2e6, steer.NIC, 4, [2]float64{1, placeMaxInflation}},
	} {
		for range step.n {
			st.choose(step.node, step.client, now)
			now = now.Add(step.every)
		}
		at, _ := st.chooser.Current()
		if sw := st.chooser.Switches(); at != step.wantAt || sw != step.wantSwitches || st.inflation != step.wantInflated {
			t.Fatalf("%s: at %v after %d switches, inflation %v; want %v, %d, %v",
				step.what, at, sw, st.inflation, step.wantAt, step.wantSwitches, step.wantInflated)
		}
	}
}

// TestAutoInflationBounds: a stay that went better than its probe said
// leaves the inflation at 1, one far worse stops at placeMaxInflation, and
// what happens after placeLearn into a stay is not learnt.
func TestAutoInflationBounds(t *testing.T) {
	for _, tc := range []struct {
		what          string
		early, late   float64 // the client's estimate before and after placeLearn into its stay
		wantInflation float64
	}{
		{"better than probed", 50e3, 50e3, 1},
		{"far worse", 100e6, 100e6, placeMaxInflation},
		{"worse only later", 100e3, 100e6, 1},
	} {
		st := newPlaceState()
		now := time.Unix(0, 0)
		st.choose(180e3, 360e3, now)
		st.choose(180e3, 100e3, now) // to the client
		for _, c := range []float64{tc.early, tc.late} {
			for range placeDwell {
				now = now.Add(placeLearn / placeDwell)
				st.choose(c*10, c, now) // held there: the node looks worse still
			}
		}
		if st.inflation[AtClient-1] != tc.wantInflation {
			t.Errorf("%s: inflation %v; want %v", tc.what, st.inflation[AtClient-1], tc.wantInflation)
		}
	}
}
