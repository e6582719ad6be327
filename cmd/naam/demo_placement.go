package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt"
)

// demoPlacement is the demo's run-anywhere part: the same verified GET
// handler run at the client (its declared reads fetched with READs), on
// the node's NIC cores and on its host cores, one GET at a time, with the
// round trips and latency of each (naam bench kv --placement, shorter).
func demoPlacement(ctx context.Context, w io.Writer, server *host.Node, s *kvService, records, ops uint64) error {
	nic := server.NIC()
	defer nic.SetPlacement(nicrt.PolicyAuto)
	type row struct {
		where string
		st    *workload.Stats
		ran   string
	}
	var rows []row
	for _, m := range []struct {
		where  string
		pl     host.Placement
		policy nicrt.PlacementPolicy
	}{
		{"at the client", host.AtClient, nicrt.PolicyAuto},
		{"on a NIC core", host.AtNode, nicrt.PolicyNIC},
		{"on a host core", host.AtNode, nicrt.PolicyHost},
	} {
		if err := nic.SetPlacement(m.policy); err != nil {
			return err
		}
		p, get, err := dialPlaced(ctx, server, s, m.pl, "")
		if err != nil {
			return fmt.Errorf("%s: %w", m.where, err)
		}
		before := nic.Stats().Placed()
		pc := &placedCaller{p: p}
		st, err := workload.Run(ctx, workload.Config{
			Mix: workload.MixC, Keys: workload.Uniform, Records: records, ValueSize: 64,
			Clients: 1, Outstanding: 1, Ops: ops, Duration: 10 * time.Second,
		}, []workload.Target{placedTarget{c: kv.NewClient(pc, s.cfg, s.ids), pc: pc}})
		ps := get.PlacementStats()
		p.Close()
		if err == nil && st.Errors > 0 {
			err = fmt.Errorf("%d of %d GETs failed, the first: %v", st.Errors, st.Errors+st.Ops, st.FirstError)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", m.where, err)
		}
		after := nic.Stats().Placed()
		ran := fmt.Sprintf("%d at the client", ps.Client)
		if m.pl == host.AtNode {
			ran = fmt.Sprintf("%d on NIC cores, %d on host cores", after[nicrt.PlaceNIC]-before[nicrt.PlaceNIC],
				(after.Total()-after[nicrt.PlaceNIC])-(before.Total()-before[nicrt.PlaceNIC]))
		}
		rows = append(rows, row{m.where, st, ran})
	}
	fmt.Fprintln(w, "Run anywhere: the same verified GET handler, one GET at a time, run at the client (its declared")
	fmt.Fprintln(w, "reads fetched with READs), on a NIC core and on a host core of the node:")
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "GET run\tGETs\tround trips/GET\tp50 µs\tp99 µs\twhere they ran\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.1f\t%s\t\n", r.where, r.st.Ops, r.st.RoundTripsPerOp(),
			float64(r.st.Latency.Quantile(0.5))/1e3, float64(r.st.Latency.Quantile(0.99))/1e3, r.ran)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nThe NIC and host cores are the node's model, goroutines on this machine's CPUs here, not paced.")
	return nil
}
