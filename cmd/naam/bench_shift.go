package main

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"image/color"
	"io"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/spf13/pflag"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
)

//go:embed shift.naam
var shiftSource []byte

// shiftTenant is the tenant of naam bench shift's calls.
const shiftTenant = 2

// Limits of naam bench shift.
const (
	maxShiftPhase    = 10 * time.Second
	maxShiftCalls    = 1 << 22 // tickets the bench tracks: a bitmap of 512 KiB
	maxShiftInFlight = 4096
	// shiftSampleEvery is how often the placements are sampled; shift
	// and return are judged over windows of at least shiftWindow and
	// shiftWindowDecisions placements.
	shiftSampleEvery     = 500 * time.Microsecond
	shiftWindow          = time.Millisecond
	shiftWindowDecisions = 16
	// shiftThroughputWindow is the window of the lowest throughput.
	shiftThroughputWindow = 10 * time.Millisecond
)

// shiftFlags are naam bench shift's own settings.
type shiftFlags struct {
	warmup, steady, congested, after time.Duration
	load                             float64
	bin                              time.Duration
	calls                            int
}

func (f *shiftFlags) register(fl *pflag.FlagSet) {
	fl.DurationVar(&f.warmup, "shift-warmup", 100*time.Millisecond, "shift: load before the steady phase is measured")
	fl.DurationVar(&f.steady, "shift-steady", 300*time.Millisecond, "shift: the steady phase, host unloaded")
	fl.DurationVar(&f.congested, "shift-congested", 300*time.Millisecond, "shift: how long the host cores stay congested")
	fl.DurationVar(&f.after, "shift-after", 300*time.Millisecond, "shift: the phase after the host cores are released")
	fl.Float64Var(&f.load, "shift-load", 0.95, "shift: the host load that congests the host cores (0 < L < 1)")
	fl.DurationVar(&f.bin, "shift-bin", 5*time.Millisecond, "shift: the width of a bin of the plot and of the JSON's bins")
	fl.IntVar(&f.calls, "shift-calls", 8, "shift: calls in flight (from one peer); --clients and --outstanding do not apply")
}

func (f shiftFlags) check() error {
	for _, d := range []struct {
		name string
		v    time.Duration
		min  time.Duration
	}{{"--shift-warmup", f.warmup, 0}, {"--shift-steady", f.steady, 10 * time.Millisecond},
		{"--shift-congested", f.congested, 10 * time.Millisecond}, {"--shift-after", f.after, 10 * time.Millisecond}} {
		if d.v < d.min || d.v > maxShiftPhase {
			return fmt.Errorf("%s %v: want %v … %v", d.name, d.v, d.min, maxShiftPhase)
		}
	}
	if !(f.load > 0 && f.load < 1) {
		return fmt.Errorf("--shift-load %v: want above 0 and below 1", f.load)
	}
	if f.bin < time.Millisecond || f.bin > time.Second {
		return fmt.Errorf("--shift-bin %v: want 1ms … 1s", f.bin)
	}
	if f.calls < 1 || f.calls > maxShiftInFlight {
		return fmt.Errorf("--shift-calls %d: want 1 … %d", f.calls, maxShiftInFlight)
	}
	return nil
}

// shiftSample is the handler's placements and the calls answered at t.
type shiftSample struct {
	t         time.Duration
	host, nic uint64
	answered  uint64
}

// shiftOutcome is what one run of the shift load measured.
type shiftOutcome struct {
	samples                         []shiftSample
	warmAt, congestAt, releaseAt    time.Duration
	calls, answered, errs           uint64
	repeats, outOfRange             uint64
	counter, runs                   uint64
	steer                           nicrt.SteerCounts
	latency                         workload.Histogram
	firstErr                        error
	bound                           uint64
	placement                       nicrt.PlacementPolicy
	nicCores, hostCores, goroutines int
}

