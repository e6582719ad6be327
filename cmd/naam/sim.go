package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/examples/kv/kvnode"
	"github.com/naam-project/naam/examples/rpc"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/sim"
)

// simFlags are naam sim's settings besides the scenario's own (which
// simScenarioFlags maps onto a sim.Scenario).
type simFlags struct {
	scenario string
	json     bool
	plot     string
	progress string

	fail, restart, partition []string
	heal                     []time.Duration
	shiftNodes               string
	shiftAt, shiftUntil      time.Duration
	shiftLoad                float64
	latency                  string
}

func newSimCmd() *cobra.Command {
	var f simFlags
	var sc sim.Scenario
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "simulate thousands of nodes running the real handlers, deterministically",
		Long: `naam sim runs a deterministic discrete-event simulation of a NAAM cluster:
N nodes with the NIC model's NIC and host cores on a virtual clock, the
workload's real handlers compiled, verified and run in the VM, the runtime's
placement policy, and a network model with loss, duplication, partitions and
the callers' retransmission. The same seed and scenario give byte-identical
--json output (spec/sim.md).

Workloads (--workload): kv (the key-value store sharded over the nodes, YCSB
--mix A|B|C, --keys uniform|zipfian), chase (lists spanning --hops nodes,
walked by forward), ledger (transfers between neighbouring nodes by send),
shift (naam bench shift's handler; --shift-nodes congested with
--shift-load from --shift-at to --shift-until, placement steer).
--placement is the nodes' policy; --caller client runs the client-eligible
handlers (a kv GET) at the callers, over one-sided verbs.

A scenario file (--scenario FILE.json) sets any field; flags given on the
command line override it. Events: --fail NODES@T and --restart NODES@T
(NODES: 3, 0-9, 1,5-7), --partition 0-4|5-9@T (groups that cannot reach each
other), --heal T.

--json prints one JSON object; --plot PREFIX writes PREFIX-latency.png (the
latency CDF) and PREFIX-placements.png (runs on NIC and host cores over
virtual time). A progress bar shows on a terminal unless --json.`,
		Example: `  naam sim --nodes 10000 --messages 1000000 --seed 7 --json
  naam sim --workload chase --nodes 100 --hops 8 --loss 0.01
  naam sim --workload shift --nodes 64 --shift-nodes 0-31 --shift-at 5ms --shift-until 15ms --plot shift
  naam sim --scenario cluster.json --seed 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSim(cmd, &f, &sc)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.scenario, "scenario", "", "read the scenario from a JSON file (flags override it)")
	fl.BoolVar(&f.json, "json", false, "print the result as one JSON object")
	fl.StringVar(&f.plot, "plot", "", "write PREFIX-latency.png and PREFIX-placements.png")
	fl.StringVar(&f.progress, "progress", "auto", "progress bar: auto (on a terminal, not with --json), on or off")
	simScenarioFlags(fl, &sc)
	fl.StringVar(&f.latency, "latency", "", "every link's latency: DIST:BASE:JITTER (constant, uniform, exponential, normal, lognormal), e.g. uniform:4us:2us")
	fl.StringArrayVar(&f.fail, "fail", nil, "fail NODES at virtual time T: NODES@T (repeatable)")
	fl.StringArrayVar(&f.restart, "restart", nil, "restart NODES at T: NODES@T (repeatable)")
	fl.StringArrayVar(&f.partition, "partition", nil, "partition into groups at T: NODES|NODES…@T (repeatable)")
	fl.DurationSliceVar(&f.heal, "heal", nil, "end any partition at T (repeatable)")
	fl.StringVar(&f.shiftNodes, "shift-nodes", "", "shift: the nodes congested (host load) at --shift-at")
	fl.DurationVar(&f.shiftAt, "shift-at", 0, "shift: when the host load starts")
	fl.DurationVar(&f.shiftUntil, "shift-until", 0, "shift: when it ends (0: never)")
	fl.Float64Var(&f.shiftLoad, "shift-load", 0.95, "shift: the host load, 0 … 1")
	return cmd
}

// simScenarioFlags binds the scenario's scalar fields to flags.
func simScenarioFlags(fl *pflag.FlagSet, sc *sim.Scenario) {
	fl.Uint64Var(&sc.Seed, "seed", 1, "seed of every random stream")
	fl.IntVar(&sc.Nodes, "nodes", 16, "simulated nodes")
	fl.IntVar(&sc.Messages, "messages", 10_000, "operations the clients issue in all")
	fl.IntVar(&sc.Clients, "clients", 0, "callers (0: as many as nodes, at most 4096)")
	fl.IntVar(&sc.Outstanding, "outstanding", 1, "operations in flight per client")
	fl.StringVar(&sc.Caller, "caller", "node", "where callers run handlers: node, or client (the client-eligible ones, over one-sided verbs)")
	fl.Var((*durationFlag)(&sc.Duration), "duration", "end at this virtual time even if operations remain (0: none)")
	fl.StringVar(&sc.Workload.Kind, "workload", "kv", "kv, chase, ledger or shift")
	fl.StringVar(&sc.Workload.Mix, "mix", "B", "kv: YCSB mix A, B or C")
	fl.StringVar(&sc.Workload.Keys, "keys", "zipfian", "kv and chase: uniform or zipfian")
	fl.IntVar(&sc.Workload.Records, "records", 0, "kv: records (0: 16 per node)")
	fl.IntVar(&sc.Workload.ValueSize, "value-size", 64, "kv: value bytes")
	fl.IntVar(&sc.Workload.Lists, "lists", 64, "chase: lists")
	fl.IntVar(&sc.Workload.Hops, "hops", 4, "chase: nodes per list")
	fl.IntVar(&sc.Workload.Accounts, "accounts", 16, "ledger: accounts per node")
	fl.StringVar(&sc.NIC.Placement, "placement", "", "auto, nic, host or steer (default auto; steer for shift)")
	fl.IntVar(&sc.NIC.NICCores, "nic-cores", 0, "NIC cores per node (0: nicrt's 8)")
	fl.IntVar(&sc.NIC.HostCores, "host-cores", 0, "host cores per node (0: nicrt's 2, -1: none)")
	fl.Float64Var(&sc.NIC.HostLoad, "host-load", 0, "every node's host load at the start, 0 … 1")
	fl.BoolVar(&sc.NIC.NICMem, "nicmem", false, "put the workload's regions in nicmem")
	fl.Float64Var(&sc.Network.BandwidthGbps, "bandwidth-gbps", 0, "each port's rate (0: nicrt's 200 Gb/s)")
	fl.Float64Var(&sc.Network.Loss, "loss", 0, "chance a datagram is lost")
	fl.Float64Var(&sc.Network.Duplicate, "duplicate", 0, "chance a datagram is delivered twice")
	fl.StringVar(&sc.Network.Reply, "reply", "relayed", "a forwarded request's reply: relayed or direct")
	fl.IntVar(&sc.HotSpots, "hot-spots", 10, "nodes in the hot-spot list")
	fl.Var((*durationFlag)(&sc.Bin), "bin", "width of the placements-over-time bins (default 1ms)")
}

// durationFlag is a sim.Duration as a flag.
type durationFlag sim.Duration

func (d *durationFlag) String() string {
	if d == nil || *d == 0 {
		return "0s"
	}
	return time.Duration(*d).String()
}
func (d *durationFlag) Set(s string) error {
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = durationFlag(v)
	return nil
}
func (d *durationFlag) Type() string { return "duration" }

// simScenario is the scenario: the file's, then every flag given.
func simScenario(cmd *cobra.Command, f *simFlags, flags *sim.Scenario) (sim.Scenario, error) {
	sc := *flags
	if f.scenario != "" {
		b, err := os.ReadFile(f.scenario)
		if err != nil {
			return sc, cli.Errorf(cli.ExitUsage, "--scenario: %w", err)
		}
		if sc, err = sim.ReadScenario(b); err != nil {
			return sc, cli.Errorf(cli.ExitUsage, "--scenario %s: %w", f.scenario, err)
		}
		// Flags given on the command line win over the file.
		applyChanged(cmd, &sc, flags)
	}
	if f.latency != "" {
		l, err := parseLatency(f.latency)
		if err != nil {
			return sc, cli.Errorf(cli.ExitUsage, "--latency %q: %w", f.latency, err)
		}
		sc.Network.Latency = l
	}
	at := func(flag, v string) (string, sim.Duration, error) {
		what, when, ok := strings.Cut(v, "@")
		if !ok {
			return "", 0, cli.Errorf(cli.ExitUsage, "--%s %q: want NODES@TIME", flag, v)
		}
		d, err := time.ParseDuration(when)
		if err != nil || d < 0 {
			return "", 0, cli.Errorf(cli.ExitUsage, "--%s %q: %q is not a time", flag, v, when)
		}
		return what, sim.Duration(d), nil
	}
	nodes := func(flag, v, set string) (sim.NodeSet, error) {
		ns, err := sim.ParseNodeSet(set)
		if err != nil || len(ns) == 0 {
			return nil, cli.Errorf(cli.ExitUsage, "--%s %q: want nodes such as 3, 0-9 or 1,5-7", flag, v)
		}
		for _, r := range ns {
			if r.Lo < 0 || r.Hi < r.Lo || (sc.Nodes > 0 && r.Hi >= sc.Nodes) {
				return nil, cli.Errorf(cli.ExitUsage, "--%s %q: %d-%d is not a range of nodes 0 … %d", flag, v, r.Lo, r.Hi, sc.Nodes-1)
			}
		}
		return ns, nil
	}
	for _, ev := range []struct {
		flag, kind string
		vals       []string
	}{{"fail", "fail", f.fail}, {"restart", "restart", f.restart}} {
		for _, v := range ev.vals {
			what, t, err := at(ev.flag, v)
			if err != nil {
				return sc, err
			}
			ns, err := nodes(ev.flag, v, what)
			if err != nil {
				return sc, err
			}
			sc.Events = append(sc.Events, sim.Event{At: t, Kind: ev.kind, Nodes: ns})
		}
	}
	for _, v := range f.partition {
		what, t, err := at("partition", v)
		if err != nil {
			return sc, err
		}
		e := sim.Event{At: t, Kind: "partition"}
		for _, g := range strings.Split(what, "|") {
			ns, err := nodes("partition", v, g)
			if err != nil {
				return sc, err
			}
			e.Groups = append(e.Groups, ns)
		}
		sc.Events = append(sc.Events, e)
	}
	for _, t := range f.heal {
		if t < 0 {
			return sc, cli.Errorf(cli.ExitUsage, "--heal %v: must not be negative", t)
		}
		sc.Events = append(sc.Events, sim.Event{At: sim.Duration(t), Kind: "heal"})
	}
	if f.shiftNodes != "" {
		ns, err := nodes("shift-nodes", f.shiftNodes, f.shiftNodes)
		if err != nil {
			return sc, err
		}
		if f.shiftLoad <= 0 || f.shiftLoad > 1 {
			return sc, cli.Errorf(cli.ExitUsage, "--shift-load %v: want a host load in (0, 1]", f.shiftLoad)
		}
		if f.shiftAt < 0 || (f.shiftUntil != 0 && f.shiftUntil <= f.shiftAt) {
			return sc, cli.Errorf(cli.ExitUsage, "--shift-until %v: must be after --shift-at %v", f.shiftUntil, f.shiftAt)
		}
		sc.Events = append(sc.Events, sim.Event{At: sim.Duration(f.shiftAt), Kind: "host_load", Nodes: ns, HostLoad: f.shiftLoad})
		if f.shiftUntil > 0 {
			sc.Events = append(sc.Events, sim.Event{At: sim.Duration(f.shiftUntil), Kind: "host_load", Nodes: ns})
		}
	}
	if err := sc.Validate(); err != nil {
		return sc, cli.Errorf(cli.ExitUsage, "%w", flagName(cmd, f, err))
	}
	return sc, nil
}

// applyChanged copies the scenario fields whose flags were given from
// over into sc.
func applyChanged(cmd *cobra.Command, sc, over *sim.Scenario) {
	set := func(name string, apply func()) {
		if cmd.Flags().Changed(name) {
			apply()
		}
	}
	set("seed", func() { sc.Seed = over.Seed })
	set("nodes", func() { sc.Nodes = over.Nodes })
	set("messages", func() { sc.Messages = over.Messages })
	set("clients", func() { sc.Clients = over.Clients })
	set("outstanding", func() { sc.Outstanding = over.Outstanding })
	set("caller", func() { sc.Caller = over.Caller })
	set("duration", func() { sc.Duration = over.Duration })
	set("workload", func() { sc.Workload.Kind = over.Workload.Kind })
	set("mix", func() { sc.Workload.Mix = over.Workload.Mix })
	set("keys", func() { sc.Workload.Keys = over.Workload.Keys })
	set("records", func() { sc.Workload.Records = over.Workload.Records })
	set("value-size", func() { sc.Workload.ValueSize = over.Workload.ValueSize })
	set("lists", func() { sc.Workload.Lists = over.Workload.Lists })
	set("hops", func() { sc.Workload.Hops = over.Workload.Hops })
	set("accounts", func() { sc.Workload.Accounts = over.Workload.Accounts })
	set("placement", func() { sc.NIC.Placement = over.NIC.Placement })
	set("nic-cores", func() { sc.NIC.NICCores = over.NIC.NICCores })
	set("host-cores", func() { sc.NIC.HostCores = over.NIC.HostCores })
	set("host-load", func() { sc.NIC.HostLoad = over.NIC.HostLoad })
	set("nicmem", func() { sc.NIC.NICMem = over.NIC.NICMem })
	set("bandwidth-gbps", func() { sc.Network.BandwidthGbps = over.Network.BandwidthGbps })
	set("loss", func() { sc.Network.Loss = over.Network.Loss })
	set("duplicate", func() { sc.Network.Duplicate = over.Network.Duplicate })
	set("reply", func() { sc.Network.Reply = over.Network.Reply })
	set("hot-spots", func() { sc.HotSpots = over.HotSpots })
	set("bin", func() { sc.Bin = over.Bin })
}

// simFieldFlags maps the scenario's JSON paths to the flags that set
// them, so that a bad value given by flag is reported by its flag.
var simFieldFlags = []struct{ field, flag string }{
	{"nodes", "--nodes"}, {"messages", "--messages"}, {"caller", "--caller"}, {"clients", "--clients"}, {"outstanding", "--outstanding"},
	{"duration", "--duration"}, {"hot_spots", "--hot-spots"}, {"bin", "--bin"},
	{"workload.kind", "--workload"}, {"workload.mix", "--mix"}, {"workload.keys", "--keys"},
	{"workload.records", "--records"}, {"workload.value_size", "--value-size"}, {"workload.lists", "--lists"},
	{"workload.hops", "--hops"}, {"workload.accounts", "--accounts"},
	{"nic.placement", "--placement"}, {"nic.nic_cores", "--nic-cores"}, {"nic.host_cores", "--host-cores"},
	{"nic.host_load", "--host-load"}, {"network.latency", "--latency"}, {"network.bandwidth_gbps", "--bandwidth-gbps"},
	{"network.loss", "--loss"}, {"network.duplicate", "--duplicate"}, {"network.reply", "--reply"},
}

// flagName names the flag of a scenario error about a field that a flag
// given on the command line set; otherwise the error names the field
// (of --scenario's file, when there is one).
func flagName(cmd *cobra.Command, f *simFlags, err error) error {
	msg := err.Error()
	for _, m := range simFieldFlags {
		rest, ok := strings.CutPrefix(msg, m.field)
		if ok && (strings.HasPrefix(rest, ":") || strings.HasPrefix(rest, ".")) &&
			(cmd.Flags().Changed(strings.TrimPrefix(m.flag, "--")) || (m.flag == "--latency" && f.latency != "")) {
			if sub, ok := strings.CutPrefix(rest, "."); ok {
				return fmt.Errorf("%s: %s", m.flag, sub) // --latency: dist: "pareto" is not …
			}
			return fmt.Errorf("%s%s", m.flag, rest)
		}
	}
	if f.scenario != "" {
		return fmt.Errorf("--scenario %s: %w", f.scenario, err)
	}
	return err
}

// parseLatency reads DIST:BASE:JITTER.
func parseLatency(s string) (sim.Latency, error) {
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return sim.Latency{}, errors.New("want DIST:BASE:JITTER, e.g. uniform:4us:2us")
	}
	base, err := time.ParseDuration(parts[1])
	if err != nil {
		return sim.Latency{}, fmt.Errorf("base %q is not a duration", parts[1])
	}
	jitter, err := time.ParseDuration(parts[2])
	if err != nil {
		return sim.Latency{}, fmt.Errorf("jitter %q is not a duration", parts[2])
	}
	return sim.Latency{Dist: parts[0], Base: sim.Duration(base), Jitter: sim.Duration(jitter)}, nil
}

// simPrograms compiles the workloads' programs: examples/kv's table,
// examples/rpc's ledger and naam bench shift's handler.
func simPrograms() (sim.Programs, error) {
	shift, err := compiler.Compile(lang.NewFileSet(), "shift.naam", shiftSource)
	if err != nil {
		return sim.Programs{}, fmt.Errorf("shift.naam: %w", err)
	}
	return sim.Programs{
		KV: func(buckets, probes, value uint32) (*bytecode.Object, error) {
			return kvnode.Compile(kv.Config{Buckets: buckets, Probes: probes, ValueSize: value})
		},
		Ledger: func(accounts, history uint32) (*bytecode.Object, error) {
			return rpc.Compile(rpc.Config{Accounts: accounts, History: history})
		},
		Shift: shift,
	}, nil
}

func runSim(cmd *cobra.Command, f *simFlags, flags *sim.Scenario) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch f.progress {
	case "auto", "on", "off":
	default:
		return cli.Errorf(cli.ExitUsage, "--progress %q: want auto, on or off", f.progress)
	}
	sc, err := simScenario(cmd, f, flags)
	if err != nil {
		return err
	}
	progs, err := simPrograms()
	if err != nil {
		return err
	}
	opts := sim.Options{Programs: progs}
	show := f.progress == "on"
	if f.progress == "auto" && !f.json {
		if file, ok := stderr.(*os.File); ok && term.IsTerminal(int(file.Fd())) {
			show = true
		}
	}
	var bar *progressbar.ProgressBar
	if show {
		bar = progressbar.NewOptions64(int64(max(sc.Messages, 1)), progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("sim "+sc.Workload.Kind), progressbar.OptionShowCount(), progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("ops"), progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
		opts.Progress = func(done, _ int) { bar.Set64(int64(done)) }
	}
	start := time.Now()
	r, err := sim.Run(sc, opts)
	if bar != nil {
		bar.Finish()
	}
	if err != nil {
		// What Run refuses beyond Validate is still the scenario's (a
		// table past a region's size, the nodes' memory); only an internal
		// error is the simulator's.
		code := cli.ExitUsage
		if errors.Is(err, sim.ErrInternal) {
			code = cli.ExitFailed
		}
		return cli.Errorf(code, "%w", err)
	}
	wall := time.Since(start)
	if f.plot != "" {
		if err := r.PlotLatency(f.plot + "-latency.png"); err != nil {
			return cli.Errorf(cli.ExitFailed, "--plot: %w", err)
		}
		if err := r.PlotPlacements(f.plot + "-placements.png"); err != nil {
			return cli.Errorf(cli.ExitFailed, "--plot: %w", err)
		}
	}
	if f.json {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return nil
	}
	printSim(stdout, r)
	if f.plot != "" {
		fmt.Fprintf(stdout, "\nplots: %s-latency.png %s-placements.png\n", f.plot, f.plot)
	}
	fmt.Fprintf(stderr, "wall time %.2fs\n", wall.Seconds())
	return nil
}

func printSim(w io.Writer, r *sim.Result) {
	fmt.Fprintf(w, "naam sim %s: %d nodes, %d clients, seed %d, placement %s\n", r.Workload, r.Nodes, r.Clients, r.Seed, r.Placement)
	fmt.Fprintf(w, "operations   %d issued, %d answered (%d correct, %d wrong, %d handler errors, %d overloaded, %d faults), %d failed\n",
		r.Messages, r.Answered, r.Correct, r.Wrong, r.Errors.Handler, r.Errors.Overloaded, r.Errors.Fault, r.Failed)
	fmt.Fprintf(w, "throughput   %.0f ops/s over %.3f ms of virtual time\n", float64(r.OpsPerSec), float64(r.VirtualNanos)/1e6)
	l := r.Latency
	fmt.Fprintf(w, "latency      p50 %.2f µs  p90 %.2f  p99 %.2f  p99.9 %.2f  max %.2f  mean %.2f\n", l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean)
	fmt.Fprintf(w, "per op       %.2f round trips, %.2f tries, %.2f forwards, %.2f datagrams\n", r.RoundTripsPerOp, r.TriesPerOp, r.ForwardsPerOp, r.DatagramsPerOp)
	fmt.Fprintf(w, "runs         %d, %.1f insns and %.0f ns modelled each\n", r.Runs, r.InsnsPerRun, r.ModelNanosPerRun)
	var parts []string
	for _, p := range r.Placements {
		if p.Count > 0 {
			parts = append(parts, fmt.Sprintf("%s %d (%.1f%%)", p.Name, p.Count, 100*float64(p.Share)))
		}
	}
	fmt.Fprintf(w, "placements   %s\n", strings.Join(parts, ", "))
	if s := r.Steer; s.NIC+s.Host > 0 {
		fmt.Fprintf(w, "steering     %d nic, %d host, %d probes, %d switches\n", s.NIC, s.Host, s.Probes, s.Switches)
	}
	n := r.Network
	fmt.Fprintf(w, "network      %d datagrams, lost %d, partitioned %d, to down nodes %d, duplicated %d; suppressed %d (from cache %d), retransmissions %d, timeouts %d\n",
		n.Datagrams, n.DroppedLoss, n.DroppedPartition, n.DroppedDown, n.Duplicated, n.DuplicatesSuppressed, n.FromCache, n.Retransmissions, n.Timeouts)
	if s := r.Sends; s.Sent > 0 {
		fmt.Fprintf(w, "sends        %d sent, %d delivered, %d lost, %d refused\n", s.Sent, s.Delivered, s.Lost, s.Refused)
	}
	if e := r.Events; e.Applied > 0 {
		fmt.Fprintf(w, "events       %d applied: %d failures, %d restarts; %d reruns after a restart\n", e.Applied, e.Failures, e.Restarts, n.RerunsAfterRestart)
	}
	parts = parts[:0]
	for _, h := range r.HotSpots {
		parts = append(parts, strconv.Itoa(h.Node)+": "+strconv.FormatUint(h.Messages, 10))
	}
	fmt.Fprintf(w, "hot spots    %s (node: datagrams in)\n", strings.Join(parts, ", "))
	if l := r.Ledger; l != nil {
		fmt.Fprintf(w, "ledger       %d transfers (%d refused for funds); balances %d + lost in flight %d = %d expected: conserved %v\n",
			l.Transfers, l.Insufficient, l.Balances, l.LostInFlight, l.Expected, l.Conserved)
	}
	if s := r.Shift; s != nil {
		fmt.Fprintf(w, "shift        %d nodes at host load %.2f from %.3f ms: host share %.2f of %d runs before, %.2f of %d during, %.2f of %d after; shifted in %.3f ms, back in %.3f ms (%d not back)\n",
			s.Nodes, s.HostLoad, float64(s.AtNanos)/1e6, s.HostShareBefore, s.RunsBefore, s.HostShareDuring, s.RunsDuring, s.HostShareAfter, s.RunsAfter,
			float64(s.ShiftNanos)/1e6, float64(s.ReturnNanos)/1e6, s.NotReturned)
	}
}
