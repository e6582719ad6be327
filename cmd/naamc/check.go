package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
)

func newCheckCmd() *cobra.Command {
	var defines []string
	cmd := &cobra.Command{
		Use:   "check [-D NAME=VALUE]... FILE.naam...",
		Short: "Parse and type-check handler sources (the front end only)",
		Long: `check runs the language front end (spec/language.md) on each file: scanner,
parser and type checker. Nothing is compiled.

Valid: exit 0 and one line per file, "FILE: ok: H handlers, R regions, F fns".
Invalid: exit 1 and every error, sorted, as "file:line:col: message" followed
by the source line and a caret under the column. A file that does not parse
is not type-checked; the parser stops after 10 errors. -D NAME=VALUE
overrides a constant as naamc build's does, in every file; a -D value of
the wrong kind or range is an error at the declaration (exit 1). Exit 2
means naamc itself failed or was called wrongly (an unreadable file, a bad
-D, a -D naming no constant of a file).`,
		Example: `  naamc check kv.naam
  naamc check -D BUCKETS=4096 examples/kv/kv.naam
  naamc check examples/*/*.naam`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conf, err := frontEnd(defines)
			if err != nil {
				return err
			}
			fset := lang.NewFileSet()
			bad := 0
			for _, name := range args {
				src, err := os.ReadFile(name)
				if err != nil {
					return &cli.ExitError{Code: exitTool, Err: err}
				}
				_, info, err := conf.CheckSource(fset, name, src)
				if err != nil {
					rejected, usage := reportFrontEnd(cmd, fset, err)
					switch {
					case usage != nil:
						return usage
					case !rejected:
						return &cli.ExitError{Code: exitTool, Err: err}
					}
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
	defineFlag(cmd, &defines)
	return cmd
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