// runShiftLoad starts a node with ncfg, keeps goroutines calls of the add
// handler in flight from one peer, congests the host cores (host load
// sf.load) after sf.warmup+sf.steady, releases them sf.congested later and
// stops sf.after after that, sampling the handler's placements all along.
func runShiftLoad(ctx context.Context, ncfg nicrt.Config, sf shiftFlags, goroutines int) (*shiftOutcome, error) {
	obj, err := compiler.Compile(lang.NewFileSet(), "shift.naam", shiftSource)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	server, err := host.Start(host.Config{Name: "bench-shift", Tenant: 1, Secret: isolationSecret(1), NIC: ncfg,
		Tenants: map[uint32][]byte{shiftTenant: isolationSecret(shiftTenant)}})
	if err != nil {
		return nil, err
	}
	defer server.Close()
	p, err := host.Dial(ctx, server.Addr().String(), shiftTenant, isolationSecret(shiftTenant), 0)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	if err := p.Register(ctx, "counter", 8, host.RegionOptions{Writable: true}); err != nil {
		return nil, err
	}
	prog, err := p.Install(ctx, obj)
	if err != nil {
		return nil, fmt.Errorf("install: %w", err)
	}
	var add uint32
	for _, h := range prog.Handlers {
		if h.Name == "add" {
			add = h.ID
		}
	}
	nic := server.NIC()
	hs, ok := nic.HandlerStats(add)
	if !ok {
		return nil, errors.New("the add handler is not installed on the node")
	}
	cfg := nic.Config()
	out := &shiftOutcome{bound: hs.MaxInsns, placement: cfg.Placement, nicCores: cfg.NICCores, hostCores: cfg.HostCores, goroutines: goroutines}

	seen := make([]atomic.Uint64, maxShiftCalls/64)
	var calls, answered, errs, repeats, outOfRange atomic.Uint64
	var stopping atomic.Bool
	var mu sync.Mutex
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			var lat workload.Histogram
			var firstErr error
			payload := binary.LittleEndian.AppendUint64(nil, uint64(g))
			for !stopping.Load() && ctx.Err() == nil {
				if calls.Add(1) > maxShiftCalls {
					calls.Add(^uint64(0))
					break
				}
				t0 := time.Now()
				reply, err := p.CallID(ctx, add, payload)
				d := time.Since(t0)
				if err == nil && len(reply) != 8 {
					err = fmt.Errorf("add replied %d bytes", len(reply))
				}
				if err != nil {
					errs.Add(1)
					if firstErr == nil {
						firstErr = err
					}
					continue
				}
				ticket := binary.LittleEndian.Uint64(reply)
				switch {
				case ticket >= maxShiftCalls:
					outOfRange.Add(1)
				case seen[ticket/64].Or(1<<(ticket%64))&(1<<(ticket%64)) != 0:
					repeats.Add(1)
				}
				answered.Add(1)
				lat.Record(d)
			}
			mu.Lock()
			out.latency.Merge(&lat)
			if out.firstErr == nil {
				out.firstErr = firstErr
			}
			mu.Unlock()
		})
	}

	start := time.Now()
	sample := func() {
		hs, _ := nic.HandlerStats(add)
		s := shiftSample{t: time.Since(start), nic: hs.Placed[nicrt.PlaceNIC], answered: answered.Load()}
		for pl, v := range hs.Placed {
			if nicrt.Placement(pl).OnHost() {
				s.host += v
			}
		}
		out.samples = append(out.samples, s)
	}
	out.warmAt = sf.warmup
	// Each phase lasts its flag from the moment the one before ended.
	next := sf.warmup + sf.steady
	phase := 0
	var loadErr error
	for sample(); ctx.Err() == nil; sample() {
		time.Sleep(shiftSampleEvery)
		el := time.Since(start)
		switch {
		case phase == 0 && el >= next:
			sample()
			out.congestAt = out.samples[len(out.samples)-1].t
			loadErr = nic.SetHostLoad(sf.load)
			next = out.congestAt + sf.congested
			phase++
		case phase == 1 && el >= next:
			sample()
			out.releaseAt = out.samples[len(out.samples)-1].t
			loadErr = errors.Join(loadErr, nic.SetHostLoad(0))
			next = out.releaseAt + sf.after
			phase++
		case phase == 2 && el >= next:
			phase++
		}
		if phase == 3 {
			break
		}
	}
	stopping.Store(true)
	wg.Wait()
	sample()
	if loadErr != nil {
		return nil, loadErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out.calls, out.answered, out.errs = calls.Load(), answered.Load(), errs.Load()
	if out.calls >= maxShiftCalls {
		return nil, fmt.Errorf("the load reached the %d calls the bench tracks: shorten the phases", maxShiftCalls)
	}
	out.repeats, out.outOfRange = repeats.Load(), outOfRange.Load()
	for _, r := range nic.Regions(shiftTenant) {
		if r.Name == "counter" {
			out.counter = binary.LittleEndian.Uint64(r.Bytes())
		}
	}
	hs, _ = nic.HandlerStats(add)
	out.runs, out.steer = hs.Runs, hs.Steer
	return out, nil
}

