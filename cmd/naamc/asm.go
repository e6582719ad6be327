package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
)

func newAsmCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "asm FILE.s [-o FILE.bin]",
		Short: "Assemble eBPF text into raw instruction slots",
		Long: `asm assembles eBPF in the bpf_conformance text syntax (mov %r0, 1;
ldxdw %r0, [%r1+8]; lock cmpxchg [%r10-8], %r1; labels; # comments) into a file
of little-endian 8-byte instruction slots. Errors name FILE:line:col and what
was expected; all of them are reported.`,
		Example: `  naamc asm prog.s -o prog.bin
  naamc asm prog.s            # writes prog.bin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{code: exitTool, msg: err.Error()}
			}
			insns, err := bytecode.Assemble(string(src))
			if err != nil {
				return rejected(cmd, args[0]+":", err)
			}
			raw, err := bytecode.Encode(insns)
			if err != nil {
				return rejected(cmd, args[0]+":", err)
			}
			if out == "" {
				out = strings.TrimSuffix(args[0], ".s") + ".bin"
			}
			if err := os.WriteFile(out, raw, 0o644); err != nil {
				return &exitError{code: exitTool, msg: err.Error()}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default: FILE with .s replaced by .bin)")
	return cmd
}

// rejected prints err, one line per error after prefix (the file name), and
// returns the exit code for rejected input.
func rejected(cmd *cobra.Command, prefix string, err error) error {
	for _, line := range strings.Split(err.Error(), "\n") {
		if line != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s%s\n", prefix, line)
		}
	}
	return &exitError{code: exitRejected}
}
