package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/cli"
)

func newAsmCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "asm FILE.s [-o FILE.bin]",
		Short: "Assemble eBPF text into raw instruction slots",
		Long: `asm assembles eBPF in the bpf_conformance text syntax (mov %r0, 1;
ldxdw %r0, [%r1+8]; lock cmpxchg [%r10-8], %r1; labels; # comments) into a file
of little-endian 8-byte instruction slots (FILE.bin unless -o says otherwise).
Errors name FILE:line:col and what was expected; all of them are reported,
up to 10 (spec/assembly.md says which wait for others to be fixed).`,
		Example: `  naamc asm prog.s -o prog.bin
  naamc asm prog.s            # writes prog.bin
  naamc asm prog.asm          # writes prog.bin too`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := os.ReadFile(args[0])
			if err != nil {
				return &cli.ExitError{Code: exitTool, Err: err}
			}
			insns, err := bytecode.Assemble(string(src))
			if err != nil {
				return syntaxRejected(cmd, args[0], src, err)
			}
			raw, err := bytecode.Encode(insns)
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			if out == "" {
				out = defaultOutput(args[0])
			}
			if err := os.WriteFile(out, raw, 0o644); err != nil {
				return &cli.ExitError{Code: exitTool, Err: err}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "output file (default: FILE with its extension replaced by .bin)")
	return cmd
}

// defaultOutput is FILE with its extension (.s, .asm, ...) replaced by .bin;
// a FILE already named .bin gets a second .bin rather than be overwritten.
func defaultOutput(src string) string {
	out := strings.TrimSuffix(src, filepath.Ext(src)) + ".bin"
	if out == src {
		out += ".bin"
	}
	return out
}

// rejected prints err, one line per error after prefix (the file name), and
// returns the exit code for rejected input.
func rejected(cmd *cobra.Command, prefix string, err error) error {
	for _, line := range strings.Split(fmt.Sprintf("%+v", err), "\n") {
		if line != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "%s%s\n", prefix, line)
		}
	}
	return &cli.ExitError{Code: exitRejected}
}

// syntaxRejected prints every assembler error as file:line:col: message,
// followed by the source line and a caret under the column.
func syntaxRejected(cmd *cobra.Command, file string, src []byte, err error) error {
	var list bytecode.ErrorList
	if !errors.As(err, &list) {
		return rejected(cmd, file+": ", err)
	}
	lines := strings.Split(string(src), "\n")
	w := cmd.ErrOrStderr()
	for _, e := range list {
		fmt.Fprintf(w, "%s:%s\n", file, e)
		if e.Line >= 1 && e.Line <= len(lines) {
			text := strings.TrimRight(lines[e.Line-1], "\r")
			fmt.Fprintf(w, "\t%s\n\t%s^\n", text, caretPad(text, e.Col))
		}
	}
	return &cli.ExitError{Code: exitRejected}
}

// caretPad returns the whitespace that puts a caret under byte column col
// of text, keeping tabs so that the caret lines up.
func caretPad(text string, col int) string {
	var b strings.Builder
	for i := 0; i < col-1 && i < len(text); i++ {
		if text[i] == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}
