package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/internal/cli"
)

func main() { os.Exit(doMain(os.Args[1:], os.Stdout, os.Stderr)) }

func doMain(args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:   "naam",
		Short: "NAAM runtime: nodes, calls, the demo and benchmarks",
		Long: `naam runs NAAM nodes and talks to them: node runs one (regions, programs,
cluster membership, Prometheus metrics), call sends it one active message,
stats prints its counters, demo shows what NAAM does.`,
		Example: `  naam node --listen 127.0.0.1:7000 --region counters:4K --program counter.naam
  naam call 127.0.0.1:7000 add --arg slot=1 --arg by=2
  naam stats 127.0.0.1:7000 --prefix server.
  naam demo`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.AddCommand(newDemoCmd(), newNodeCmd(), newCallCmd(), newStatsCmd(), newBenchCmd())
	return cli.Exit(stderr, "naam", root.Execute())
}
