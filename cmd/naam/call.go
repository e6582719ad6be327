package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/nicrt"
)

// clientFlags are what a command that talks to a node needs.
type clientFlags struct {
	tenant     uint32
	secretFile string
	timeout    time.Duration
}

func (c *clientFlags) add(cmd *cobra.Command) {
	cmd.Flags().Uint32Var(&c.tenant, "tenant", 1, "tenant to act for")
	cmd.Flags().StringVar(&c.secretFile, "secret-file", "", "file holding the tenant's key (default $NAAM_SECRET, else the development key)")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 5*time.Second, "give up after this long")
}

// with dials addr within the --timeout and runs f with the peer.
func (c *clientFlags) with(cmd *cobra.Command, addr string, f func(context.Context, *host.Peer) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), c.timeout)
	defer cancel()
	secret, err := readSecret(c.secretFile)
	if err != nil {
		return err
	}
	p, err := host.Dial(ctx, addr, c.tenant, secret, 0)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	defer p.Close()
	return f(ctx, p)
}

func newCallCmd() *cobra.Command {
	var cf clientFlags
	var args []string
	var raw string
	var list bool
	cmd := &cobra.Command{
		Use:   "call ADDR HANDLER",
		Short: "Send one active message and print the decoded reply",
		Long: `call asks the node at ADDR what it has installed, encodes the arguments by
the handler's layout, sends one request, and prints the results one per
line ("name = value"). HANDLER is a handler's name, or program.name when
two programs have one of that name.

Arguments are --arg name=value: integers in Go syntax (42, 0x2a, -1 for
signed types), true/false, byte arrays as text or 0x-prefixed hex, other
arrays as comma-separated elements. --raw HEX sends the payload as given
instead, and prints the reply in hex. --list prints the node's handlers
with their layouts.

Exit status: 0 on a reply; 1 when the handler failed (its code is printed),
was rejected, or no reply came; 2 for a usage error.`,
		Example: `  naam call 127.0.0.1:7000 incr --arg slot=3 --arg by=1
  naam call 127.0.0.1:7000 kv.get --arg key=0x2a
  naam call 127.0.0.1:7000 --list
  naam call 127.0.0.1:7000 get --raw 0300000000000000`,
		Args: func(cmd *cobra.Command, a []string) error {
			if list {
				return cobra.ExactArgs(1)(cmd, a)
			}
			return cobra.ExactArgs(2)(cmd, a)
		},
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				if list {
					return listHandlers(cmd.OutOrStdout(), p)
				}
				return runCall(ctx, cmd.OutOrStdout(), p, pos[1], args, raw)
			})
		},
	}
	cf.add(cmd)
	cmd.Flags().StringArrayVar(&args, "arg", nil, "an argument, name=value (repeatable)")
	cmd.Flags().StringVar(&raw, "raw", "", "send this payload (hex) instead of --arg")
	cmd.Flags().BoolVar(&list, "list", false, "list the node's handlers and their layouts")
	return cmd
}

func listHandlers(w io.Writer, p *host.Peer) error {
	hs := p.Handlers()
	if len(hs) == 0 {
		fmt.Fprintln(w, "no handlers installed")
		return nil
	}
	for _, h := range hs {
		fmt.Fprintf(w, "%s(%s) -> (%s)  id %d\n", h, fieldList(h.Args), fieldList(h.Results), h.ID)
	}
	return nil
}

func fieldList(fs []bytecode.Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + ": " + f.Type
	}
	return strings.Join(parts, ", ")
}

func runCall(ctx context.Context, w io.Writer, p *host.Peer, handler string, args []string, raw string) error {
	h, err := p.Handler(ctx, handler)
	if err != nil {
		return &cli.ExitError{Code: 1, Err: err}
	}
	var payload []byte
	if raw != "" {
		if len(args) > 0 {
			return fmt.Errorf("--raw and --arg do not go together")
		}
		payload, err = hex.DecodeString(strings.TrimPrefix(raw, "0x"))
		if err != nil {
			return fmt.Errorf("--raw: %v", err)
		}
	} else {
		vals := map[string]string{}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok || k == "" {
				return fmt.Errorf("--arg %q: want name=value", a)
			}
			if _, dup := vals[k]; dup {
				return fmt.Errorf("--arg %s given twice", k)
			}
			vals[k] = v
		}
		payload, err = h.EncodeStrings(vals)
		if err != nil {
			return err
		}
	}
	reply, err := p.CallRaw(ctx, h.String(), payload)
	if err != nil {
		var he *host.HandlerError
		if errors.As(err, &he) {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s failed with code %d", h, he.Code)}
		}
		return &cli.ExitError{Code: 1, Err: err}
	}
	if raw != "" {
		fmt.Fprintf(w, "%x\n", reply)
		return nil
	}
	fmt.Fprint(w, h.FormatResults(reply))
	return nil
}

func newStatsCmd() *cobra.Command {
	var cf clientFlags
	var prefix string
	cmd := &cobra.Command{
		Use:   "stats ADDR",
		Short: "Print a node's counters",
		Long: `stats prints the counters of the node at ADDR, one "name value" per line,
sorted by name: placements, runs, instructions, modelled cycles and DMA,
per core and per handler, drops by reason, the server's traffic
(spec/nic.md, Stats). --prefix narrows them.`,
		Example: `  naam stats 127.0.0.1:7000
  naam stats 127.0.0.1:7000 --prefix server.drop.
  naam stats 127.0.0.1:7000 --prefix handler.16.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				cs, err := allStats(ctx, p, prefix, 0)
				if err != nil {
					return &cli.ExitError{Code: 1, Err: err}
				}
				sort.Slice(cs, func(i, j int) bool { return cs[i].Name < cs[j].Name })
				for _, c := range cs {
					fmt.Fprintf(cmd.OutOrStdout(), "%s %d\n", c.Name, c.Value)
				}
				return nil
			})
		},
	}
	cf.add(cmd)
	cmd.Flags().StringVar(&prefix, "prefix", "", "only counters whose names start with this")
	return cmd
}

// counterChars are the characters counter names use.
const counterChars = "abcdefghijklmnopqrstuvwxyz0123456789._"

// allStats fetches the counters under prefix; when they do not fit one
// reply it asks for each longer prefix in turn.
func allStats(ctx context.Context, p *host.Peer, prefix string, depth int) ([]host.Counter, error) {
	cs, err := p.Stats(ctx, prefix)
	if err == nil {
		return cs, nil
	}
	if !errors.Is(err, nicrt.ErrTooLarge) || depth > 64 {
		return nil, err
	}
	var out []host.Counter
	for _, c := range counterChars {
		more, err := allStats(ctx, p, prefix+string(c), depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}
