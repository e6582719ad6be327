package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/examples/rpc"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/internal/cli"
)

func newDemoCmd() *cobra.Command {
	var perMode time.Duration
	var records uint64
	var ops uint64
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a local 3-node cluster and compare active messages with RDMA-style access",
		Long: `demo starts three NAAM nodes in this process on loopback UDP (they find each
other through membership), compiles and installs the example handlers,
loads data, and runs a short workload twice: once with one active message
per operation, once the way an RDMA client does it, with one-sided READs.
It prints round trips per operation, median and p99 latency and throughput
for a KV GET and for a 64-hop pointer chase; the same GET handler run at
the client (fetching what it reads with READs), on a NIC core and on a
host core, one GET at a time; where it can (root, XDP),
the same GETs answered in the kernel by the XDP tier beside the node in
user space, over a veth pair between two namespaces (elsewhere one line
says why not); a node steering a handler between its NIC and host cores
while its host cores congest and recover (placement shares before,
during and after); then runs the benchmark programs in the eBPF interpreter
beside the kernel's JIT.`,
		Example: "  naam demo\n  naam demo --records 100000 --ops 50000",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if perMode <= 0 {
				return fmt.Errorf("--time must be positive")
			}
			if records == 0 || ops == 0 {
				return fmt.Errorf("--records and --ops must be positive")
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Minute)
			defer cancel()
			w := cmd.OutOrStdout()
			if err := runClusterDemo(ctx, w, records, ops); err != nil {
				return &cli.ExitError{Code: 1, Err: err}
			}
			fmt.Fprintln(w)
			if err := runXDPDemo(ctx, w, records, ops); err != nil {
				return &cli.ExitError{Code: 1, Err: err}
			}
			fmt.Fprintln(w)
			if err := runShiftDemo(ctx, w); err != nil {
				return &cli.ExitError{Code: 1, Err: err}
			}
			fmt.Fprintln(w)
			fmt.Fprintln(w, "The handler VM: the benchmark programs in the eBPF interpreter beside the kernel's JIT.")
			fmt.Fprintln(w)
			return runEngines(w, perMode)
		},
	}
	cmd.Flags().DurationVar(&perMode, "time", 100*time.Millisecond, "how long to time each program in each engine")
	cmd.Flags().Uint64Var(&records, "records", 50_000, "KV records to load")
	cmd.Flags().Uint64Var(&ops, "ops", 20_000, "KV GETs per mode (the pointer chase runs a tenth by message, a hundredth by READs)")
	return cmd
}

// demoRow is one line of the cluster table.
type clusterRow struct {
	op, how string
	st      *workload.Stats
}

