package steer

import (
	"math"
	"testing"
)

func TestChooserHysteresis(t *testing.T) {
	inf := Unavailable
	type step struct {
		costs Costs
		want  Location
		sw    bool
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first takes the cheapest", []step{{Costs{inf, 10, 5}, Host, false}}},
		{"ties go to the lower location", []step{{Costs{5, 5, 5}, Client, false}}},
		{"stays within the margin", []step{
			{Costs{inf, 10, 9}, Host, false},
			{Costs{inf, 8, 9}, Host, false},   // 8 is not < 9 × 0.8
			{Costs{inf, 7.3, 9}, Host, false}, // 7.3 > 7.2
			{Costs{inf, 7.1, 9}, NIC, true},   // 7.1 < 7.2
			{Costs{inf, 7.1, 6}, NIC, false},  // 6 > 5.68
			{Costs{inf, 7.1, 5}, Host, true},
		}},
		{"leaves an option that became unavailable", []step{
			{Costs{1, 10, 10}, Client, false},
			{Costs{inf, 10, 10}, NIC, true},
			{Costs{1, 10, 10}, Client, true},
		}},
	}
	for _, tt := range tests {
		c := NewChooser(Config{ProbeEvery: -1})
		for i, s := range tt.steps {
			d, ok := c.Choose(s.costs)
			if !ok || d.Location != s.want || d.Switched != s.sw || d.Probe {
				t.Errorf("%s: step %d: %+v %v, want %v switched=%v", tt.name, i, d, ok, s.want, s.sw)
			}
		}
	}
}

// TestChooserDwell: after a switch the choice holds for MinDwell
// decisions, however cheap the other option looks, unless the current
// one becomes unavailable.
func TestChooserDwell(t *testing.T) {
	c := NewChooser(Config{ProbeEvery: -1, MinDwell: 3})
	steps := []struct {
		costs Costs
		want  Location
	}{
		{Costs{10, 1, Unavailable}, NIC},
		{Costs{1, 10, Unavailable}, Client}, // the first switch is not held back
		{Costs{10, 1, Unavailable}, Client}, // 1 decision after it
		{Costs{10, 1, Unavailable}, Client},
		{Costs{10, 1, Unavailable}, Client}, // 3
		{Costs{10, 1, Unavailable}, NIC},
		{Costs{Unavailable, 1, 5}, NIC},
		{Costs{Unavailable, Unavailable, 5}, Host}, // unavailable: at once
	}
	for i, s := range steps {
		d, _ := c.Choose(s.costs)
		if d.Location != s.want {
			t.Errorf("step %d: %v, want %v", i, d.Location, s.want)
		}
	}
	if c.Switches() != 3 {
		t.Errorf("%d switches, want 3", c.Switches())
	}
}

// TestChooserDwellGrows: switches that follow each other within twice
// the dwell double it, up to MaxDwell; a long stay halves it again.
func TestChooserDwellGrows(t *testing.T) {
	c := NewChooser(Config{ProbeEvery: -1, MinDwell: 2, MaxDwell: 8})
	a, b := Costs{1, 10, Unavailable}, Costs{10, 1, Unavailable}
	c.Choose(a)
	c.Choose(b) // the first switch
	var dwells []uint64
	for range 40 {
		// The cheaper option is always the other one: the worst case.
		if loc, _ := c.Current(); loc == Client {
			c.Choose(b)
		} else {
			c.Choose(a)
		}
		dwells = append(dwells, c.Dwell())
	}
	if c.Dwell() != 8 {
		t.Errorf("dwell %d after oscillating, want 8: %v", c.Dwell(), dwells)
	}
	switches := c.Switches()
	loc, _ := c.Current()
	same := a
	if loc == NIC {
		same = b
	}
	for range 4*8 + 1 {
		c.Choose(same)
	}
	if c.Dwell() != 4 || c.Switches() != switches {
		t.Errorf("dwell %d after a long stay, want 4; %d switches, want %d", c.Dwell(), c.Switches(), switches)
	}
}

// TestChooserScaleProbes: an option estimated k times as costly is
// probed every k × ProbeEvery decisions (k at most 4).
func TestChooserScaleProbes(t *testing.T) {
	for _, tc := range []struct {
		other float64
		every int
	}{{1.5, 8}, {3, 12}, {2.5, 12}, {100, 16}} {
		c := NewChooser(Config{ProbeEvery: 4, ScaleProbes: true})
		var at []int
		for i := 1; i <= 3*tc.every; i++ {
			if d, _ := c.Choose(Costs{Unavailable, 1, tc.other}); d.Probe {
				at = append(at, i)
			}
		}
		if len(at) != 3 || at[0] != tc.every || at[1] != 2*tc.every {
			t.Errorf("other at %v: probes at %v, want every %d", tc.other, at, tc.every)
		}
	}
}

func TestChooserNothingAvailable(t *testing.T) {
	c := NewChooser(Config{})
	if _, ok := c.Choose(Costs{Unavailable, Unavailable, Unavailable}); ok {
		t.Fatal("chose among no options")
	}
	if _, has := c.Current(); has {
		t.Fatal("a choice without options")
	}
}

func TestChooserProbes(t *testing.T) {
	c := NewChooser(Config{ProbeEvery: 4})
	var probes, nic int
	for i := 1; i <= 40; i++ {
		d, _ := c.Choose(Costs{Unavailable, 9, 5})
		if d.Probe {
			probes++
			if i%4 != 0 || d.Location != NIC {
				t.Errorf("message %d: probe %+v", i, d)
			}
		}
		if d.Location == NIC {
			nic++
		}
		if cur, _ := c.Current(); cur != Host {
			t.Fatalf("a probe changed the choice to %v", cur)
		}
	}
	if probes != 10 || nic != 10 {
		t.Errorf("%d probes, %d on the NIC; want 10 each", probes, nic)
	}
	// A single option has nothing to probe.
	c = NewChooser(Config{ProbeEvery: 1})
	for range 5 {
		if d, _ := c.Choose(Costs{Unavailable, Unavailable, 3}); d.Probe || d.Location != Host {
			t.Fatalf("probe with one option: %+v", d)
		}
	}
}

func TestEWMA(t *testing.T) {
	var e EWMA
	if e.Or(7) != 7 {
		t.Fatal("Or before a sample")
	}
	e.Add(10, 0.5)
	e.Add(20, 0.5)
	if v, ok := e.Value(); !ok || v != 15 {
		t.Fatalf("value %v %v, want 15", v, ok)
	}
	e.Add(0, 1)
	if v := e.Or(7); v != 0 {
		t.Fatalf("alpha 1: %v", v)
	}
}

func TestLocationNames(t *testing.T) {
	for l := Location(0); l < NumLocations; l++ {
		p, err := ParseLocation(l.String())
		if err != nil || p != l {
			t.Errorf("%v: %v %v", l, p, err)
		}
	}
	if _, err := ParseLocation("gpu"); err == nil {
		t.Error("parsed gpu")
	}
	if s := Location(9).String(); s != "Location(9)" {
		t.Error(s)
	}
	if !math.IsInf(Unavailable, 1) {
		t.Error("Unavailable is not +Inf")
	}
}
