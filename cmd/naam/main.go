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
		Long: `naam runs NAAM nodes and talks to them.

Run a node:
  node       run one (regions, programs, cluster membership, metrics)
Manage a running node (over the control plane, as the tenant):
  install    compile or read a program and install it
  uninstall  remove a program
  programs   list the programs
  region     create, load, dump, ls, rm: the regions
  read, write, cas, faa
             the verbs on a region
  call       send one active message and print the decoded reply
  stats      print the node's counters
See what NAAM does:
  demo       three nodes, active messages against RDMA-style reads
  bench      the YCSB and pointer-chase benchmarks
  sim        a deterministic simulation of thousands of nodes

ADDR is HOST:PORT, the node's active-message address (HOST an IP address
or a host name), or with --join GOSSIP-ADDR a member's name. Commands that
print data take -o json. The exact forms and output are in spec/cli.md.

` + cli.ExitHelp(),
		Example: `  naam node --listen 127.0.0.1:7000 --region counters:4K --program counter.naam
  naam install 127.0.0.1:7000 counter.naam
  naam call 127.0.0.1:7000 add --arg slot=1 --arg by=2
  naam stats 127.0.0.1:7000 --prefix server. -o json
  naam demo`,
		Version:       cli.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	// A bad flag or argument is a usage error (exit 2), whatever cobra
	// calls it.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.Errorf(cli.ExitUsage, "%w", err) })
	root.AddCommand(newDemoCmd(), newNodeCmd(), newCallCmd(), newStatsCmd(), newBenchCmd(),
		newInstallCmd(), newUninstallCmd(), newProgramsCmd(), newRegionCmd(), newSimCmd(),
		newReadCmd(), newWriteCmd(), newCASCmd(), newFAACmd())
	return cli.Exit(stderr, "naam", root.Execute())
}