// shiftBin is one bin of the placement shares over time.
type shiftBin struct {
	Ms        float64 `json:"t_ms"` // the bin's end, from the start of the load
	HostShare float64 `json:"host_share"`
	OpsPerSec float64 `json:"ops_per_sec"`
}

// minRate is the lowest throughput over shiftThroughputWindow between
// samples from and to (answered calls per second), 0 if the span is
// shorter.
func (o *shiftOutcome) minRate(from, to int) float64 {
	minRate := -1.0
	j := from
	for i := from; i < to; i++ {
		for j < to && o.samples[j].t-o.samples[i].t < shiftThroughputWindow {
			j++
		}
		d := o.samples[j].t - o.samples[i].t
		if d < shiftThroughputWindow {
			break
		}
		if rate := float64(o.samples[j].answered-o.samples[i].answered) / d.Seconds(); minRate < 0 || rate < minRate {
			minRate = rate
		}
	}
	return max(minRate, 0)
}

// shiftResult is the JSON of naam bench shift.
type shiftResult struct {
	Workload string                `json:"workload"`
	Modes    []workload.ModeResult `json:"modes"`
	// The host cores' share of the handler's placements: in the steady
	// phase, while congested, and after the release.
	HostShareBefore    float64 `json:"host_share_before"`
	HostShareCongested float64 `json:"host_share_congested"`
	HostShareAfter     float64 `json:"host_share_after"`
	// ShiftMs: from the congestion to the end of the first window with at
	// most 10% of the placements on host cores; ReturnMs: from the release
	// to the end of the first window within 10 points of HostShareBefore.
	// null when not reached.
	ShiftMs  *float64 `json:"shift_ms"`
	ReturnMs *float64 `json:"return_ms"`
	// MinThroughputShare is the lowest throughput over 10 ms, from the
	// steady phase on, as a share of the steady phase's.
	MinThroughputShare float64 `json:"min_throughput_share"`
	// SteadyMinThroughputShare is the same within the steady phase: the
	// noise of the machine without a shift.
	SteadyMinThroughputShare float64 `json:"steady_min_throughput_share"`
	SteadyOpsPerSec          float64 `json:"steady_ops_per_sec"`
	// Lost: calls that got no reply; Duplicated: tickets seen twice or out
	// of range, and runs beyond the calls made (the counter).
	Lost        uint64     `json:"lost"`
	Duplicated  uint64     `json:"duplicated"`
	Calls       uint64     `json:"calls"`
	Runs        uint64     `json:"runs"`
	Counter     uint64     `json:"counter"`
	Switches    uint64     `json:"switches"`
	Probes      uint64     `json:"probes"`
	CongestLoad float64    `json:"congest_load"`
	CongestAtMs float64    `json:"congest_at_ms"`
	ReleaseAtMs float64    `json:"release_at_ms"`
	EndMs       float64    `json:"end_ms"`
	BinMs       float64    `json:"bin_ms"`
	Bins        []shiftBin `json:"bins"`
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// index is the first sample at or after t.
func (o *shiftOutcome) index(t time.Duration) int {
	for i, s := range o.samples {
		if s.t >= t {
			return i
		}
	}
	return len(o.samples) - 1
}

// share is the host share of the placements between samples i and j.
func (o *shiftOutcome) share(i, j int) (float64, uint64) {
	a, b := o.samples[i], o.samples[j]
	n := b.host + b.nic - a.host - a.nic
	if n == 0 {
		return 0, 0
	}
	return float64(b.host-a.host) / float64(n), n
}

// firstWindow walks windows forward from sample i (at least shiftWindow
// and shiftWindowDecisions each) until sample stop and returns the time
// from sample i to the end of the first whose host share satisfies ok.
func (o *shiftOutcome) firstWindow(i, stop int, ok func(float64) bool) *float64 {
	from := i
	for j := i + 1; j <= stop; j++ {
		share, n := o.share(from, j)
		if o.samples[j].t-o.samples[from].t < shiftWindow || n < shiftWindowDecisions {
			continue
		}
		if ok(share) {
			v := ms(o.samples[j].t - o.samples[i].t)
			return &v
		}
		from = j
	}
	return nil
}

func (o *shiftOutcome) result(sf shiftFlags) shiftResult {
	warm, congest, release, last := o.index(o.warmAt), o.index(o.congestAt), o.index(o.releaseAt), len(o.samples)-1
	r := shiftResult{
		Calls: o.calls, Runs: o.runs, Counter: o.counter, Switches: o.steer.Switches, Probes: o.steer.Probes,
		CongestLoad: sf.load, CongestAtMs: ms(o.congestAt), ReleaseAtMs: ms(o.releaseAt), EndMs: ms(o.samples[last].t), BinMs: ms(sf.bin),
	}
	r.HostShareBefore, _ = o.share(warm, congest)
	r.HostShareCongested, _ = o.share(congest, release)
	r.HostShareAfter, _ = o.share(release, last)
	before := r.HostShareBefore
	r.ShiftMs = o.firstWindow(congest, release, func(s float64) bool { return s <= 0.10 })
	r.ReturnMs = o.firstWindow(release, last, func(s float64) bool { return s >= before-0.10 })

	r.Lost = o.calls - o.answered
	r.Duplicated = o.repeats + o.outOfRange
	if o.counter > o.calls {
		r.Duplicated += o.counter - o.calls
	}
	steady := o.samples[congest].t - o.samples[warm].t
	if steady > 0 {
		r.SteadyOpsPerSec = float64(o.samples[congest].answered-o.samples[warm].answered) / steady.Seconds()
	}
	// The lowest 10 ms from the steady phase to the stop (before the
	// goroutines drain: the last sample is after they stopped), and the
	// lowest within the steady phase alone: what this machine's noise
	// does without any shift.
	if r.SteadyOpsPerSec > 0 {
		r.MinThroughputShare = o.minRate(warm, last-1) / r.SteadyOpsPerSec
		r.SteadyMinThroughputShare = o.minRate(warm, congest) / r.SteadyOpsPerSec
	}
	// Bins: each sample interval counted in the bin its end falls in; a
	// bin in which no interval ended (the sampler did not run: this
	// machine stalled it) is left out.
	type acc struct {
		host, all, answered uint64
		d                   time.Duration
	}
	bins := make([]acc, int(o.samples[last].t/sf.bin)+1)
	for i := 1; i <= last; i++ {
		a, s := o.samples[i-1], o.samples[i]
		b := &bins[int(s.t/sf.bin)]
		b.host += s.host - a.host
		b.all += s.host + s.nic - a.host - a.nic
		b.answered += s.answered - a.answered
		b.d += s.t - a.t
	}
	for i, b := range bins {
		if b.d == 0 {
			continue
		}
		bin := shiftBin{Ms: ms(time.Duration(i+1) * sf.bin), OpsPerSec: float64(b.answered) / b.d.Seconds()}
		if b.all > 0 {
			bin.HostShare = float64(b.host) / float64(b.all)
		}
		r.Bins = append(r.Bins, bin)
	}
	elapsed := o.samples[last].t - o.samples[warm].t
	st := workload.Stats{Ops: o.answered, RoundTrips: o.answered, Elapsed: elapsed, Latency: o.latency}
	r.Modes = []workload.ModeResult{st.ModeResult(o.placement.String())}
	r.Workload = fmt.Sprintf("shift: add (bound %d) from %d calls in flight, %d paced NIC and %d host cores, placement %s; host load %.2f from %.0f ms to %.0f ms",
		o.bound, o.goroutines, o.nicCores, o.hostCores, o.placement, sf.load, r.CongestAtMs, r.ReleaseAtMs)
	return r
}

// shiftConfig is the node's NIC of naam bench shift and the demo: paced,
// steering, every core reached (SteerRequest), unless the flags say
// otherwise.
func shiftConfig(nf nicFlags) nicrt.Config {
	var ncfg nicrt.Config
	nf.apply(&ncfg)
	ncfg.Paced = nf.paced || !nf.pacedSet
	if !nf.placementSet {
		ncfg.Placement = nicrt.PolicySteer
	}
	ncfg.Steering = nicrt.SteerRequest
	return ncfg
}

// runShift is naam bench shift.
func runShift(ctx context.Context, stdout, stderr io.Writer, f benchFlags) error {
	if err := f.shift.check(); err != nil {
		return err
	}
	o, err := runShiftLoad(ctx, shiftConfig(f.nic), f.shift, f.shift.calls)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: fmt.Errorf("shift: %w", err)}
	}
	if o.errs > 0 {
		// Counted as lost in the result, not hidden by a failure.
		fmt.Fprintf(stderr, "naam bench shift: %d of %d calls failed; the first: %v\n", o.errs, o.calls, o.firstErr)
	}
	r := o.result(f.shift)
	if f.plot != "" {
		if err := plotShift(f.plot, r); err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("--plot: %w", err)}
		}
	}
	if f.json {
		return printJSON(stdout, r)
	}
	fmt.Fprintf(stdout, "%s\n\n", r.Workload)
	return printShift(stdout, r)
}

