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
