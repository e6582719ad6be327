package host

import (
	"strings"
	"testing"

	"github.com/naam-project/naam/nicrt/wire"
)

// TestCallerMetrics: a node's calls to a peer are counted by where they
// ran, at the node or at the caller.
func TestCallerMetrics(t *testing.T) {
	a := startDemo(t, Config{Name: "server"})
	b := startDemo(t, Config{Name: "caller"})
	ctx := testCtx(t)
	p, err := b.Dial(ctx, a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	if err := p.AddObject(demoObject(t), wire.InstallOptions{}); err != nil {
		t.Fatal(err)
	}
	var v uint64
	for i, pl := range []Placement{AtNode, AtClient, AtClient} {
		p.SetPlacement(pl)
		if err := p.Call(ctx, "get", uint64(i), &v); err != nil {
			t.Fatal(err)
		}
		if err := p.Call(ctx, "incr", struct{ Slot, By uint64 }{1, 1}, &v); err != nil {
			t.Fatal(err)
		}
	}
	text := scrapeMetrics(t, b)
	labels := func(h, pl string) string {
		s := `handler="demo.` + h + `",node="caller",peer="` + p.Addr().String() + `"`
		if pl != "" {
			s += `,placement="` + pl + `"`
		}
		return s
	}
	for _, want := range []string{
		`naam_caller_placements_total{` + labels("get", "node") + `} 1`,
		`naam_caller_placements_total{` + labels("get", "client") + `} 2`,
		`naam_caller_placements_total{` + labels("incr", "node") + `} 3`,
		`naam_caller_placements_total{` + labels("incr", "client") + `} 0`,
		`naam_caller_placement_not_at_client_total{` + labels("incr", "") + `} 2`,
		`naam_caller_client_round_trips_total{` + labels("get", "") + `} 2`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %s", want)
		}
	}
	if t.Failed() {
		t.Logf("%s", text)
	}
}
