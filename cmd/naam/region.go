package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
)

func newRegionCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "region",
		Short: "Create, load, dump, list and remove a node's regions",
		Long: `region manages the tenant's regions on a running node over the control
plane: create one, load a file into it and dump it back (by the WRITE and
READ verbs, a KiB at a time), list them, remove one (rm).

` + cli.ExitHelp(),
		Example: `  naam region create 127.0.0.1:7000 counters 4K --writable
  naam region load 127.0.0.1:7000 counters counters.bin
  naam region dump 127.0.0.1:7000 counters -o counters.bin
  naam region ls 127.0.0.1:7000 -o json
  naam region rm 127.0.0.1:7000 counters`,
	}
	cmd.AddCommand(newRegionCreateCmd(), newRegionLoadCmd(), newRegionDumpCmd(), newRegionLsCmd(), newRegionRmCmd())
	return cmd
}

func newRegionCreateCmd() *cobra.Command {
	var cf clientFlags
	var opts host.RegionOptions
	cmd := &cobra.Command{
		Use:   "create ADDR NAME SIZE [--writable] [--nicmem]",
		Short: "Register a zeroed region on a node",
		Long: `create registers a zeroed region of SIZE bytes (or with a K, M or G suffix)
called NAME for the tenant on the node at ADDR: read-only unless
--writable (handlers that write it, and the WRITE, CAS and FETCH-ADD
verbs, need --writable), in host memory unless --nicmem.

` + cli.ExitHelp(),
		Example: `  naam region create 127.0.0.1:7000 counters 4K --writable
  naam region create 127.0.0.1:7000 hot 64M --writable --nicmem`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, pos []string) error {
			size, err := parseSize(pos[2])
			if err != nil {
				return cli.Errorf(cli.ExitUsage, "SIZE: %v", err)
			}
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				if err := p.Register(ctx, pos[1], size, opts); err != nil {
					return nodeError(err)
				}
				r, err := p.Region(ctx, pos[1])
				if err != nil {
					return nodeError(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "region %s: %d bytes, %s, %s (id %d)\n", r.Name, r.Size, access(r), placement(r), r.ID)
				return nil
			})
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVar(&opts.Writable, "writable", false, "handlers and verbs may write it")
	cmd.Flags().BoolVar(&opts.NICMem, "nicmem", false, "in the NIC's own memory")
	return cmd
}

func access(r host.PeerRegion) string {
	if r.Writable {
		return "writable"
	}
	return "read-only"
}

func placement(r host.PeerRegion) string {
	if r.NICMem {
		return "nicmem"
	}
	return "host"
}

// parseUint reads an offset, length or value: decimal, or 0x, 0o, 0b.
func parseUint(what, s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, cli.Errorf(cli.ExitUsage, "%s %q: want an unsigned integer (decimal, or 0x, 0o, 0b)", what, s)
	}
	return v, nil
}

func newRegionLoadCmd() *cobra.Command {
	var cf clientFlags
	var offset string
	cmd := &cobra.Command{
		Use:   "load ADDR NAME FILE [--offset N]",
		Short: "Write a file's bytes into a region",
		Long: `load writes the bytes of FILE into the writable region NAME of the node at
ADDR from --offset on (default 0), a KiB per WRITE. A file that does not
fit, or a read-only region, is refused before anything is written.

` + cli.ExitHelp(),
		Example: `  naam region load 127.0.0.1:7000 table table.bin
  naam region load 127.0.0.1:7000 table patch.bin --offset 0x400`,
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, pos []string) error {
			off, err := parseUint("--offset", offset)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(pos[2])
			if err != nil {
				return cli.Errorf(cli.ExitUsage, "%w", err)
			}
			return cf.writeRange(cmd, pos[0], pos[1], off, data, "loaded")
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&offset, "offset", "0", "where in the region the file's bytes go")
	return cmd
}

