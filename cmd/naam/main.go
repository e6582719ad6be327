package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
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
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "naam:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			return ee.code
		}
		return 2
	}
	return 0
}

type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
