package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/verifier"
)

func newBuildCmd() *cobra.Command {
	var (
		out      string
		noVerify bool
		budget   uint64
		defines  []string
	)
	cmd := &cobra.Command{
		Use:   "build FILE.naam [-D NAME=VALUE]... [-o FILE.nobj] [--no-verify] [--budget N]",
		Short: "Compile handler source into a verified object (.nobj)",
		Long: `build compiles FILE.naam (spec/language.md) into an object (spec/object.md),
verifies it as naamc verify would, and writes it to FILE.nobj next to the
source unless -o says otherwise. The same source and -D flags always give
the same bytes.

-D NAME=VALUE gives the top-level constant NAME the value VALUE (an integer
literal such as 4096 or 0x1000, or true or false) in place of the one it is
declared with; constants derived from it follow. The object keeps the
source as written.

Success: exit 0 and one line per handler on stdout,
"NAME: id ID, request R bytes, reply P bytes, max-insns=K, client-eligible"
(or ", not client-eligible: insn N (file:line): why": spec/verifier.md),
ending in ", reads N ranges" for a handler with a reads clause.
Front-end and compile errors: exit 1 and every error, sorted, as
"file:line:col: message" with the source line and a caret (as naamc check);
a -D value of the wrong kind or out of its constant's type's range is such
an error, at the constant's declaration.
Rejected by the verifier: exit 1, "insn K (file:line): reason [code]" and the
registers involved, and nothing is written. --no-verify writes the object
without verifying it (the summary then says "not verified"). Exit 2 means
naamc itself failed or was called wrongly: an unreadable file, a -D that is
not NAME=VALUE or whose value is not a literal, a -D naming no constant of
the file ("-D NAME: no constant NAME is declared in FILE"), an internal
compiler error.`,
		Example: `  naamc build kv.naam                 # writes kv.nobj
  naamc build kv.naam -o /tmp/kv.nobj
  naamc build kv.naam -D BUCKETS=4096 -D PROBES=8 -o kv4k.nobj
  naamc build --budget 1000000 scan.naam
  naamc build --no-verify wip.naam && naamc disasm wip.nobj`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			conf, err := frontEnd(defines)
			if err != nil {
				return err
			}
			obj, err := compileFile(cmd, args[0], conf)
			if err != nil {
				return err
			}
			var rep *verifier.Report
			if !noVerify {
				if rep, err = verifyObject(cmd, obj, budget); err != nil {
					return err
				}
			}
			data, err := obj.Marshal()
			if err != nil {
				return cli.Errorf(exitTool, "internal compiler error: %w", err)
			}
			if out == "" {
				out = outputName(args[0], ".nobj")
			}
			if err := os.WriteFile(out, data, 0o644); err != nil {
				return &cli.ExitError{Code: exitTool, Err: err}
			}
			return printBuildSummary(cmd.OutOrStdout(), obj, rep)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "output file (default: FILE with its extension replaced by .nobj)")
	f.BoolVar(&noVerify, "no-verify", false, "write the object without verifying it")
	f.Uint64Var(&budget, "budget", 0, fmt.Sprintf("largest accepted worst-case instruction count per handler (0: %d)", verifier.DefaultBudget))
	defineFlag(cmd, &defines)
	return cmd
}

// compileFile compiles one source file; errors are printed as naamc check
// prints them.
func compileFile(cmd *cobra.Command, path string, conf lang.Config) (*bytecode.Object, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, &cli.ExitError{Code: exitTool, Err: err}
	}
	fset := lang.NewFileSet()
	obj, err := compiler.CompileWith(conf, fset, path, src)
	if err != nil {
		rejected, usage := reportFrontEnd(cmd, fset, err)
		switch {
		case rejected:
			return nil, &cli.ExitError{Code: exitRejected}
		case usage != nil:
			return nil, usage
		}
		return nil, cli.Errorf(exitTool, "internal compiler error: %w", err)
	}
	return obj, nil
}

// printBuildSummary prints one line per handler; rep is nil when the object
// was not verified.
func printBuildSummary(w io.Writer, obj *bytecode.Object, rep *verifier.Report) error {
	for i, h := range obj.Handlers {
		req, err := bytecode.ParseLayout(h.Args)
		if err != nil {
			return cli.Errorf(exitTool, "internal compiler error: handler %s: %v", h.Name, err)
		}
		reply, err := bytecode.ParseLayout(h.Results)
		if err != nil {
			return cli.Errorf(exitTool, "internal compiler error: handler %s: %v", h.Name, err)
		}
		bound := "not verified"
		if rep != nil && i < len(rep.Entries) {
			bound = fmt.Sprintf("max-insns=%d%s", rep.Entries[i].MaxInsns, clientNote(rep.Entries[i], ", "))
		}
		reads := ""
		if h.HasAccess() {
			reads = ", reads " + plural(int(h.MaxRanges), "range")
		}
		fmt.Fprintf(w, "%s: id %d, request %d bytes, reply %d bytes, %s%s\n", h.Name, h.ID, req.Size, reply.Size, bound, reads)
	}
	return nil
}

// outputName is src with its extension replaced by ext; a src already named
// so gets ext a second time rather than be overwritten.
func outputName(src, ext string) string {
	out := strings.TrimSuffix(src, filepath.Ext(src)) + ext
	if out == src {
		out += ext
	}
	return out
}
