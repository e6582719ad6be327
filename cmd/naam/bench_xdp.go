package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/memcache"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/internal/netns"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/xdp"
)

// The modes of naam bench --xdp.
const (
	modeUDP   = "udp"    // a plain Go UDP ping-pong (null) over the same link
	modeAMXDP = "am-xdp" // the XDP tier of a node
)

// xdpBenchPayload is a null call's request payload; the ping-pong sends
// datagrams of the same size (header and payload).
const xdpBenchPayload = 64

// xdpBenchSecret is the benchmark nodes' key (SipHash, which the tier
// opens): the link is the benchmark's own, between namespaces it made.
var xdpBenchSecret = []byte("naam bench --xdp: namespaces of its own")

const nullBenchSource = `
handler null() -> u64 {
    return 0
}
`

// xdpBench is naam bench --xdp's setting: two namespaces joined by a veth
// pair; on side 0 a node with the XDP tier on its veth end (am-xdp), a
// node without (am), a UDP echo (udp) and memcached (--against
// memcached); on side 1 the client node (which dials and describes the
// nodes), the benchmark's own pipelined clients (bench_xdp_client.go) and
// memcached's client.
type xdpBench struct {
	pair   *netns.Pair
	kernel *host.Node // the node with the tier
	user   *host.Node // the user-space node
	client *host.Node // the callers' node, on side 1
	echo   *net.UDPConn
	closer []io.Closer
}

func (b *xdpBench) Close() {
	for i := len(b.closer) - 1; i >= 0; i-- {
		b.closer[i].Close()
	}
	b.pair.Close()
}

type closeFunc func() error

func (f closeFunc) Close() error { return f() }

// newXDPBench makes the link, the nodes and the echo, or says why it
// cannot here (root, namespaces, XDP).
func newXDPBench() (_ *xdpBench, err error) {
	if err := xdp.Probe(); err != nil {
		return nil, fmt.Errorf("--xdp: %w", err)
	}
	p, err := netns.New()
	if err != nil {
		return nil, fmt.Errorf("--xdp: %w", err)
	}
	b := &xdpBench{pair: p}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	start := func(side, port int, iface string) (*host.Node, error) {
		var n *host.Node
		err := p.Run(side, func() error {
			var err error
			n, err = host.Start(host.Config{Name: fmt.Sprintf("bench-%d-%d", side, port), Listen: netip.AddrPortFrom(p.Addr[side], uint16(port)).String(),
				Secret: xdpBenchSecret, MAC: wire.MACSipHash128, XDP: iface})
			return err
		})
		if err == nil {
			b.closer = append(b.closer, closeFunc(n.Close))
		}
		return n, err
	}
	if b.kernel, err = start(0, 7400, p.Dev[0]); err != nil {
		return nil, err
	}
	if b.user, err = start(0, 7401, ""); err != nil {
		return nil, err
	}
	if b.client, err = start(1, 0, ""); err != nil {
		return nil, err
	}
	idx, err := p.Ifindex(1)
	if err != nil {
		return nil, err
	}
	if err := p.Run(1, func() error {
		c, err := xdp.AttachPass(idx)
		if err == nil {
			b.closer = append(b.closer, c)
		}
		return err
	}); err != nil {
		return nil, err
	}
	if err := p.Run(0, func() error {
		var err error
		b.echo, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(p.Addr[0], 7402)))
		return err
	}); err != nil {
		return nil, err
	}
	b.closer = append(b.closer, b.echo)
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := b.echo.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			b.echo.WriteToUDPAddrPort(buf[:k], from)
		}
	}()
	return b, nil
}

// dial dials node from the client node, on side 1.
func (b *xdpBench) dial(ctx context.Context, node *host.Node) (*host.Peer, error) {
	var peer *host.Peer
	err := b.pair.Run(1, func() error {
		var err error
		peer, err = b.client.Dial(ctx, node.Addr().String())
		return err
	})
	return peer, err
}

