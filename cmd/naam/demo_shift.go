package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/naam-project/naam/nicrt"
)

// runShiftDemo is the demo's steering part: a node that steers a handler
// between its NIC and host cores, the host cores congested for a while,
// and the placement shares before, during and after (naam bench shift,
// shorter).
func runShiftDemo(ctx context.Context, w io.Writer) error {
	sf := shiftFlags{warmup: 50 * time.Millisecond, steady: 300 * time.Millisecond, congested: 300 * time.Millisecond,
		after: 300 * time.Millisecond, load: 0.95, bin: 5 * time.Millisecond, calls: 4}
	ncfg := nicrt.Config{Paced: true, Placement: nicrt.PolicySteer, Steering: nicrt.SteerRequest}
	o, err := runShiftLoad(ctx, ncfg, sf, sf.calls)
	if err != nil {
		return fmt.Errorf("steering: %w", err)
	}
	r := o.result(sf)
	fmt.Fprintf(w, "Steering: the node places each call of a handler either core may run (bound %d) on the NIC or the host\n", o.bound)
	fmt.Fprintf(w, "cores, whichever is expected to finish it first; %d calls in flight, the host cores congested (host load %.2f)\n", sf.calls, sf.load)
	fmt.Fprintf(w, "for %.0f ms, then released. Placement shares:\n\n", r.ReleaseAtMs-r.CongestAtMs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\thost cores\tNIC cores\t")
	for _, p := range []struct {
		name  string
		share float64
	}{{"before", r.HostShareBefore}, {"host congested", r.HostShareCongested}, {"after", r.HostShareAfter}} {
		fmt.Fprintf(tw, "%s\t%.0f%%\t%.0f%%\t\n", p.name, 100*p.share, 100*(1-p.share))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nMoved to the NIC in %s, back in %s; %d calls, %d lost, %d run twice (each call takes a ticket, counted).\n",
		optMs(r.ShiftMs), optMs(r.ReturnMs), r.Calls, r.Lost, r.Duplicated)
	if o.firstErr != nil {
		fmt.Fprintf(w, "The first call that failed: %v\n", o.firstErr)
	}
	return nil
}
