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
		Long: `naam runs NAAM nodes and talks to them.

Available now: demo, which runs the eBPF interpreter on the benchmark
programs beside the kernel's JIT. The cluster commands (node, call, stats,
bench) come with the NIC runtime and the host library.`,
		Example:       "  naam demo\n  naam demo --time 100ms",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.AddCommand(newDemoCmd())
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