func newRegionDumpCmd() *cobra.Command {
	var cf clientFlags
	var offset, length, file string
	cmd := &cobra.Command{
		Use:   "dump ADDR NAME [-o FILE] [--offset N] [--length N]",
		Short: "Read a region's bytes into a file",
		Long: `dump reads the region NAME of the node at ADDR, a KiB per READ, and writes
its bytes to FILE (-o), or to stdout: from --offset (default 0), --length
bytes (default: to the region's end).

` + cli.ExitHelp(),
		Example: `  naam region dump 127.0.0.1:7000 counters -o counters.bin
  naam region dump 127.0.0.1:7000 counters --offset 8 --length 8 | xxd`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, pos []string) error {
			off, err := parseUint("--offset", offset)
			if err != nil {
				return err
			}
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				r, err := p.Region(ctx, pos[1])
				if err != nil {
					return nodeError(err)
				}
				n := r.Size - min(off, r.Size)
				if length != "" {
					if n, err = parseUint("--length", length); err != nil {
						return err
					}
				}
				var w io.Writer = cmd.OutOrStdout()
				var f *os.File
				if file != "" {
					if f, err = os.Create(file); err != nil {
						return cli.Errorf(cli.ExitUsage, "%w", err)
					}
					defer f.Close()
					w = f
				}
				bw := bufio.NewWriter(w)
				if err := p.ReadRange(ctx, bw, pos[1], off, n); err != nil {
					if f != nil {
						f.Close()
						os.Remove(file)
					}
					return nodeError(err)
				}
				if err := bw.Flush(); err != nil {
					return cli.Errorf(cli.ExitUsage, "%w", err)
				}
				if f != nil {
					return f.Close()
				}
				return nil
			})
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVarP(&file, "out", "o", "", "write the bytes to this file (default stdout)")
	cmd.Flags().StringVar(&offset, "offset", "0", "the first byte to read")
	cmd.Flags().StringVar(&length, "length", "", "how many bytes (default: to the region's end)")
	return cmd
}

func newRegionRmCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "rm ADDR NAME",
		Short: "Remove a region from a node",
		Long: `rm removes the tenant's region NAME from the node at ADDR: the verbs no
longer reach it and its memory is freed. The node refuses while an
installed program links it (uninstall the program first): exit 1, the
region as it was.

` + cli.ExitHelp(),
		Example: `  naam region rm 127.0.0.1:7000 scratch`,
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				r, err := p.Region(ctx, pos[1])
				if err != nil {
					return nodeError(err)
				}
				if err := p.Unregister(ctx, pos[1]); err != nil {
					return nodeError(err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "removed region %s (%d bytes, id %d)\n", r.Name, r.Size, r.ID)
				return nil
			})
		},
	}
	cf.add(cmd)
	return cmd
}

func newRegionLsCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "ls ADDR",
		Short: "List a node's regions",
		Long: `ls lists the tenant's regions on the node at ADDR, by name: size, access
(writable or read-only), placement (host or nicmem) and id; with -o json
one document {"regions": [{"name", "id", "size", "writable", "placement"}]}.

` + cli.ExitHelp(),
		Example: `  naam region ls 127.0.0.1:7000
  naam region ls 127.0.0.1:7000 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				rs := p.Regions()
				w := cmd.OutOrStdout()
				if out.json() {
					type regionJSON struct {
						Name      string `json:"name"`
						ID        uint32 `json:"id"`
						Size      uint64 `json:"size"`
						Writable  bool   `json:"writable"`
						Placement string `json:"placement"`
					}
					list := make([]regionJSON, len(rs))
					for i, r := range rs {
						list[i] = regionJSON{r.Name, r.ID, r.Size, r.Writable, placement(r)}
					}
					return printJSON(w, struct {
						Regions []regionJSON `json:"regions"`
					}{list})
				}
				if len(rs) == 0 {
					fmt.Fprintln(w, "no regions registered")
					return nil
				}
				tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "REGION\tSIZE\tACCESS\tPLACEMENT\tID")
				for _, r := range rs {
					fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\n", r.Name, r.Size, access(r), placement(r), r.ID)
				}
				return tw.Flush()
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	return cmd
}