func optMs(v *float64) string {
	if v == nil {
		return "not reached"
	}
	return fmt.Sprintf("%.1f ms", *v)
}

// printShift prints the figures of a shift run as a table.
func printShift(w io.Writer, r shiftResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "host share\tbefore %.0f%%\tcongested %.0f%%\tafter %.0f%%\t\n", 100*r.HostShareBefore, 100*r.HostShareCongested, 100*r.HostShareAfter)
	fmt.Fprintf(tw, "moved\tto the NIC in %s\tback in %s\t\t\n", optMs(r.ShiftMs), optMs(r.ReturnMs))
	fmt.Fprintf(tw, "throughput\tsteady %.0f/s\tlowest 10 ms %.0f%%\t(in the steady phase alone %.0f%%)\t\n", r.SteadyOpsPerSec, 100*r.MinThroughputShare, 100*r.SteadyMinThroughputShare)
	fmt.Fprintf(tw, "calls\t%d\tlost %d\tduplicated %d\t\n", r.Calls, r.Lost, r.Duplicated)
	return tw.Flush()
}

// plotShift draws the host and NIC shares of the placements per bin, with
// the congestion and the release marked.
func plotShift(path string, r shiftResult) error {
	p := plot.New()
	p.Title.Text = "placement shares over time"
	p.X.Label.Text = fmt.Sprintf("time (ms); host load %.2f from %.0f to %.0f ms", r.CongestLoad, r.CongestAtMs, r.ReleaseAtMs)
	p.Y.Label.Text = fmt.Sprintf("share of placements per %.0f ms", r.BinMs)
	p.Y.Min, p.Y.Max = 0, 1
	p.Add(plotter.NewGrid())
	host, nic := make(plotter.XYs, 0, len(r.Bins)), make(plotter.XYs, 0, len(r.Bins))
	for _, b := range r.Bins {
		host = append(host, plotter.XY{X: b.Ms, Y: b.HostShare})
		nic = append(nic, plotter.XY{X: b.Ms, Y: 1 - b.HostShare})
	}
	if len(host) < 2 {
		return errors.New("fewer than two bins to plot")
	}
	for i, s := range []struct {
		name string
		xys  plotter.XYs
	}{{"host cores", host}, {"NIC cores", nic}} {
		l, err := plotter.NewLine(s.xys)
		if err != nil {
			return err
		}
		l.Color, l.Width = plotutil.Color(i), vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	for _, x := range []float64{r.CongestAtMs, r.ReleaseAtMs} {
		l, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: 1}})
		if err != nil {
			return err
		}
		l.Color, l.Dashes = color.Gray{Y: 96}, []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(l)
	}
	return p.Save(18*vg.Centimeter, 9*vg.Centimeter, path)
}
