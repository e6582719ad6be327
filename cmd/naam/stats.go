package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
)

func newStatsCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	var prefix string
	cmd := &cobra.Command{
		Use:   "stats ADDR",
		Short: "Print a node's counters",
		Long: `stats prints the counters of the node at ADDR, one "name value" per line,
sorted by name, or with -o json one document {"counters": {"name": value}}:
placements, runs, instructions, modelled cycles and DMA, per core, per
handler of the tenant (handler.PROGRAM.HANDLER.*, as calls name them) and
per verb (verb.read.*), rejections and drops by reason, the server's
traffic (spec/nic.md, Stats). --prefix narrows them. Reading them takes a
describe and a control packet per page of counters, which the node counts
as traffic (server.control, server.replies, rx and tx packets), never as
an error, a drop or a run.

` + cli.ExitHelp(),
		Example: `  naam stats 127.0.0.1:7000
  naam stats 127.0.0.1:7000 --prefix server.drop.
  naam stats 127.0.0.1:7000 --prefix handler.counter.add. -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				cs, err := p.Stats(ctx, prefix)
				if err != nil {
					return nodeError(err)
				}
				w := cmd.OutOrStdout()
				if out.json() {
					m := make(map[string]uint64, len(cs))
					for _, c := range cs {
						m[c.Name] = c.Value
					}
					return printJSON(w, struct {
						Counters map[string]uint64 `json:"counters"`
					}{m})
				}
				for _, c := range cs {
					fmt.Fprintf(w, "%s %d\n", c.Name, c.Value)
				}
				return nil
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	cmd.Flags().StringVar(&prefix, "prefix", "", "only counters whose names start with this")
	return cmd
}