// memcachedTargets runs memcached on side 0 and connects a pipelined
// client per benchmark client from side 1, loaded with the records.
func (b *xdpBench) memcachedTargets(ctx context.Context, clients, outstanding int, records uint64, valueSize int) ([]workload.Target, error) {
	dial := func(ctx context.Context, addr string) (net.Conn, error) {
		var c net.Conn
		err := b.pair.Run(1, func() error {
			var err error
			d := net.Dialer{Timeout: 100 * time.Millisecond}
			c, err = d.DialContext(ctx, "tcp", addr)
			return err
		})
		return c, err
	}
	srv, err := memcache.Start(ctx, memcache.ServerConfig{IP: b.pair.Addr[0].String(), Prefix: []string{"ip", "netns", "exec", b.pair.NS[0]}, Dial: dial})
	if err != nil {
		return nil, err
	}
	b.closer = append(b.closer, closeFunc(srv.Close))
	var targets []workload.Target
	for range clients {
		var c *memcache.Client
		if err := b.pair.Run(1, func() error {
			var err error
			c, err = memcache.Dial(ctx, srv.Addr, outstanding)
			return err
		}); err != nil {
			return nil, err
		}
		b.closer = append(b.closer, c)
		targets = append(targets, memcache.Records{Client: c})
	}
	if err := workload.Load(ctx, targets, records, valueSize, outstanding); err != nil {
		return nil, err
	}
	return targets, nil
}

// xdpResult is naam bench --xdp's JSON document: the modes, the link,
// and the targets' ratios measured in the run.
type xdpResult struct {
	workload.Result
	Link   string             `json:"link"`
	Ratios map[string]float64 `json:"ratios"`
	// CPUPerOp is the CPU time this process spent per operation (user
	// and system, the link's receive paths run in the softirqs of its
	// own sends included; work deferred to ksoftirqd not), in µs, for
	// the modes whose both ends it runs: udp, am, am-xdp (memcached is
	// a process of its own).
	CPUPerOp map[string]float64 `json:"cpu_us_per_op"`
	// CPUs is, for the same modes, how the machine's CPUs were spent
	// while each ran: by this process, by everything else, idle. A mode
	// that left CPUs idle was held back by where its work ran; one that
	// shared them with other work measured less than the machine gives.
	CPUs map[string]cpuShare `json:"cpus,omitempty"`
	// XDP is the XDP node's tier's counters after the run (runs, passes
	// by reason, …), nonzero ones only.
	XDP map[string]uint64 `json:"xdp"`
}

