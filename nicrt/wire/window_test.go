package wire

import (
	"math"
	"math/rand/v2"
	"testing"
)

func TestWindow(t *testing.T) {
	type step struct {
		id   uint64
		want Verdict
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"in order", []step{{1, IDNew}, {2, IDNew}, {3, IDNew}, {3, IDDuplicate}, {1, IDDuplicate}}},
		{"first id 0", []step{{0, IDNew}, {0, IDDuplicate}, {1, IDNew}}},
		{"reordered", []step{{10, IDNew}, {8, IDNew}, {9, IDNew}, {8, IDDuplicate}, {7, IDNew}, {10, IDDuplicate}}},
		{"below the first id", []step{{5000, IDNew}, {5000 - 1023, IDNew}, {5000 - 1024, IDTooOld}, {0, IDTooOld}}},
		{"edge of the window", []step{{1, IDNew}, {1024, IDNew}, {1, IDDuplicate}, {1025, IDNew}, {1, IDTooOld}, {2, IDNew}}},
		{"bits of old ids are forgotten", []step{{3, IDNew}, {3 + 1024, IDNew}, {3, IDTooOld}, {4 + 1024, IDNew}, {4, IDTooOld}, {5, IDNew}}},
		{"slide by a word boundary", []step{{63, IDNew}, {64, IDNew}, {127, IDNew}, {64 + 1024, IDNew}, {127, IDDuplicate}, {64, IDTooOld}, {65, IDNew}}},
		{"jump past the window", []step{{1, IDNew}, {2, IDNew}, {100000, IDNew}, {2, IDTooOld}, {100000 - 1023, IDNew}, {100000, IDDuplicate}}},
		{"top of the id space", []step{{math.MaxUint64 - 2000, IDNew}, {math.MaxUint64, IDNew}, {math.MaxUint64, IDDuplicate}, {math.MaxUint64 - 1, IDNew}, {math.MaxUint64 - 2000, IDTooOld}}},
		{"from 0 to the top", []step{{0, IDNew}, {math.MaxUint64, IDNew}, {0, IDTooOld}, {math.MaxUint64 - 1023, IDNew}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w Window
			for i, s := range tc.steps {
				if check := w.Check(s.id); check != s.want {
					t.Fatalf("step %d: Check(%d) = %v, want %v", i, s.id, check, s.want)
				}
				if have := w.Observe(s.id); have != s.want {
					t.Fatalf("step %d: Observe(%d) = %v, want %v", i, s.id, have, s.want)
				}
			}
		})
	}
}

// refWindow is the definition a Window implements, with a set of every id
// seen.
type refWindow struct {
	seen map[uint64]bool
	top  uint64
}

func (r *refWindow) observe(id uint64) Verdict {
	switch {
	case len(r.seen) > 0 && id <= r.top && r.top-id >= WindowSize:
		return IDTooOld
	case r.seen[id]:
		return IDDuplicate
	}
	if len(r.seen) == 0 || id > r.top {
		r.top = id
	}
	r.seen[id] = true
	return IDNew
}

// TestWindowModel: random traffic (mostly near the top, some jumps, many
// repeats) against the reference.
func TestWindowModel(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 99))
		var w Window
		ref := refWindow{seen: map[uint64]bool{}}
		next := r.Uint64N(1 << 40)
		if seed == 0 {
			next = math.MaxUint64 - 50000
		}
		for i := range 20000 {
			var id uint64
			switch k := r.IntN(100); {
			case k < 50:
				id = next
				next++
			case k < 85:
				id = next - r.Uint64N(1200) // reordered, duplicated or too old
			case k < 95:
				id = next + r.Uint64N(200) // ahead
			default:
				next += r.Uint64N(3000) // a jump
				id = next
			}
			if want, have := ref.observe(id), w.Observe(id); have != want {
				t.Fatalf("seed %d step %d: Observe(%d) = %v, want %v", seed, i, id, have, want)
			}
		}
	}
}
