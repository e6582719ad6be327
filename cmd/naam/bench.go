package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/naam-project/naam/examples/rpc"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/memcache"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
)

// benchFlags are naam bench's settings.
type benchFlags struct {
	records     uint64
	valueSize   int
	mix, dist   string
	clients     int
	outstanding int
	duration    time.Duration
	ops         uint64
	modes       string
	against     string
	json        bool
	plot        string
	seed        uint64
	hops        int
	listNodes   int
	accounts    int
	progress    string
	fanout      uint32
	fill        int
	cacheLevels int
	programs    int
	tenants     int
	background  int
	rounds      int
	cpuProfile  string
	mac         string // --mac: the server's and client's tenant keys
	modesSet    bool   // --modes was given
	xdp         bool   // bench_xdp.go
	nic         nicFlags
	isolation   isolationFlags
	placement   string     // bench_placement.go: --placement as given
	shift       shiftFlags // bench_shift.go
}

func newBenchCmd() *cobra.Command {
	var f benchFlags
	cmd := &cobra.Command{
		Use:   "bench kv|chase|rpc|mica|btree|offloads|isolation|shift",
		Short: "Measure a workload by active message, RDMA-style and against memcached",
		Long: `bench starts a server node and a client node in this process on loopback UDP,
loads the workload's data and drives it with closed-loop clients (--clients,
each with --outstanding requests in flight) for --duration or --ops,
whichever ends first, in each mode, the modes taking turns for --rounds
slices each (the machine's load drifts; the turns spread it over them):

  am         one active message per operation (the handler runs on the node)
  rdma       the client does it with one-sided verbs: READ the bucket, READ
             the value (a PUT: READ, CAS lock, WRITE, WRITE, FETCH-ADD unlock)
  memcached  the same KV workload against a real memcached started on
             loopback (--against memcached; Debian's package), from a Go client
             of the same shape (pipelined, --outstanding per connection)
  client     mica, btree: the same handler as am run at the caller, over
             one-sided READs (a MICA GET: the bucket, then the entry; a
             B-tree lookup: a READ per level); writes run at the node
  auto       mica, btree: the caller steers each call between client and
             node (spec/client.md)

Workloads: kv is YCSB (--mix a: 50% updates, b: 5%, c: reads only) over
--records keys, uniform or scrambled Zipfian (θ 0.99), --value-size bytes;
kv --placement host|nic|client|node|auto|all runs its handlers at each
placement instead of the modes, on paced cores (modelled NIC and host
speeds; --paced=false: unpaced), the placements taking turns for
--rounds slices each (bench_placement.go);
chase walks --hops nodes of a linked list (am: 1 round trip; rdma: one READ
per hop); rpc is the ledger (reads are balance, updates are transfers;
am only: a transfer changes two accounts atomically, which one-sided
verbs cannot do without a lock protocol of their own); mica is the
MICA-style cache (lossy index over a circular log) under the same YCSB
mixes and flags as kv (rdma: READ the bucket, READ the entry; memcached
with --against memcached); btree is lookups (updates replace values) in a
B-link tree of --records keys of --fanout (am: 1 round trip; rdma: a READ
per level; rdma-cached: the top --cache-levels levels cached at the
client; client: the lookup handler at the caller, a READ per level;
client-cached: the same with the top --cache-levels levels kept at the
caller from one lookup to the next).
offloads installs --programs distinct programs from --tenants tenants and
reports the probe handler's latency with 1 and with all of them installed
(p99_ratio), and the install and uninstall times;
--background N keeps N calls to the programs' other handler in flight;
--rounds alternates the two --rounds times (uninstalling in between).
isolation runs, per mode (partition: fair queueing and cores of its own
for each active tenant; fair: per-tenant fair queueing on every core;
fifo: one queue per core), a victim tenant's cheap probe at --victim-rate alone and while
an aggressor tenant keeps --aggressor-calls handlers near the NIC budget in
flight on --nic-cores paced NIC cores (placement nic unless --placement
is given), and reports the victim's p99 against its solo p99
(victim_p99_ratio) and the aggressor's throughput, the two phases
alternated --rounds times. shift keeps --shift-calls
calls of a handler either class of core may run in flight to a node that
steers (placement steer, paced cores), congests the node's host cores
(host load --shift-load) after --shift-warmup and --shift-steady, releases
them --shift-congested later and runs --shift-after more; it reports
host_share_before, shift_ms, return_ms, the lowest 10 ms throughput, lost
and duplicated calls, and --plot draws the placement shares over time
(bench_shift.go). --host-load,
--placement, --paced, --fair, --partition and --tenant-quota set the server node's NIC
model in every workload.

Results print as a table, or with --json as one JSON object:
  {"workload": …, "modes": [{"mode", "ops_per_sec", "p50_us", "p99_us", "round_trips_per_op"}, …]}
with fields of the workload's own beside modes: mica's misses (GETs that
found no live entry, by mode), btree's height, fanout, nodes and
cache_levels, offloads' programs, tenants, rounds, p99_ratio, install_ms
and uninstall_ms (and each mode's programs).
--plot FILE.png draws the latency CDFs and the throughput per mode. A progress
bar shows on a terminal (stderr).`,
		Example: `  naam bench kv
  naam bench kv --records 1000000 --mix b --dist zipfian --against memcached --duration 10s
  naam bench kv --mix a --value-size 256 --clients 4 --outstanding 16 --json
  naam bench chase --hops 64 --plot chase.png
  naam bench rpc --mix b --ops 100000
  naam bench mica --records 1000000 --mix b --dist zipfian --against memcached
  naam bench btree --records 1000000 --mix c --cache-levels 2
  naam bench offloads --programs 500 --tenants 100 --json`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"kv", "chase", "rpc", "mica", "btree", "offloads", "null", "isolation", "shift"},
		RunE: func(cmd *cobra.Command, args []string) error {
			f.modesSet = cmd.Flags().Changed("modes")
			f.nic.pacedSet, f.nic.placementSet = cmd.Flags().Changed("paced"), cmd.Flags().Changed("placement")
			if f.cpuProfile != "" {
				stop, err := startCPUProfile(f.cpuProfile)
				if err != nil {
					return err
				}
				defer stop()
			}
			return runBench(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0], f)
		},
	}
	fl := cmd.Flags()
	fl.Uint64Var(&f.records, "records", 100_000, "kv, mica, btree: keys loaded")
	fl.IntVar(&f.valueSize, "value-size", 64, "kv: value bytes (8…256, a multiple of 8); mica: 8…1024")
	fl.StringVar(&f.mix, "mix", "b", "YCSB mix: a (50% updates), b (5%), c (reads only)")
	fl.StringVar(&f.dist, "dist", "zipfian", "key distribution: uniform or zipfian (θ 0.99)")
	fl.IntVar(&f.clients, "clients", 4, "clients (am, rdma: goroutine groups sharing the client node's peer and socket; memcached: a connection each)")
	fl.IntVar(&f.outstanding, "outstanding", 8, "requests in flight per client")
	fl.DurationVar(&f.duration, "duration", 5*time.Second, "how long each mode runs in all, over its --rounds slices (0: until --ops)")
	fl.Uint64Var(&f.ops, "ops", 0, "operations per mode (0: until --duration)")
	fl.StringVar(&f.modes, "modes", "am,rdma", "modes to run, comma-separated: am, rdma; mica and btree also client and auto, btree rdma-cached and client-cached (its default: am, rdma, rdma-cached, client, client-cached)")
	fl.StringVar(&f.against, "against", "", "also run the baseline: memcached")
	fl.BoolVar(&f.xdp, "xdp", false, "null, kv: over a veth pair between two network namespaces (root), the plain UDP ping-pong (null), the user-space node and the XDP tier in one run (bench_xdp.go)")
	fl.BoolVar(&f.json, "json", false, "print the results as one JSON object")
	fl.StringVar(&f.plot, "plot", "", "write latency CDFs and throughput per mode to this PNG")
	fl.Uint64Var(&f.seed, "seed", 1, "seed of the key generators")
	fl.IntVar(&f.hops, "hops", 64, "chase: hops per walk (1…64)")
	fl.IntVar(&f.listNodes, "list-nodes", 4096, "chase: nodes in the list")
	fl.IntVar(&f.accounts, "accounts", 1024, "rpc: accounts")
	fl.StringVar(&f.progress, "progress", "auto", "progress bar: auto (on a terminal), on or off")
	fl.Uint32Var(&f.fanout, "fanout", 32, "btree: keys per node (16, 32 or 64)")
	fl.IntVar(&f.fill, "fill", 0, "btree: keys per node of the bulk load (0: three quarters of the fanout)")
	fl.IntVar(&f.cacheLevels, "cache-levels", 2, "btree: the levels from the root that rdma-cached and client-cached clients cache")
	fl.IntVar(&f.programs, "programs", 500, "offloads: distinct programs installed")
	fl.IntVar(&f.tenants, "tenants", 100, "offloads: tenants the programs belong to (round robin)")
	fl.IntVar(&f.background, "background", 0, "offloads: calls kept in flight to the programs' run handlers while the probe is measured")
	fl.IntVar(&f.rounds, "rounds", 3, "kv, chase, rpc, mica, btree: slices of each mode, the modes (memcached too) in turn; offloads: rounds of (1 program, all programs); kv --placement: rounds of the placements in turn; isolation: rounds of (victim alone, victim under the aggressor); --duration and --ops are each phase's or placement's total over the rounds")
	fl.StringVar(&f.mac, "mac", "", "kv, chase, rpc, mica, btree: MAC algorithm of the server's and the client's keys, hmac-sha256 (default) or siphash-2-4-128, as naam node --mac")
	fl.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run (client and server node, every mode; go tool pprof reads it) to this file")
	f.nic.register(fl, false)
	placementFlag(fl, &f) // bench_placement.go: kv's client, node and all
	f.isolation.register(fl)
	f.shift.register(fl)
	return cmd
}

