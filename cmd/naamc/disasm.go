package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
)

func newDisasmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "disasm FILE.bin",
		Short: "Print raw instruction slots as eBPF text",
		Long: `disasm prints a file of little-endian 8-byte instruction slots in the
syntax naamc asm reads; assembling the output gives the same bytes back.
A malformed stream is reported with the slot index of the first bad
instruction; assembly text (a .s or .asm file, or any file but a .bin
without NUL bytes) is refused with a pointer to naamc asm.`,
		Example: `  naamc disasm prog.bin
  naamc disasm prog.bin > prog.s && naamc asm prog.s -o again.bin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return &exitError{code: exitTool, msg: err.Error()}
			}
			if isText(args[0], raw) {
				return &exitError{code: exitRejected, msg: args[0] + " looks like assembly text, not raw instruction slots (use naamc asm)"}
			}
			insns, err := bytecode.Decode(raw)
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			text, err := bytecode.Disassemble(insns)
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), text)
			return err
		},
	}
}
