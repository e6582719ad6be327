package sim

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	ycsb "github.com/naam-project/naam/internal/bench/workload"
)

// PlotLatency writes the latency CDF of the answered operations as a PNG
// (or SVG, PDF, by path's extension).
func (r *Result) PlotLatency(path string) error {
	title := fmt.Sprintf("naam sim %s: %d nodes, seed %d", r.Workload, r.Nodes, r.Seed)
	return ycsb.PlotCDF(path, title, []ycsb.Series{{Mode: r.Workload + " (" + r.Placement + ")", Latency: &r.latency}})
}

// PlotPlacements writes the runs per bin of virtual time on NIC cores
// and on host cores, and the host share.
func (r *Result) PlotPlacements(path string) error {
	if len(r.Timeline) == 0 {
		return errors.New("sim: no runs to plot")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("naam sim %s: placements over virtual time (%s)", r.Workload, r.Placement)
	p.X.Label.Text = "virtual time (ms)"
	p.Y.Label.Text = "runs per bin"
	p.Y.Min = 0
	p.Add(plotter.NewGrid())
	nic := make(plotter.XYs, len(r.Timeline))
	host := make(plotter.XYs, len(r.Timeline))
	for i, b := range r.Timeline {
		x := float64(b.StartNanos) / 1e6
		nic[i] = plotter.XY{X: x, Y: float64(b.NIC)}
		host[i] = plotter.XY{X: x, Y: float64(b.Host)}
	}
	for i, s := range []struct {
		name string
		xys  plotter.XYs
	}{{"NIC cores", nic}, {"host cores", host}} {
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return fmt.Errorf("sim: %w", err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}
