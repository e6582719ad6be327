package main

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/binary"
	"fmt"
	"go/constant"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/internal/workload"
	"github.com/naam-project/naam/lang"
)

//go:embed offload.naam
var offloadSource []byte

// Limits of naam bench offloads.
const (
	maxOffloadPrograms = 10_000
	maxOffloadTenants  = 1_000
)

// offloadSecret is tenant t's key in the bench: derived, not secret (the
// bench runs on loopback).
func offloadSecret(t uint32) []byte {
	sum := sha256.Sum256(binary.LittleEndian.AppendUint32([]byte("naam bench offloads tenant "), t))
	return sum[:]
}

// offloadObject compiles offload.naam with SALT = salt.
func offloadObject(salt uint64) (*bytecode.Object, error) {
	conf := lang.Config{Constants: map[string]constant.Value{"SALT": constant.MakeUint64(salt)}}
	return compiler.CompileWith(conf, lang.NewFileSet(), "offload.naam", offloadSource)
}

// installed is one program of the bench on the server.
type installed struct {
	peer  *host.Peer // its tenant's
	id    uint64     // the program's id on the node
	probe uint32     // its handlers' ids
	run   uint32
	salt  uint64
}

// offloadsMode is one phase's line of the JSON: the probe's figures with
// that many programs installed.
type offloadsMode struct {
	workload.ModeResult
	Programs            int     `json:"programs"`
	BackgroundOpsPerSec float64 `json:"background_ops_per_sec"`
	BackgroundCalls     uint64  `json:"background_calls"`
}

// durationStats are install or uninstall times, in milliseconds.
type durationStats struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Total float64 `json:"total"`
}

func statsOf(ds []time.Duration) durationStats {
	if len(ds) == 0 {
		return durationStats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(int(p*float64(len(s))), len(s)-1)] }
	var total time.Duration
	for _, d := range s {
		total += d
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return durationStats{Count: len(s), P50: ms(q(0.50)), P99: ms(q(0.99)), Max: ms(s[len(s)-1]), Total: ms(total)}
}

// offloadsResult is the JSON of naam bench offloads.
type offloadsResult struct {
	Workload    string         `json:"workload"`
	Modes       []offloadsMode `json:"modes"`
	Programs    int            `json:"programs"`
	Tenants     int            `json:"tenants"`
	Background  int            `json:"background"`
	Rounds      int            `json:"rounds"`
	P99Ratio    float64        `json:"p99_ratio"`
	InstallMs   durationStats  `json:"install_ms"`
	UninstallMs durationStats  `json:"uninstall_ms"`
}

// probeTarget calls one program's probe handler: every operation is a
// read (a Put is a mistake of the bench's configuration).
type probeTarget struct {
	p    *installed
	seqs atomic.Uint64
}

func (t *probeTarget) Get(ctx context.Context, key uint64) (int, error) {
	x := key<<20 | t.seqs.Add(1)&(1<<20-1)
	out, err := t.p.peer.CallID(ctx, t.p.probe, binary.LittleEndian.AppendUint64(nil, x))
	if err != nil {
		return 1, err
	}
	if len(out) != 8 || binary.LittleEndian.Uint64(out) != x^t.p.salt {
		return 1, fmt.Errorf("probe(%d) replied %x", x, out)
	}
	return 1, nil
}

func (t *probeTarget) Put(context.Context, uint64, []byte) (int, error) {
	return 0, fmt.Errorf("offloads: the probe has no writes")
}

// background keeps n calls in flight to the run handlers of progs,
// picked at random, until stop is called; stop returns the calls that
// succeeded and the first error.
func background(ctx context.Context, n int, progs []*installed) (stop func() (uint64, error)) {
	ctx, cancel := context.WithCancel(ctx)
	var calls atomic.Uint64
	var firstErr error
	var once sync.Once
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 0x6267))
			for ctx.Err() == nil {
				p := progs[r.IntN(len(progs))]
				if _, err := p.peer.CallID(ctx, p.run, binary.LittleEndian.AppendUint64(nil, r.Uint64())); err != nil {
					if ctx.Err() == nil {
						once.Do(func() { firstErr = err })
					}
					return
				}
				calls.Add(1)
			}
		}()
	}
	return func() (uint64, error) {
		cancel()
		wg.Wait()
		return calls.Load(), firstErr
	}
}

