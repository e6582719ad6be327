package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
)

// callPlacement is naam call's --placement and --object: where the call
// runs, and the object a run at the client needs.
type callPlacement struct {
	placement string
	object    string
	defines   []string
}

func (c *callPlacement) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&c.placement, "placement", "", "where the handler runs: node, client (this process runs it over one-sided verbs; needs --object) or auto")
	cmd.Flags().StringVar(&c.object, "object", "", "the installed program's object (.nobj) or source (.naam), for --placement client or auto")
	cmd.Flags().StringArrayVarP(&c.defines, "define", "D", nil, "NAME=VALUE: a constant of --object's source, as it was installed")
}

// prepare checks the flags and gives p the object; it returns the
// placement (PlaceDefault without --placement).
func (c *callPlacement) prepare(stderr io.Writer, p *host.Peer) (host.Placement, error) {
	if c.placement == "" {
		if c.object != "" {
			return 0, cli.Errorf(cli.ExitUsage, "--object goes with --placement client or auto")
		}
		return host.PlaceDefault, nil
	}
	pl, err := parsePlacement(c.placement)
	if err != nil {
		return 0, err
	}
	if pl == host.AtNode {
		return pl, nil
	}
	if c.object == "" {
		return 0, cli.Errorf(cli.ExitUsage, "--placement %s: give the installed program's object with --object", c.placement)
	}
	obj, err := loadObject(stderr, c.object, c.defines)
	if err != nil {
		return 0, err
	}
	if err := p.AddObject(obj, host.InstallOptions{}); err != nil {
		return 0, cli.Errorf(cli.ExitUsage, "--object: %w", err)
	}
	return pl, nil
}

// parsePlacement reads a caller-side placement flag.
func parsePlacement(s string) (host.Placement, error) {
	switch s {
	case "host", "nic":
		return 0, cli.Errorf(cli.ExitUsage, "--placement %s: a call cannot force the node's NIC or host cores (the node's own --placement does); a caller places a call at the node (which places it on its cores), at the client or auto", s)
	}
	pl, err := host.ParsePlacement(s)
	if err != nil {
		return 0, cli.Errorf(cli.ExitUsage, "--placement: %q is not node, client or auto", s)
	}
	return pl, nil
}

// check refuses --placement client for a handler that cannot run at the
// client, rather than run it at the node.
func (c *callPlacement) check(h *host.Handler, pl host.Placement) error {
	if pl != host.AtClient || h.CanRunAtClient() {
		return nil
	}
	why := "the node's verifier found it not client-eligible (it writes, sends or forwards)"
	if h.ClientEligible {
		why = "the node runs another object than --object, or lacks a region it links"
	}
	return cli.Errorf(cli.ExitFailed, "--placement client: %s cannot run at the client: %s", h, why)
}

// callPlaced runs h where pl says (PlaceDefault: as CallRaw does) and, with
// --placement, says on stderr where it ran.
func callPlaced(ctx context.Context, stderr io.Writer, p *host.Peer, h *host.Handler, payload []byte, pl host.Placement) ([]byte, error) {
	if pl == host.PlaceDefault {
		return p.CallRaw(ctx, h.String(), payload)
	}
	reply, info, err := p.CallPlaced(ctx, h, payload, pl)
	if err == nil {
		fmt.Fprintf(stderr, "ran at the %s, %d round trip(s)\n", info.Placement, info.RoundTrips)
	}
	return reply, err
}