func runBench(ctx context.Context, stdout, stderr io.Writer, workloadName string, f benchFlags) error {
	mac, err := parseMAC(f.mac)
	if err != nil {
		return err
	}
	switch {
	case f.mac == "":
	case f.xdp:
		return cli.Errorf(cli.ExitUsage, "--mac: --xdp runs its own keys (SipHash-2-4-128, which the XDP tier answers)")
	case !slices.Contains([]string{"kv", "chase", "rpc", "mica", "btree"}, workloadName):
		return cli.Errorf(cli.ExitUsage, "--mac: only kv, chase, rpc, mica and btree take it, not %s", workloadName)
	}
	if workloadName == "shift" {
		return runShift(ctx, stdout, stderr, f) // its phases set its length, not --duration or --ops
	}
	mix, err := workload.MixByName(f.mix)
	if err != nil {
		return err
	}
	dist, err := workload.DistributionByName(f.dist)
	if err != nil {
		return err
	}
	if f.duration <= 0 && f.ops == 0 {
		return fmt.Errorf("--duration or --ops must be set")
	}
	if f.clients < 1 || f.outstanding < 1 {
		return fmt.Errorf("--clients and --outstanding must be positive")
	}
	byPlacement, err := placementBench(workloadName, f) // bench_placement.go
	if err != nil {
		return err
	}
	if workloadName == "offloads" {
		return runOffloads(ctx, stdout, stderr, f)
	}
	if workloadName == "isolation" {
		return runIsolation(ctx, stdout, stderr, f)
	}
	var ncfg nicrt.Config
	f.nic.apply(&ncfg)
	if byPlacement && !f.nic.pacedSet {
		// Placements compare the model's NIC and host cores: unpaced, a
		// NIC core is a goroutine at this machine's speed.
		ncfg.Paced = true
	}
	if f.xdp || workloadName == "null" {
		return runBenchXDP(ctx, stdout, stderr, workloadName, f, workload.Config{Mix: mix, Keys: dist, Records: f.records, ValueSize: f.valueSize,
			Clients: f.clients, Outstanding: f.outstanding, Ops: f.ops, Duration: f.duration, Seed: f.seed})
	}
	if err := checkRounds(f); err != nil {
		return err
	}
	if workloadName == "btree" && !f.modesSet {
		f.modes = "am,rdma," + modeRDMACached + "," + modeClient + "," + modeClientCached
	}
	modes := strings.Split(f.modes, ",")
	for _, m := range modes {
		if (m == modeRDMACached || m == modeClientCached) && workloadName == "btree" {
			continue
		}
		if _, placed := placedMode(m); placed && (workloadName == "mica" || workloadName == "btree") {
			continue
		}
		if m != workload.ModeAM && m != workload.ModeRDMA {
			return fmt.Errorf("--modes: %q is not am or rdma (memcached comes with --against memcached; rdma-cached and client-cached are btree's; client and auto are mica's and btree's)", m)
		}
	}
	switch f.against {
	case "":
	case "memcached":
		if workloadName != "kv" && workloadName != "mica" {
			return fmt.Errorf("--against memcached: only the kv and mica workloads have a memcached baseline")
		}
	default:
		return fmt.Errorf("--against %q: the baseline is memcached", f.against)
	}
	if workloadName == "rpc" && slices.Contains(modes, workload.ModeRDMA) {
		if cmdFlagSet(f.modes) {
			return fmt.Errorf("rpc has no rdma mode: a transfer changes two accounts atomically, which one-sided verbs cannot do without a lock protocol of their own")
		}
		modes = []string{workload.ModeAM}
	}
	wcfg := workload.Config{
		Mix: mix, Keys: dist, Records: f.records, ValueSize: f.valueSize,
		Clients: f.clients, Outstanding: f.outstanding, Ops: f.ops, Duration: f.duration, Seed: f.seed,
	}

	server, err := host.Start(host.Config{Name: "bench-server", NIC: ncfg, MAC: mac})
	if err != nil {
		return err
	}
	defer server.Close()
	client, err := host.Start(host.Config{Name: "bench-client", MAC: mac})
	if err != nil {
		return err
	}
	defer client.Close()
	if byPlacement {
		return runKVPlacement(ctx, stdout, stderr, f, wcfg, server, client)
	}

	var title string
	var targets func(mode string) ([]workload.Target, func(), error)
	// result makes the JSON document of a workload with fields of its own
	// (default: the Result itself); note is a line under the table.
	result := func(res workload.Result) any { return res }
	var note func() string
	switch workloadName {
	case "kv":
		s, err := startKV(ctx, server, client, f.records, f.valueSize)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("kv: %w", err)}
		}
		title = fmt.Sprintf("kv ycsb-%s %s, %d records, %d-byte values", strings.ToLower(mix.Name), dist.Name, f.records, f.valueSize)
		targets = func(mode string) ([]workload.Target, func(), error) {
			if mode == workload.ModeMemcached {
				return memcache.Baseline(ctx, f.clients, f.outstanding, f.records, f.valueSize)
			}
			return s.targets(mode, f.clients), func() {}, nil
		}
	case "chase":
		if f.hops < 1 || f.hops > 64 || f.listNodes < f.hops+1 {
			return fmt.Errorf("--hops must be 1…64 and --list-nodes larger")
		}
		s, err := startChase(ctx, server, client, f.listNodes, uint32(f.hops))
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("chase: %w", err)}
		}
		title = fmt.Sprintf("chase, %d hops in a %d-node list", f.hops, f.listNodes)
		wcfg.Mix = workload.MixC
		targets = func(mode string) ([]workload.Target, func(), error) {
			return s.targets(mode, f.clients), func() {}, nil
		}
	case "rpc":
		s, err := startLedger(ctx, server, client, f.accounts)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("rpc: %w", err)}
		}
		wcfg.Records = uint64(f.accounts)
		title = fmt.Sprintf("rpc ledger ycsb-%s %s, %d accounts (reads: balance, updates: transfer)", strings.ToLower(mix.Name), dist.Name, f.accounts)
		targets = func(string) ([]workload.Target, func(), error) { return s.targets(f.clients), func() {}, nil }
	case "mica":
		if f.valueSize < 8 || f.valueSize > 1024 {
			return fmt.Errorf("--value-size must be 8…1024 for mica")
		}
		s, err := startMICA(ctx, server, client, f.records, f.valueSize, f.mac)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("mica: %w", err)}
		}
		title = fmt.Sprintf("mica ycsb-%s %s, %d records, %d-byte values", strings.ToLower(mix.Name), dist.Name, f.records, f.valueSize)
		targets = func(mode string) ([]workload.Target, func(), error) {
			if mode == workload.ModeMemcached {
				return memcache.Baseline(ctx, f.clients, f.outstanding, f.records, f.valueSize)
			}
			return s.targets(ctx, mode, f.clients)
		}
		result, note = s.result, s.note
	case "btree":
		if f.cacheLevels < 0 {
			return fmt.Errorf("--cache-levels %d: the levels from the root to cache, 0 or more", f.cacheLevels)
		}
		s, err := startBTree(ctx, server, client, f.records, f.fanout, f.fill, f.cacheLevels, f.mac)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("btree: %w", err)}
		}
		title = fmt.Sprintf("btree ycsb-%s %s, %d keys, fanout %d, height %d (reads: lookups, updates: value replaced)",
			strings.ToLower(mix.Name), dist.Name, f.records, s.cfg.Fanout, s.tree.Height())
		targets = func(mode string) ([]workload.Target, func(), error) {
			return s.targets(ctx, mode, f.clients)
		}
		result = s.result
		note = func() string {
			return fmt.Sprintf("tree: %d nodes of %d bytes; rdma-cached and client-cached cache the top %d levels", s.tree.Used(), s.cfg.NodeSize(), f.cacheLevels)
		}
	default:
		return fmt.Errorf("%q is not a workload: kv, chase, rpc, mica, btree or offloads", workloadName)
	}
	if f.against == "memcached" {
		modes = append(modes, workload.ModeMemcached)
	}
	title += keysNote(server)

	if f.rounds > 1 {
		title += fmt.Sprintf(", %d rounds", f.rounds)
	}
	runs, err := runModes(ctx, stderr, modes, wcfg, f, targets)
	if err != nil {
		return err
	}
	res := workload.NewResult(title, runs)
	if f.plot != "" {
		if err := workload.WriteFigure(f.plot, title, runs); err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("--plot: %w", err)}
		}
	}
	if f.json {
		return printJSON(stdout, result(res))
	}
	fmt.Fprintf(stdout, "%s; %d clients × %d in flight\n\n", title, f.clients, f.outstanding)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tops\tops/s\tp50 µs\tp99 µs\tround trips/op\t")
	for i, m := range res.Modes {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%.1f\t%.2f\t\n", m.Mode, runs[i].Stats.Ops, m.OpsPerSec, m.P50us, m.P99us, m.RoundTripsPerOp)
	}
	tw.Flush()
	if note != nil {
		fmt.Fprintf(stdout, "\n%s\n", note())
	}
	if f.plot != "" {
		fmt.Fprintf(stdout, "\nplot: %s\n", f.plot)
	}
	return nil
}

