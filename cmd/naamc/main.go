package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

func main() { os.Exit(doMain(os.Args[1:], os.Stdout, os.Stderr)) }

// exitError carries the process exit code of a failed command; its message
// has already been printed when msg is empty.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// Exit codes: 0 success, 1 the input was rejected or the program faulted,
// 2 the tool itself failed (bad flags, unreadable file).
const (
	exitOK       = 0
	exitRejected = 1
	exitTool     = 2
)

func doMain(args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.msg != "" {
			fmt.Fprintln(stderr, "naamc:", ee.msg)
		}
		return ee.code
	}
	fmt.Fprintln(stderr, "naamc:", err)
	return exitTool
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "naamc",
		Short: "NAAM compiler and eBPF bytecode tool",
		Long: `naamc turns NAAM handlers into verified eBPF objects and works with raw eBPF.

Available now: the eBPF assembler and disassembler (the bpf_conformance text
syntax), the interpreter in raw mode, the verifier (verify: raw programs and
.nobj objects) and the language's front end (check). The compiler (build,
run, and disasm of objects) is not built yet.`,
		Example: `  naamc asm prog.s -o prog.bin
  naamc disasm prog.bin
  naamc vm --mem-hex "01 02 03 04" prog.s
  naamc verify --raw --mem-size 64 prog.s
  naamc check kv.naam`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.AddCommand(newAsmCmd(), newDisasmCmd(), newVMCmd(), newVerifyCmd(), newCheckCmd())
	return root
}
