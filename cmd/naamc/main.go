package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/internal/cli"
)

func main() { os.Exit(doMain(os.Args[1:], os.Stdout, os.Stderr)) }

// Exit codes: the table of internal/cli (spec/cli.md). 1: the input was
// rejected or the program failed or faulted; 2: a usage or input error.
const (
	exitOK       = cli.ExitOK
	exitRejected = cli.ExitFailed
	exitTool     = cli.ExitUsage
)

func doMain(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	return cli.Exit(stderr, "naamc", root.Execute())
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "naamc",
		Short: "NAAM compiler and eBPF bytecode tool",
		Long: `naamc turns NAAM handlers into verified eBPF objects and works with raw eBPF.

Handlers (spec/language.md) and objects (.nobj, spec/object.md):
  build    compile FILE.naam into a verified object
  check    parse and type-check sources (the front end only)
  verify   prove an object or a raw program safe, with its worst-case insns
  disasm   list an object (source lines, labels, layouts) or raw slots
  run      run one handler of an object in the interpreter

Raw eBPF (the bpf_conformance text syntax):
  asm      assemble text into raw instruction slots
  vm       run a raw program in the interpreter

` + cli.ExitHelp(),
		Example: `  naamc build kv.naam && naamc disasm kv.nobj
  naamc run kv.nobj put --arg key=alice --arg value=7 --region-out table=table.bin
  naamc run kv.nobj get --arg key=alice --region table=table.bin
  naamc verify kv.nobj
  naamc check kv.naam
  naamc asm prog.s -o prog.bin && naamc disasm prog.bin
  naamc vm --mem-hex "01 02 03 04" prog.s
  naamc verify --raw --mem-size 64 prog.s`,
		Version:       cli.Version(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Name}} {{.Version}}\n")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newBuildCmd(), newCheckCmd(), newVerifyCmd(), newDisasmCmd(), newRunCmd(), newAsmCmd(), newVMCmd())
	return root
}
