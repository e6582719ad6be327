package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/lang"
)

// loadObject reads an object file (.nobj), or compiles a handler source
// (.naam) with the -D overrides. An override on an object file, one that
// names no constant, or a file that cannot be read is a usage error; the
// source's own errors are printed with file:line:col (exit 1).
func loadObject(stderr io.Writer, file string, defines []string) (*bytecode.Object, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, cli.Errorf(cli.ExitUsage, "%w", err)
	}
	if filepath.Ext(file) != ".naam" {
		if len(defines) > 0 {
			return nil, cli.Errorf(cli.ExitUsage, "-D %s: %s is an object file; overrides apply to a .naam source", defines[0], file)
		}
		obj, err := bytecode.UnmarshalObject(b)
		if err != nil {
			return nil, cli.Errorf(cli.ExitUsage, "%s: %w", file, err)
		}
		return obj, nil
	}
	consts, err := lang.ParseOverrides(defines)
	if err != nil {
		return nil, cli.Errorf(cli.ExitUsage, "-D %w", err)
	}
	fset := lang.NewFileSet()
	obj, err := compiler.CompileWith(lang.Config{Constants: consts}, fset, filepath.Base(file), b)
	var oe *lang.OverrideError
	switch {
	case errors.As(err, &oe):
		return nil, cli.Errorf(cli.ExitUsage, "-D %s: %s in %s", oe.Name, oe.Msg, file)
	case err != nil:
		lang.Print(stderr, fset, err)
		return nil, &cli.ExitError{Code: cli.ExitFailed}
	}
	return obj, nil
}

// parseBindings reads --bind OBJREGION=REGION flags.
func parseBindings(binds []string) (host.InstallOptions, error) {
	var opts host.InstallOptions
	for _, b := range binds {
		obj, reg, ok := strings.Cut(b, "=")
		if !ok || obj == "" || reg == "" {
			return opts, cli.Errorf(cli.ExitUsage, "--bind %q: want OBJREGION=REGION", b)
		}
		if _, dup := opts.Regions[obj]; dup {
			return opts, cli.Errorf(cli.ExitUsage, "--bind: region %s bound twice", obj)
		}
		if opts.Regions == nil {
			opts.Regions = map[string]string{}
		}
		opts.Regions[obj] = reg
	}
	return opts, nil
}

func newInstallCmd() *cobra.Command {
	var cf clientFlags
	var defines, binds []string
	cmd := &cobra.Command{
		Use:   "install ADDR FILE.naam|FILE.nobj",
		Short: "Install a program on a running node",
		Long: `install compiles FILE.naam here (with -D NAME=VALUE overrides of its
constants, as naamc build takes them) or reads FILE.nobj, and sends it to
the node at ADDR over the control plane, which verifies it and links its
regions to the tenant's registered regions by name (--bind OBJREGION=REGION
links one to another name). It prints the program and its handlers:
  installed counter (program 1, counter.naam): counter.add, counter.read

A compile error is printed with file:line:col and nothing is sent (exit
1); the node's refusal (a verifier rejection, a region missing, too small
or read-only) is printed as it gives it (exit 1).

` + cli.ExitHelp(),
		Example: `  naam install 127.0.0.1:7000 counter.naam
  naam install 127.0.0.1:7000 kv.naam -D BUCKETS=4096 -D VALUE_SIZE=64
  naam install 127.0.0.1:7000 counter.nobj --bind counters=hot`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, pos []string) error {
			obj, err := loadObject(cmd.ErrOrStderr(), pos[1], defines)
			if err != nil {
				return err
			}
			opts, err := parseBindings(binds)
			if err != nil {
				return err
			}
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				pr, err := p.InstallWith(ctx, obj, opts)
				if err != nil {
					return nodeError(err)
				}
				names := make([]string, len(pr.Handlers))
				for i, h := range pr.Handlers {
					names[i] = h.String()
				}
				fmt.Fprintf(cmd.OutOrStdout(), "installed %s (program %d, %s): %s\n", pr.Name, pr.ID, pr.Source, strings.Join(names, ", "))
				return nil
			})
		},
	}
	cf.add(cmd)
	cmd.Flags().StringArrayVarP(&defines, "define", "D", nil, "NAME=VALUE: give constant NAME the value VALUE in place of its declaration (repeatable; .naam only)")
	cmd.Flags().StringArrayVar(&binds, "bind", nil, "OBJREGION=REGION: link the object's region OBJREGION to the registered region REGION (repeatable)")
	return cmd
}

func newUninstallCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "uninstall ADDR PROGRAM",
		Short: "Remove a program from a running node",
		Long: `uninstall removes the tenant's program PROGRAM from the node at ADDR once
its requests in flight are done. PROGRAM is its name as programs lists it
("counter", or "counter#3" where two share a name), its source file's
name ("counter.naam") or its id.

` + cli.ExitHelp(),
		Example: `  naam uninstall 127.0.0.1:7000 counter
  naam uninstall 127.0.0.1:7000 3`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				pr, err := p.Program(ctx, pos[1])
				if err != nil {
					return nodeError(err)
				}
				if err := p.Uninstall(ctx, pr.ID); err != nil {
					return nodeError(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "uninstalled %s (program %d, %s)\n", pr.Name, pr.ID, pr.Source)
				return nil
			})
		},
	}
	cf.add(cmd)
	return cmd
}

// programJSON is a program as programs -o json prints it.
type programJSON struct {
	Name     string        `json:"name"`
	ID       uint64        `json:"id"`
	Source   string        `json:"source"`
	Handlers []handlerJSON `json:"handlers"`
}

type handlerJSON struct {
	Name    string      `json:"name"` // qualified: "counter.add"
	ID      uint32      `json:"id"`
	Args    []fieldJSON `json:"args"`
	Results []fieldJSON `json:"results"`
}

type fieldJSON struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

func fieldsJSON(fs []bytecode.Field) []fieldJSON {
	out := make([]fieldJSON, len(fs))
	for i, f := range fs {
		out[i] = fieldJSON{f.Name, f.Type}
	}
	return out
}

func newProgramsCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "programs ADDR",
		Short: "List the programs installed on a node",
		Long: `programs lists the tenant's programs on the node at ADDR, one per line:
its name (what qualifies its handlers' names and what uninstall takes),
id, source file and handlers; with -o json one document
  {"programs": [{"name", "id", "source", "handlers": [{"name", "id", "args", "results"}]}]}

` + cli.ExitHelp(),
		Example: `  naam programs 127.0.0.1:7000
  naam programs 127.0.0.1:7000 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				progs := p.Programs()
				w := cmd.OutOrStdout()
				if out.json() {
					list := make([]programJSON, len(progs))
					for i, pr := range progs {
						list[i] = programJSON{Name: pr.Name, ID: pr.ID, Source: pr.Source, Handlers: []handlerJSON{}}
						for _, h := range pr.Handlers {
							list[i].Handlers = append(list[i].Handlers, handlerJSON{h.String(), h.ID, fieldsJSON(h.Args), fieldsJSON(h.Results)})
						}
					}
					return printJSON(w, struct {
						Programs []programJSON `json:"programs"`
					}{list})
				}
				if len(progs) == 0 {
					fmt.Fprintln(w, "no programs installed")
					return nil
				}
				tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "PROGRAM\tID\tSOURCE\tHANDLERS")
				for _, pr := range progs {
					names := make([]string, len(pr.Handlers))
					for i, h := range pr.Handlers {
						names[i] = h.Name
					}
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", pr.Name, pr.ID, pr.Source, strings.Join(names, " "))
				}
				return tw.Flush()
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	return cmd
}