// checkRounds refuses --rounds that cannot slice --duration and --ops
// (runModes), before anything starts.
func checkRounds(f benchFlags) error {
	if f.rounds < 1 || f.rounds > 100 {
		return cli.Errorf(cli.ExitUsage, "--rounds must be 1…100")
	}
	if f.duration > 0 && f.duration/time.Duration(f.rounds) <= 0 {
		return cli.Errorf(cli.ExitUsage, "--duration %v is too short for %d rounds", f.duration, f.rounds)
	}
	if f.ops > 0 && f.ops < uint64(f.rounds) {
		return cli.Errorf(cli.ExitUsage, "--ops %d is fewer than --rounds %d", f.ops, f.rounds)
	}
	return nil
}

// sliceOf is round r's share of cfg in a run of rounds: a rounds-th of
// the duration, the ops spread exactly (the first ones take one more
// where they do not divide), and a key stream of its own (round 0 keeps
// the seed; the others' differ from every round of any other seed
// below 2^32).
func sliceOf(cfg workload.Config, rounds, r int) workload.Config {
	slice := cfg
	slice.Duration = cfg.Duration / time.Duration(rounds)
	if cfg.Ops > 0 {
		slice.Ops = cfg.Ops / uint64(rounds)
		if uint64(r) < cfg.Ops%uint64(rounds) {
			slice.Ops++
		}
	}
	slice.Seed = cfg.Seed + uint64(r)<<32
	return slice
}