func runClusterDemo(ctx context.Context, w io.Writer, records, ops uint64) error {
	fmt.Fprintln(w, "NAAM demo: a 3-node cluster on loopback UDP, real messages")
	fmt.Fprintln(w)
	kvNode, err := host.Start(host.Config{Name: "kv", Gossip: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	defer kvNode.Close()
	chaseNode, err := host.Start(host.Config{Name: "chase", Join: []string{kvNode.GossipAddr()}})
	if err != nil {
		return err
	}
	defer chaseNode.Close()
	client, err := host.Start(host.Config{Name: "client", Join: []string{kvNode.GossipAddr()}})
	if err != nil {
		return err
	}
	defer client.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(client.Members()) < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	for _, m := range client.Members() {
		fmt.Fprintf(w, "  member %-7s id %-10d active messages at %v\n", m.Name, m.ID, m.Addr)
	}

	const valueSize = 64
	start := time.Now()
	kvs, err := startKV(ctx, kvNode, client, records, valueSize)
	if err != nil {
		return fmt.Errorf("kv: %w", err)
	}
	const listNodes, hops = 4096, 64
	cs, err := startChase(ctx, chaseNode, client, listNodes, hops)
	if err != nil {
		return fmt.Errorf("chase: %w", err)
	}
	fmt.Fprintf(w, "\nInstalled the compiled, verified kv handlers on kv and loaded %d records (%d-byte values,\n", records, valueSize)
	fmt.Fprintf(w, "%d buckets in a %d KiB region); a %d-node linked list and the walk handler on chase (%v).\n",
		kvs.cfg.Buckets, kvs.cfg.RegionSize()>>10, listNodes, time.Since(start).Round(time.Millisecond))

	const clients, outstanding = 2, 4
	run := func(targets []workload.Target, n uint64) (*workload.Stats, error) {
		st, err := workload.Run(ctx, workload.Config{
			Mix: workload.MixC, Keys: workload.Uniform, Records: records, ValueSize: valueSize,
			Clients: clients, Outstanding: outstanding, Ops: n, Duration: 10 * time.Second,
		}, targets)
		if err == nil && st.Errors > 0 {
			err = fmt.Errorf("%d of %d operations failed, the first: %v", st.Errors, st.Errors+st.Ops, st.FirstError)
		}
		return st, err
	}
	var rows []clusterRow
	for _, r := range []struct {
		op, how, mode string
		targets       func(string, int) []workload.Target
		n             uint64
	}{
		{"KV GET", "active message: hash, probe, copy on the node", workload.ModeAM, kvs.targets, ops},
		{"KV GET", "RDMA-style: READ the bucket, READ the value", workload.ModeRDMA, kvs.targets, ops},
		{"64-hop chase", "active message: the walk runs on the node", workload.ModeAM, cs.targets, max(ops/10, 1)},
		{"64-hop chase", "RDMA-style: one READ per hop", workload.ModeRDMA, cs.targets, max(ops/100, 1)},
	} {
		st, err := run(r.targets(r.mode, clients), r.n)
		if err != nil {
			return fmt.Errorf("%s, %s: %w", r.op, r.mode, err)
		}
		rows = append(rows, clusterRow{r.op, r.how, st})
	}
	fmt.Fprintf(w, "\n%d clients × %d requests in flight, uniform keys, every operation checked:\n\n", clients, outstanding)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "operation\thow\tops\tround trips/op\tp50 µs\tp99 µs\tops/s\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.2f\t%.1f\t%.1f\t%.0f\t\n", r.op, r.how, r.st.Ops, r.st.RoundTripsPerOp(),
			float64(r.st.Latency.Quantile(0.5))/1e3, float64(r.st.Latency.Quantile(0.99))/1e3, r.st.OpsPerSec())
	}
	tw.Flush()
	get, rget, walk, rwalk := rows[0].st, rows[1].st, rows[2].st, rows[3].st
	fmt.Fprintln(w)
	fmt.Fprintf(w, "What this shows: an RDMA client must fetch the index before it knows where the value is,\n")
	fmt.Fprintf(w, "so a GET costs it %.2f round trips; the active message carries the lookup to the data and\n", rget.RoundTripsPerOp())
	fmt.Fprintf(w, "answers in %.2f (median %.1f µs against %.1f µs). A pointer chase multiplies it: %d hops\n",
		get.RoundTripsPerOp(), float64(get.Latency.Quantile(0.5))/1e3, float64(rget.Latency.Quantile(0.5))/1e3, hops)
	fmt.Fprintf(w, "are %.0f round trips one-sided (%.0f µs median) and %.0f as one message (%.1f µs). The handlers\n",
		rwalk.RoundTripsPerOp(), float64(rwalk.Latency.Quantile(0.5))/1e3, walk.RoundTripsPerOp(), float64(walk.Latency.Quantile(0.5))/1e3)
	fmt.Fprintln(w, "are eBPF compiled from .naam sources and verified before they run: memory-safe and bounded")
	fmt.Fprintln(w, "(the walk's proven worst case fits the NIC's instruction budget), so a shared NIC core can run them.")
	fmt.Fprintln(w, "Latencies here are loopback UDP through the kernel on this machine, not a real NIC.")
	fmt.Fprintln(w)
	if err := demoPlacement(ctx, w, kvNode, kvs, records, max(ops/10, 1)); err != nil {
		return fmt.Errorf("run anywhere: %w", err)
	}
	return demoLedger(ctx, w, kvNode, chaseNode, client)
}

// demoLedger installs the ledger on two nodes and moves money between
// them with handlers that send and forward.
func demoLedger(ctx context.Context, w io.Writer, a, b, caller *host.Node) error {
	cfg := rpc.Config{Accounts: 16, History: 64}
	ca, err := ledgerOn(ctx, a, caller, cfg, []uint64{uint64(b.ID())})
	if err != nil {
		return err
	}
	cb, err := ledgerOn(ctx, b, caller, cfg, []uint64{uint64(a.ID())})
	if err != nil {
		return err
	}
	if _, _, err := ca.Deposit(ctx, 0, 500); err != nil {
		return err
	}
	left, _, err := ca.TransferOut(ctx, 0, 3, 120, uint64(b.ID()))
	if err != nil {
		return fmt.Errorf("transfer_out: %w", err)
	}
	var got uint64
	deadline := time.Now().Add(5 * time.Second)
	for got != 120 && time.Now().Before(deadline) {
		if got, _, err = ca.BalanceAt(ctx, uint64(b.ID()), 3); err != nil {
			return fmt.Errorf("balance_at: %w", err)
		}
	}
	direct, _, err := cb.Balance(ctx, 3)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nTwo nodes, one operation: the ledger handler on %s debited account 0 (500 → %d) and sent\n", a.Name(), left)
	fmt.Fprintf(w, "the credit to %s with send; a balance request to %s for %s's account 3 was forwarded\n", b.Name(), a.Name(), b.Name())
	fmt.Fprintf(w, "there and answered by %s directly: %d (asked of %s itself: %d).\n", b.Name(), got, b.Name(), direct)
	if got != 120 || direct != 120 {
		return fmt.Errorf("the credit did not arrive: balance %d", got)
	}
	return nil
}
