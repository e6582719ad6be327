package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
)

func newCheckCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE.naam...",
		Short: "Parse and type-check handler sources (the front end only)",
		Long: `check runs the language front end (spec/language.md) on each file: scanner,
parser and type checker. Nothing is compiled.

Valid: exit 0 and one line per file, "FILE: ok: H handlers, R regions, F fns".
Invalid: exit 1 and every error, sorted, as "file:line:col: message" followed
by the source line and a caret under the column. A file that does not parse
is not type-checked; the parser stops after 10 errors. Exit 2 means naamc
itself failed (an unreadable file).`,
		Example: `  naamc check kv.naam
  naamc check examples/kv/*.naam`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fset := lang.NewFileSet()
			bad := 0
			for _, name := range args {
				src, err := os.ReadFile(name)
				if err != nil {
					return &cli.ExitError{Code: exitTool, Err: err}
				}
				_, info, err := lang.CheckSource(fset, name, src)
				if err != nil {
					lang.Print(cmd.ErrOrStderr(), fset, err)
					bad++
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok: %s, %s, %s\n", name,
					plural(len(info.Handlers), "handler"), plural(len(info.Regions), "region"), plural(len(info.Funcs), "fn"))
			}
			if bad > 0 {
				return &cli.ExitError{Code: exitRejected}
			}
			return nil
		},
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