// runBenchXDP is naam bench null|kv --xdp: over one veth pair between two
// namespaces and in one run, the plain Go UDP ping-pong (udp, null only),
// the user-space node (am), the XDP tier (am-xdp) and, for kv with
// --against memcached, memcached. udp, am and am-xdp are driven by the
// same pipelined client, --clients sockets with --outstanding operations
// in flight each (workload.RunPipelined); memcached by its own client,
// --clients connections with --outstanding goroutines each
// (workload.Run).
func runBenchXDP(ctx context.Context, stdout, stderr io.Writer, name string, f benchFlags, wcfg workload.Config) error {
	if !f.xdp {
		return cli.Errorf(cli.ExitUsage, "null is measured over a veth link between namespaces, with the XDP tier: naam bench null --xdp")
	}
	if name != "null" && name != "kv" {
		return cli.Errorf(cli.ExitUsage, "--xdp: the workloads measured over the XDP tier are null and kv, not %q", name)
	}
	if f.against != "" && (name != "kv" || f.against != "memcached") {
		return cli.Errorf(cli.ExitUsage, "--against %q: with --xdp only kv has a baseline, memcached", f.against)
	}
	b, err := newXDPBench()
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	defer b.Close()
	fail := func(err error) error { return &cli.ExitError{Code: 1, Err: err} }
	var title string
	modes := []string{modeUDP, workload.ModeAM, modeAMXDP}
	targets := map[string][]workload.Target{}    // memcached: its own client, a goroutine per operation in flight
	async := map[string][]workload.AsyncTarget{} // udp, am, am-xdp: the pipelined client (bench_xdp_client.go)
	nodes := map[string]*host.Node{workload.ModeAM: b.user, modeAMXDP: b.kernel}
	tenant := b.client.Tenant()
	switch name {
	case "null":
		src := []byte(nullBenchSource)
		obj, err := compiler.Compile(lang.NewFileSet(), "null.naam", src)
		if err != nil {
			return fail(err)
		}
		for mode, n := range nodes {
			if _, err := n.Install(obj); err != nil {
				return fail(err)
			}
			peer, err := b.dial(ctx, n)
			if err != nil {
				return fail(err)
			}
			h, err := peer.Handler(ctx, "null")
			if err != nil {
				return fail(err)
			}
			for range f.clients {
				cl, err := b.xdpBenchClient(n, tenant)
				if err != nil {
					return fail(err)
				}
				async[mode] = append(async[mode], nullAsync{cl: cl, tenant: tenant, handler: h.ID})
			}
		}
		if async[modeUDP], err = b.udpAsyncTargets(f.clients); err != nil {
			return fail(err)
		}
		// A null call names no record: the keys are drawn uniformly, the
		// cheapest draw, for every mode alike.
		wcfg.Mix, wcfg.Keys = workload.MixC, workload.Uniform
		title = fmt.Sprintf("null, a %d-byte request", xdpBenchPayload)
	case "kv":
		modes = []string{workload.ModeAM, modeAMXDP}
		for mode, n := range nodes {
			var s *kvService
			if err := b.pair.Run(1, func() error {
				var err error
				s, err = startKV(ctx, n, b.client, f.records, f.valueSize)
				return err
			}); err != nil {
				return fail(fmt.Errorf("kv on the %s node: %w", mode, err))
			}
			for range f.clients {
				cl, err := b.xdpBenchClient(n, tenant)
				if err != nil {
					return fail(err)
				}
				async[mode] = append(async[mode], &kvAsync{cl: cl, tenant: tenant, cfg: s.cfg, ids: s.ids})
			}
		}
		if f.against == "memcached" {
			modes = append(modes, workload.ModeMemcached)
			if targets[workload.ModeMemcached], err = b.memcachedTargets(ctx, f.clients, f.outstanding, f.records, f.valueSize); err != nil {
				return fail(fmt.Errorf("memcached: %w", err))
			}
		}
		title = fmt.Sprintf("kv ycsb-%s %s, %d records, %d-byte values", strings.ToLower(wcfg.Mix.Name), wcfg.Keys.Name, f.records, f.valueSize)
	}
	if ns := b.kernel.XDPNotServed(); len(ns) > 0 {
		fmt.Fprintf(stderr, "bench: handlers the XDP node serves in user space: %v\n", ns)
	}
	var runs []workload.ModeRun
	cpuPerOp := map[string]float64{}
	cpus := map[string]cpuShare{}
	for _, mode := range modes {
		var st *workload.Stats
		if ts, ok := async[mode]; ok {
			cpu0 := processCPU()
			busy0, total0 := machineCPU()
			st, err = workload.RunPipelined(ctx, wcfg, ts)
			if err == nil && st.Ops > 0 {
				own := processCPU() - cpu0
				cpuPerOp[mode] = float64(own.Nanoseconds()) / 1e3 / float64(st.Ops)
				busy1, total1 := machineCPU()
				cpus[mode] = cpuShares(own, st.Elapsed, busy1-busy0, total1-total0)
			}
		} else {
			st, err = runMode(ctx, stderr, mode, wcfg, targets[mode], f.progress)
		}
		if err != nil {
			return fail(fmt.Errorf("%s: %w", mode, err))
		}
		if st.Errors > 0 {
			return fail(fmt.Errorf("%s: %d of %d operations failed; the first: %v (XDP node: %v)", mode, st.Errors, st.Errors+st.Ops, st.FirstError, nonzeroCounters(b.kernel.XDPCounters())))
		}
		runs = append(runs, workload.ModeRun{Mode: mode, Stats: st})
	}
	res := xdpResult{Result: workload.NewResult(title, runs), Link: "veth between two network namespaces (198.18.0.0/15)",
		Ratios: map[string]float64{}, CPUPerOp: cpuPerOp, CPUs: cpus, XDP: map[string]uint64{}}
	by := map[string]workload.ModeResult{}
	for _, m := range res.Modes {
		by[m.Mode] = m
	}
	ratio := func(name string, a, b float64) {
		if b > 0 {
			res.Ratios[name] = a / b
		}
	}
	ratio("xdp_p50_over_udp_p50", by[modeAMXDP].P50us, by[modeUDP].P50us)
	ratio("xdp_ops_over_am_ops", by[modeAMXDP].OpsPerSec, by[workload.ModeAM].OpsPerSec)
	ratio("xdp_ops_over_memcached_ops", by[modeAMXDP].OpsPerSec, by[workload.ModeMemcached].OpsPerSec)
	for _, c := range b.kernel.XDPCounters() {
		if c.Value != 0 {
			res.XDP[c.Name] = c.Value
		}
	}
	if f.plot != "" {
		if err := workload.WriteFigure(f.plot, title, runs); err != nil {
			return fail(fmt.Errorf("--plot: %w", err))
		}
	}
	if f.json {
		return printJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "%s; %d clients × %d in flight; over a %s\n\n", title, f.clients, f.outstanding, res.Link)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "mode\tops\tops/s\tp50 µs\tp99 µs\tround trips/op\t")
	for i, m := range res.Modes {
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%.1f\t%.2f\t\n", m.Mode, runs[i].Stats.Ops, m.OpsPerSec, m.P50us, m.P99us, m.RoundTripsPerOp)
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	for _, k := range []string{"xdp_p50_over_udp_p50", "xdp_ops_over_am_ops", "xdp_ops_over_memcached_ops"} {
		if v, ok := res.Ratios[k]; ok {
			fmt.Fprintf(stdout, "%s %.2f\n", k, v)
		}
	}
	for _, m := range modes {
		if v, ok := cpuPerOp[m]; ok {
			c := cpus[m]
			fmt.Fprintf(stdout, "cpu_us_per_op %s %.2f (CPUs: this process %.2f, others %.2f, idle %.2f)\n", m, v, c.Process, c.Others, c.Idle)
		}
	}
	fmt.Fprintf(stdout, "xdp: runs %d, replies %d, passed up %d, cache hits %d\n", res.XDP["xdp.runs"], res.XDP["xdp.replies"]+res.XDP["xdp.error_replies"],
		passedUp(res.XDP), res.XDP["xdp.cache_hits"])
	return nil
}