// keysNote is the title's mention of node's key algorithm, empty for the
// default.
func keysNote(node *host.Node) string {
	if alg := node.MAC(); alg != wire.MACHMACSHA256 {
		return ", keys " + alg.String()
	}
	return ""
}

// runModes runs the modes in turn, --rounds slices each, a slice being
// --duration / --rounds (or its share of --ops): the machine's load
// drifts, and the turns spread the drift over every mode. Each mode's
// targets are made before its first slice and kept to the end (a
// memcached baseline is started and loaded once).
func runModes(ctx context.Context, stderr io.Writer, modes []string, wcfg workload.Config, f benchFlags,
	targets func(mode string) ([]workload.Target, func(), error)) ([]workload.ModeRun, error) {
	ts := make([][]workload.Target, len(modes))
	for i, mode := range modes {
		t, stop, err := targets(mode)
		if err != nil {
			return nil, &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %w", mode, err)}
		}
		defer stop()
		ts[i] = t
	}
	runs := make([]workload.ModeRun, len(modes))
	for r := range f.rounds {
		slice := sliceOf(wcfg, f.rounds, r)
		for i, mode := range modes {
			label := mode
			if f.rounds > 1 {
				label = fmt.Sprintf("%s, round %d of %d", mode, r+1, f.rounds)
			}
			st, err := runMode(ctx, stderr, label, slice, ts[i], f.progress)
			if err != nil {
				return nil, &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %w", mode, err)}
			}
			if st.Errors > 0 {
				return nil, &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %d of %d operations failed; the first: %v", mode, st.Errors, st.Errors+st.Ops, st.FirstError)}
			}
			if runs[i].Stats == nil {
				runs[i] = workload.ModeRun{Mode: mode, Stats: st}
			} else {
				runs[i].Stats.Merge(st)
			}
		}
	}
	return runs, nil
}

