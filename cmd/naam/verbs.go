package main

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
)

// The verbs (spec/nic.md, Built-in verbs) from a shell: READ, WRITE, CAS
// and FETCH-ADD on a region named by its name. Every range is checked
// against the region's size here, so that a bad one sends nothing.

// wordAt checks that the 8-byte word at off of the peer's region is
// inside it and aligned, and the region writable, as CAS and FETCH-ADD
// need.
func wordAt(ctx context.Context, p *host.Peer, region string, off uint64) error {
	r, err := p.Region(ctx, region)
	if err != nil {
		return nodeError(err)
	}
	if off%8 != 0 {
		return cli.Errorf(cli.ExitUsage, "OFFSET %d: CAS and FETCH-ADD work on 8-byte words at multiples of 8", off)
	}
	if off > r.Size || r.Size-off < 8 {
		return cli.Errorf(cli.ExitUsage, "OFFSET %d: the word is not inside region %s (%d bytes): %w", off, r.Name, r.Size, host.ErrRange)
	}
	if !r.Writable {
		return cli.Errorf(cli.ExitFailed, "region %s is read-only: CAS and FETCH-ADD need a writable region", r.Name)
	}
	return nil
}

// parseWord reads a 64-bit value: unsigned, or negative (two's
// complement), in decimal or 0x, 0o, 0b.
func parseWord(what, s string) (uint64, error) {
	if u, err := strconv.ParseUint(s, 0, 64); err == nil {
		return u, nil
	}
	if v, err := strconv.ParseInt(s, 0, 64); err == nil {
		return uint64(v), nil
	}
	return 0, cli.Errorf(cli.ExitUsage, "%s %q: want a 64-bit integer (decimal, or 0x, 0o, 0b; negative in two's complement)", what, s)
}

// writeRange writes data at off of the region of the node at addr and
// says so: "wrote 8 bytes into counters at 8" (done: "wrote", "loaded").
func (cf *clientFlags) writeRange(cmd *cobra.Command, addr, region string, off uint64, data []byte, done string) error {
	return cf.with(cmd, addr, func(ctx context.Context, p *host.Peer) error {
		if err := p.WriteRange(ctx, region, off, data); err != nil {
			return nodeError(err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "%s %d bytes into %s at %d\n", done, len(data), region, off)
		return nil
	})
}

func newReadCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "read ADDR REGION OFFSET LENGTH",
		Short: "READ bytes of a region and print them in hex",
		Long: `read reads LENGTH bytes at OFFSET of the region REGION of the node at ADDR
by the READ verb (a KiB per READ) and prints them as one line of hex, or
with -o json {"region", "offset", "length", "hex"}.

` + cli.ExitHelp(),
		Example: `  naam read 127.0.0.1:7000 counters 8 8
  naam read 127.0.0.1:7000 counters 0 64 -o json`,
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, pos []string) error {
			off, err := parseUint("OFFSET", pos[2])
			if err != nil {
				return err
			}
			n, err := parseUint("LENGTH", pos[3])
			if err != nil {
				return err
			}
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				var b bytes.Buffer
				if err := p.ReadRange(ctx, &b, pos[1], off, n); err != nil {
					return nodeError(err)
				}
				if out.json() {
					return printJSON(cmd.OutOrStdout(), struct {
						Region string `json:"region"`
						Offset uint64 `json:"offset"`
						Length uint64 `json:"length"`
						Hex    string `json:"hex"`
					}{pos[1], off, n, hex.EncodeToString(b.Bytes())})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%x\n", b.Bytes())
				return nil
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	return cmd
}

func newWriteCmd() *cobra.Command {
	var cf clientFlags
	cmd := &cobra.Command{
		Use:   "write ADDR REGION OFFSET HEX|@FILE",
		Short: "WRITE bytes into a region",
		Long: `write writes bytes at OFFSET of the writable region REGION of the node at
ADDR by the WRITE verb (a KiB per WRITE): HEX (with or without 0x), or
the contents of FILE for @FILE.

` + cli.ExitHelp(),
		Example: `  naam write 127.0.0.1:7000 counters 8 0500000000000000
  naam write 127.0.0.1:7000 table 0 @row.bin`,
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, pos []string) error {
			off, err := parseUint("OFFSET", pos[2])
			if err != nil {
				return err
			}
			var data []byte
			if file, ok := strings.CutPrefix(pos[3], "@"); ok {
				if data, err = os.ReadFile(file); err != nil {
					return cli.Errorf(cli.ExitUsage, "%w", err)
				}
			} else if data, err = hex.DecodeString(strings.TrimPrefix(pos[3], "0x")); err != nil {
				return cli.Errorf(cli.ExitUsage, "HEX %q: %v (write @FILE for a file's bytes)", pos[3], err)
			}
			return cf.writeRange(cmd, pos[0], pos[1], off, data, "wrote")
		},
	}
	cf.add(cmd)
	return cmd
}

func newCASCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "cas ADDR REGION OFFSET OLD NEW",
		Short: "Compare-and-swap an 8-byte word of a region",
		Long: `cas replaces the 8-byte little-endian word at OFFSET (a multiple of 8) of
the writable region REGION with NEW if it holds OLD, atomically (the CAS
verb), and prints what it held and whether it swapped:
  old = 5
  swapped = true
or with -o json {"old": 5, "swapped": true}. Not swapping is an answer,
not a failure (exit 0).

` + cli.ExitHelp(),
		Example: `  naam cas 127.0.0.1:7000 counters 0 0 1`,
		Args:    cobra.ExactArgs(5),
		RunE: func(cmd *cobra.Command, pos []string) error {
			off, err := parseUint("OFFSET", pos[2])
			if err != nil {
				return err
			}
			old, err := parseWord("OLD", pos[3])
			if err != nil {
				return err
			}
			desired, err := parseWord("NEW", pos[4])
			if err != nil {
				return err
			}
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				if err := wordAt(ctx, p, pos[1], off); err != nil {
					return err
				}
				was, swapped, err := p.CompareAndSwap(ctx, pos[1], off, old, desired)
				if err != nil {
					return nodeError(err)
				}
				if out.json() {
					return printJSON(cmd.OutOrStdout(), struct {
						Old     uint64 `json:"old"`
						Swapped bool   `json:"swapped"`
					}{was, swapped})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "old = %d\nswapped = %t\n", was, swapped)
				return nil
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	return cmd
}

func newFAACmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	cmd := &cobra.Command{
		Use:   "faa ADDR REGION OFFSET DELTA",
		Short: "Fetch-and-add to an 8-byte word of a region",
		Long: `faa adds DELTA (negative to subtract, modulo 2^64) to the 8-byte
little-endian word at OFFSET (a multiple of 8) of the writable region
REGION, atomically and exactly once however often the request is resent
(the FETCH-ADD verb), and prints what it held: "old = 5", or with -o json
{"old": 5}. Write -- before a negative DELTA, which would read as a flag.

` + cli.ExitHelp(),
		Example: `  naam faa 127.0.0.1:7000 counters 0 1
  naam faa 127.0.0.1:7000 counters 8 -o json -- -1`,
		Args: cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, pos []string) error {
			off, err := parseUint("OFFSET", pos[2])
			if err != nil {
				return err
			}
			delta, err := parseWord("DELTA", pos[3])
			if err != nil {
				return err
			}
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				if err := wordAt(ctx, p, pos[1], off); err != nil {
					return err
				}
				was, err := p.FetchAdd(ctx, pos[1], off, delta)
				if err != nil {
					return nodeError(err)
				}
				if out.json() {
					return printJSON(cmd.OutOrStdout(), struct {
						Old uint64 `json:"old"`
					}{was})
				}
				fmt.Fprintf(cmd.OutOrStdout(), "old = %d\n", was)
				return nil
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	return cmd
}
