package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt"
)

// runXDPDemo shows the XDP tier where it can run: over a veth pair
// between two namespaces, the same KV GETs to a node answering them in
// the kernel and to one answering them in user space; elsewhere one line
// saying why it was skipped.
func runXDPDemo(ctx context.Context, w io.Writer, records, ops uint64) error {
	b, err := newXDPBench()
	if err != nil {
		fmt.Fprintf(w, "XDP tier: skipped: %v\n", err)
		return nil
	}
	defer b.Close()
	records, ops = min(records, 50_000), min(ops, 20_000)
	fmt.Fprintln(w, "XDP tier: KV GETs over a veth pair between two network namespaces, answered")
	fmt.Fprintln(w, "in the kernel's XDP hook beside the same node in user space")
	fmt.Fprintln(w)
	cfg := workload.Config{Mix: workload.MixC, Keys: workload.Uniform, Records: records, ValueSize: 64, Clients: 2, Outstanding: 8, Ops: ops}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "node\tGETs\tops/s\tp50 µs\tp99 µs\tin the kernel\t")
	for _, m := range []struct {
		name string
		n    *host.Node
	}{{"user space (am)", b.user}, {"XDP (am-xdp)", b.kernel}} {
		var s *kvService
		if err := b.pair.Run(1, func() error {
			var err error
			s, err = startKV(ctx, m.n, b.client, records, 64)
			return err
		}); err != nil {
			return fmt.Errorf("xdp demo: kv: %w", err)
		}
		before := counterValue(m.n.XDPCounters(), "xdp.runs")
		st, err := workload.Run(ctx, cfg, s.targets(workload.ModeAM, cfg.Clients))
		if err != nil {
			return fmt.Errorf("xdp demo: %w", err)
		}
		if st.Errors > 0 {
			return fmt.Errorf("xdp demo: %d GETs failed; the first: %v", st.Errors, st.FirstError)
		}
		r := st.ModeResult(m.name)
		fmt.Fprintf(tw, "%s\t%d\t%.0f\t%.1f\t%.1f\t%d\t\n", m.name, st.Ops, r.OpsPerSec, r.P50us, r.P99us, counterValue(m.n.XDPCounters(), "xdp.runs")-before)
	}
	tw.Flush()
	return nil
}

// counterValue is the value of the counter called name, 0 without it.
func counterValue(cs []nicrt.Counter, name string) uint64 {
	for _, c := range cs {
		if c.Name == name {
			return c.Value
		}
	}
	return 0
}