// cmdFlagSet reports whether --modes differs from its default.
func cmdFlagSet(modes string) bool { return modes != "am,rdma" }

// runMode runs one mode, with a progress bar on stderr when it is a
// terminal (or --progress on).
func runMode(ctx context.Context, stderr io.Writer, mode string, cfg workload.Config, ts []workload.Target, progress string) (*workload.Stats, error) {
	show := progress == "on"
	if progress == "auto" {
		if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			show = true
		}
	}
	if !show {
		return workload.Run(ctx, cfg, ts)
	}
	var done atomic.Int64
	counted := make([]workload.Target, len(ts))
	for i, t := range ts {
		counted[i] = countingTarget{t, &done}
	}
	max := int64(-1)
	desc := mode
	if cfg.Ops > 0 {
		max = int64(cfg.Ops)
	}
	bar := progressbar.NewOptions64(max, progressbar.OptionSetWriter(stderr), progressbar.OptionSetDescription(desc),
		progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("ops"),
		progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	stop := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				bar.Set64(done.Load())
			}
		}
	}()
	st, err := workload.Run(ctx, cfg, counted)
	close(stop)
	<-ticked
	bar.Finish()
	return st, err
}

// countingTarget counts finished operations for the progress bar.
type countingTarget struct {
	t    workload.Target
	done *atomic.Int64
}

