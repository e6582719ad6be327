package workload

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Series is one mode's latencies for the CDF plot.
type Series struct {
	Mode    string
	Latency *Histogram
}

// PlotCDF writes a PNG (or SVG/PDF, by path's extension) of the latency
// CDF of each series: latency in µs on a log axis, the fraction of
// operations at or below it.
func PlotCDF(path, title string, series []Series) error {
	p, err := cdfPlot(title, series)
	if err != nil {
		return err
	}
	return p.Save(16*vg.Centimeter, 10*vg.Centimeter, path)
}

func cdfPlot(title string, series []Series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "latency (µs, log scale)"
	p.Y.Label.Text = "fraction of operations ≤ latency"
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.TickerFunc(logTicks125)
	p.Y.Min, p.Y.Max = 0, 1
	p.Legend.Top = false
	p.Legend.Left = false
	p.Add(plotter.NewGrid())
	drawn := 0
	for i, s := range series {
		cdf := s.Latency.CDF()
		if len(cdf) == 0 {
			continue
		}
		xys := make(plotter.XYs, 0, len(cdf)+1)
		// Start the curve at 0 just left of the fastest operation. A log
		// axis cannot show 0 µs, so 0.01 µs is the floor.
		first := math.Max(float64(cdf[0].Latency)/1e3, 0.01)
		xys = append(xys, plotter.XY{X: first, Y: 0})
		for _, pt := range cdf {
			xys = append(xys, plotter.XY{X: math.Max(float64(pt.Latency)/1e3, 0.01), Y: pt.Fraction})
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, fmt.Errorf("workload: %s: %w", s.Mode, err)
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.Mode, l)
		drawn++
	}
	if drawn == 0 {
		return nil, errors.New("workload: no latencies to plot")
	}
	return p, nil
}

// PlotThroughput writes a bar chart of each mode's operations per second,
// with its round trips per operation under its name.
func PlotThroughput(path, title string, modes []ModeResult) error {
	p, err := throughputPlot(title, modes)
	if err != nil {
		return err
	}
	return p.Save(12*vg.Centimeter, 10*vg.Centimeter, path)
}

func throughputPlot(title string, modes []ModeResult) (*plot.Plot, error) {
	if len(modes) == 0 {
		return nil, errors.New("workload: no modes to plot")
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "operations per second"
	p.Y.Min = 0
	vals := make(plotter.Values, len(modes))
	names := make([]string, len(modes))
	for i, m := range modes {
		vals[i] = m.OpsPerSec
		names[i] = fmt.Sprintf("%s\n%.2f RT/op", m.Mode, m.RoundTripsPerOp)
	}
	bars, err := plotter.NewBarChart(vals, 2*vg.Centimeter)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	bars.Color = plotutil.Color(0)
	p.Add(plotter.NewGrid(), bars)
	p.NominalX(names...)
	return p, nil
}

// logTicks125 labels 1, 2 and 5 times each power of ten in [min, max] and
// marks the other integer multiples, so that a range within one decade
// still has labels (plot.LogTicks labels powers of ten only).
func logTicks125(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); math.Pow(10, e) <= max; e++ {
		base := math.Pow(10, e)
		for m := 1.0; m < 10; m++ {
			v := m * base
			if v < min || v > max {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || m == 2 || m == 5 {
				t.Label = strconv.FormatFloat(v, 'g', -1, 64)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// WriteFigure writes both plots of runs side by side into one PNG at
// path: the latency CDF per mode on the left, throughput per mode on the
// right, titled with the workload.
func WriteFigure(path, workload string, runs []ModeRun) error {
	series := make([]Series, len(runs))
	modes := make([]ModeResult, len(runs))
	for i, r := range runs {
		series[i] = Series{Mode: r.Mode, Latency: &r.Stats.Latency}
		modes[i] = r.Stats.ModeResult(r.Mode)
	}
	cdf, err := cdfPlot(workload+": latency", series)
	if err != nil {
		return err
	}
	tp, err := throughputPlot("throughput", modes)
	if err != nil {
		return err
	}
	img := vgimg.New(30*vg.Centimeter, 11*vg.Centimeter)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: 6 * vg.Millimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 2 * vg.Millimeter}
	canvases := plot.Align([][]*plot.Plot{{cdf, tp}}, tiles, dc)
	cdf.Draw(canvases[0][0])
	tp.Draw(canvases[0][1])
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WritePlots writes both plots of runs: the latency CDF to cdfPath and
// the throughput bars to throughputPath, titled with the workload.
func WritePlots(cdfPath, throughputPath, workload string, runs []ModeRun) error {
	series := make([]Series, len(runs))
	modes := make([]ModeResult, len(runs))
	for i, r := range runs {
		series[i] = Series{Mode: r.Mode, Latency: &r.Stats.Latency}
		modes[i] = r.Stats.ModeResult(r.Mode)
	}
	if err := PlotCDF(cdfPath, workload+": latency", series); err != nil {
		return err
	}
	return PlotThroughput(throughputPath, workload+": throughput", modes)
}