// cpuShare is how many CPUs, on average over a mode's run, this
// process used, everything else used, and were idle.
type cpuShare struct {
	Process float64 `json:"process"`
	Others  float64 `json:"others"`
	Idle    float64 `json:"idle"`
}

// cpuShares splits the CPUs of a run of length elapsed, in which this
// process used own and the machine's CPUs were busy for busy of total
// ticks (machineCPU; zero total where it cannot be read: only the
// process's share is known).
func cpuShares(own, elapsed time.Duration, busy, total uint64) cpuShare {
	sh := cpuShare{Process: own.Seconds() / elapsed.Seconds()}
	if total > 0 {
		n := float64(runtime.NumCPU())
		sh.Idle = n * float64(total-busy) / float64(total)
		sh.Others = max(0, n-sh.Idle-sh.Process)
	}
	return sh
}

// machineCPU returns the busy and total ticks of all CPUs so far
// (/proc/stat's first line: idle and iowait are not busy), or zeros.
func machineCPU() (busy, total uint64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			return 0, 0
		}
		if i < 8 { // user … steal; guest time is counted in user already
			total += n
			if i != 3 && i != 4 {
				busy += n
			}
		}
	}
	return busy, total
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// passedUp sums the tier's pass counters of packets for the node: not
// those for other ports (the other modes' traffic) or IPv6.
func passedUp(cs map[string]uint64) uint64 {
	var n uint64
	for k, v := range cs {
		if strings.HasPrefix(k, "xdp.pass.") && k != "xdp.pass.not_naam" && k != "xdp.pass.ipv6" {
			n += v
		}
	}
	return n
}

// nonzeroCounters names the counters that are not 0, for an error.
func nonzeroCounters(cs []nicrt.Counter) []string {
	var out []string
	for _, c := range cs {
		if c.Value != 0 {
			out = append(out, fmt.Sprintf("%s=%d", c.Name, c.Value))
		}
	}
	return out
}