// runOffloads is naam bench offloads: N distinct programs from T tenants
// on one node, the probe's latency with the first alone and with all N,
// and the install and uninstall times.
func runOffloads(ctx context.Context, stdout, stderr io.Writer, f benchFlags) error {
	N, T := f.programs, f.tenants
	switch {
	case N < 1 || N > maxOffloadPrograms:
		return fmt.Errorf("--programs must be 1…%d", maxOffloadPrograms)
	case T < 1 || T > maxOffloadTenants || T > N:
		return fmt.Errorf("--tenants must be 1…%d and at most --programs", maxOffloadTenants)
	case f.background < 0:
		return fmt.Errorf("--background must be 0 or more")
	case f.rounds < 1 || f.rounds > 100:
		return fmt.Errorf("--rounds must be 1…100")
	}
	objs := make([]*bytecode.Object, N)
	for i := range objs {
		obj, err := offloadObject(uint64(i))
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("offloads: compile program %d: %w", i, err)}
		}
		objs[i] = obj
	}
	tenants := map[uint32][]byte{}
	for t := uint32(2); t <= uint32(T); t++ {
		tenants[t] = offloadSecret(t)
	}
	server, err := host.Start(host.Config{Name: "bench-offloads", Tenant: 1, Secret: offloadSecret(1), Tenants: tenants})
	if err != nil {
		return err
	}
	defer server.Close()
	peers := make([]*host.Peer, T)
	for i := range peers {
		t := uint32(i + 1)
		p, err := host.Dial(ctx, server.Addr().String(), t, offloadSecret(t), 0)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("offloads: tenant %d: %w", t, err)}
		}
		defer p.Close()
		if err := p.Register(ctx, "state", 64, host.RegionOptions{Writable: true}); err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("offloads: tenant %d: %w", t, err)}
		}
		peers[i] = p
	}
	progs := make([]*installed, 0, N)
	var installs, uninstalls []time.Duration
	install := func(i int) error {
		p := peers[i%T]
		t0 := time.Now()
		pp, err := p.Install(ctx, objs[i])
		installs = append(installs, time.Since(t0))
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("offloads: install program %d for tenant %d: %w", i, i%T+1, err)}
		}
		in := &installed{peer: p, id: pp.ID, salt: uint64(i)}
		for _, h := range pp.Handlers {
			switch h.Name {
			case "probe":
				in.probe = h.ID
			case "run":
				in.run = h.ID
			}
		}
		progs = append(progs, in)
		return nil
	}
	uninstall := func(p *installed) error {
		t0 := time.Now()
		if err := p.peer.Uninstall(ctx, p.id); err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("offloads: uninstall program %d: %w", p.salt, err)}
		}
		uninstalls = append(uninstalls, time.Since(t0))
		return nil
	}
	// Each round measures the probe with the first program alone, then
	// with all N: the machine's load drifts, and rounds spread the drift
	// over both.
	wcfg := workload.Config{
		Mix: workload.MixC, Records: 1000, Clients: f.clients, Outstanding: f.outstanding,
		Ops: (f.ops + uint64(f.rounds) - 1) / uint64(f.rounds), Duration: f.duration / time.Duration(f.rounds), Seed: f.seed,
	}
	type phase struct {
		st      *workload.Stats
		bgCalls uint64
	}
	probe := func(label string, into *phase) error {
		ts := make([]workload.Target, f.clients)
		for i := range ts {
			ts[i] = &probeTarget{p: progs[0]}
		}
		stop := background(ctx, f.background, progs)
		st, err := runMode(ctx, stderr, label, wcfg, ts, f.progress)
		bgCalls, bgErr := stop()
		if err == nil && st.Errors > 0 {
			err = fmt.Errorf("%d of %d probes failed; the first: %v", st.Errors, st.Errors+st.Ops, st.FirstError)
		}
		if err == nil && bgErr != nil {
			err = fmt.Errorf("background call: %w", bgErr)
		}
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("offloads, %s: %w", label, err)}
		}
		if into.st == nil {
			into.st = st
		} else {
			into.st.Merge(st)
		}
		into.bgCalls += bgCalls
		return nil
	}
	if err := install(0); err != nil {
		return err
	}
	var one, all phase
	for r := range f.rounds {
		if err := probe(fmt.Sprintf("round %d: 1 program", r+1), &one); err != nil {
			return err
		}
		for i := 1; i < N; i++ {
			if err := install(i); err != nil {
				return err
			}
		}
		if err := probe(fmt.Sprintf("round %d: %d programs", r+1, N), &all); err != nil {
			return err
		}
		if r+1 < f.rounds {
			for _, p := range progs[1:] {
				if err := uninstall(p); err != nil {
					return err
				}
			}
			progs = progs[:1]
		}
	}
	for _, p := range progs {
		if err := uninstall(p); err != nil {
			return err
		}
	}
	modeOf := func(ph phase, programs int) offloadsMode {
		m := offloadsMode{ModeResult: ph.st.ModeResult(workload.ModeAM), Programs: programs, BackgroundCalls: ph.bgCalls}
		if ph.st.Elapsed > 0 {
			m.BackgroundOpsPerSec = float64(ph.bgCalls) / ph.st.Elapsed.Seconds()
		}
		return m
	}
	mode1, modeN := modeOf(one, 1), modeOf(all, N)
	run1 := workload.ModeRun{Mode: "1 program", Stats: one.st}
	runN := workload.ModeRun{Mode: fmt.Sprintf("%d programs", N), Stats: all.st}

	title := fmt.Sprintf("offloads: %d programs from %d tenants, the probe of the first, %d rounds", N, T, f.rounds)
	if f.background > 0 {
		title += fmt.Sprintf(", %d background calls in flight", f.background)
	}
	res := offloadsResult{
		Workload: title, Modes: []offloadsMode{mode1, modeN}, Programs: N, Tenants: T, Background: f.background, Rounds: f.rounds,
		InstallMs: statsOf(installs), UninstallMs: statsOf(uninstalls),
	}
	if mode1.P99us > 0 {
		res.P99Ratio = modeN.P99us / mode1.P99us
	}
	if f.plot != "" {
		if err := workload.WriteFigure(f.plot, title, []workload.ModeRun{run1, runN}); err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("--plot: %w", err)}
		}
	}
	if f.json {
		return printJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s; %d clients × %d in flight\n\n", title, f.clients, f.outstanding)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "programs\tprobes\tops/s\tp50 µs\tp99 µs\tbackground ops/s\t")
	for i, m := range res.Modes {
		fmt.Fprintf(tw, "%d\t%d\t%.0f\t%.1f\t%.1f\t%.0f\t\n", m.Programs, []*workload.Stats{run1.Stats, runN.Stats}[i].Ops, m.OpsPerSec, m.P50us, m.P99us, m.BackgroundOpsPerSec)
	}
	tw.Flush()
	fmt.Fprintf(stdout, "\np99 ratio (%d programs / 1): %.2f\n", N, res.P99Ratio)
	fmt.Fprintf(stdout, "install:   p50 %.2f ms, p99 %.2f ms, total %.0f ms\n", res.InstallMs.P50, res.InstallMs.P99, res.InstallMs.Total)
	fmt.Fprintf(stdout, "uninstall: p50 %.2f ms, p99 %.2f ms, total %.0f ms\n", res.UninstallMs.P50, res.UninstallMs.P99, res.UninstallMs.Total)
	if f.plot != "" {
		fmt.Fprintf(stdout, "\nplot: %s\n", f.plot)
	}
	return nil
}