func (c countingTarget) Get(ctx context.Context, key uint64) (int, error) {
	n, err := c.t.Get(ctx, key)
	c.done.Add(1)
	return n, err
}

func (c countingTarget) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	n, err := c.t.Put(ctx, key, value)
	c.done.Add(1)
	return n, err
}

// ledgerService is the rpc example on a node.
type ledgerService struct {
	client   *rpc.Client
	accounts int
}

func startLedger(ctx context.Context, server, caller *host.Node, accounts int) (*ledgerService, error) {
	c, err := ledgerOn(ctx, server, caller, rpc.Config{Accounts: uint32(accounts)}, nil)
	if err != nil {
		return nil, err
	}
	for a := range accounts {
		if _, _, err := c.Deposit(ctx, uint32(a), 1_000_000); err != nil {
			return nil, fmt.Errorf("deposit to account %d: %w", a, err)
		}
	}
	return &ledgerService{client: c, accounts: accounts}, nil
}

func (s *ledgerService) targets(clients int) []workload.Target {
	out := make([]workload.Target, clients)
	for i := range out {
		out[i] = ledgerTarget{s}
	}
	return out
}

// ledgerTarget: a read is a balance, an update a transfer of 1 to the
// next account.
type ledgerTarget struct{ s *ledgerService }

func (t ledgerTarget) Get(ctx context.Context, key uint64) (int, error) {
	_, _, err := t.s.client.Balance(ctx, uint32(key%uint64(t.s.accounts)))
	return 1, err
}

func (t ledgerTarget) Put(ctx context.Context, key uint64, _ []byte) (int, error) {
	from := uint32(key % uint64(t.s.accounts))
	to := (from + 1) % uint32(t.s.accounts)
	_, _, err := t.s.client.Transfer(ctx, from, to, 1)
	return 1, err
}
