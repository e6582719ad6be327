package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
)

// clientFlags are what a command that talks to a node needs.
type clientFlags struct {
	tenant     uint32
	secretFile string
	timeout    time.Duration
	join       []string
	mac        string
}

func (c *clientFlags) add(cmd *cobra.Command) {
	cmd.Flags().Uint32Var(&c.tenant, "tenant", 1, "tenant to act for")
	cmd.Flags().StringVar(&c.secretFile, "secret-file", "", "file holding the tenant's key (default $NAAM_SECRET, else the development key)")
	cmd.Flags().DurationVar(&c.timeout, "timeout", 5*time.Second, "give up after this long")
	cmd.Flags().StringVar(&c.mac, "mac", "", "MAC algorithm of the tenant's key: hmac-sha256 (default) or siphash-2-4-128, as the node's --mac")
	cmd.Flags().StringArrayVar(&c.join, "join", nil, "join the cluster through this gossip address (repeatable), so that ADDR may be a member's name")
}

// with reaches the node at addr within the --timeout and runs f with the
// peer. addr is HOST:PORT (HOST an IP address or a host name) or, with
// --join, a member's name: the command then joins the cluster for as long
// as it runs, as a member of its own.
func (c *clientFlags) with(cmd *cobra.Command, addr string, f func(context.Context, *host.Peer) error) error {
	ctx, cancel := context.WithTimeout(cmd.Context(), c.timeout)
	defer cancel()
	secret, err := readSecret(c.secretFile)
	if err != nil {
		return err
	}
	var p *host.Peer
	if len(c.join) > 0 {
		n, err := c.joinCluster(secret)
		if err != nil {
			return err
		}
		defer n.Close()
		if p, err = n.Peer(ctx, addr); err != nil {
			return nodeError(err)
		}
	} else {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return cli.Errorf(cli.ExitUsage, "ADDR %q: want HOST:PORT, or a member's name with --join GOSSIP-ADDR", addr)
		}
		ap, err := host.ResolveAddr(ctx, addr)
		if err != nil {
			return cli.Errorf(cli.ExitUsage, "ADDR: %w", err)
		}
		if p, err = dialMAC(ctx, ap, c.tenant, secret, c.mac); err != nil {
			return nodeError(err)
		}
		defer p.Close()
	}
	return f(ctx, p)
}

// joinCluster starts a node of the command's own that joins the cluster
// through --join: it is a member while the command runs and leaves when
// it ends. Its gossip listens on loopback when every seed is a loopback
// address, on every interface otherwise (memberlist advertises a private
// address of the machine).
func (c *clientFlags) joinCluster(secret []byte) (*host.Node, error) {
	gossip := "127.0.0.1:0"
	for _, j := range c.join {
		h, _, err := net.SplitHostPort(j)
		if err != nil {
			return nil, cli.Errorf(cli.ExitUsage, "--join %q: want HOST:PORT", j)
		}
		if ip, err := netip.ParseAddr(h); err != nil || !ip.IsLoopback() {
			gossip = "0.0.0.0:0"
		}
	}
	var id [4]byte
	rand.Read(id[:])
	mac, err := parseMAC(c.mac)
	if err != nil {
		return nil, err
	}
	n, err := host.Start(host.Config{
		Name: "naam-cli-" + hex.EncodeToString(id[:]), Tenant: c.tenant, Secret: secret, MAC: mac,
		Gossip: gossip, Join: c.join, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return nil, cli.Errorf(cli.ExitUnreachable, "%w", err)
	}
	return n, nil
}

// nodeError gives err, from talking to a node, its exit status (spec/cli.md):
// ExitUnreachable when no answer came; ExitUsage for a name the node does
// not have, a range outside a region or a value that does not fit a
// layout (nothing was sent); ExitFailed for the rest: the node refused,
// the handler failed or faulted.
func nodeError(err error) error {
	if err == nil {
		return nil
	}
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		return err
	}
	code := cli.ExitFailed
	switch {
	case errors.Is(err, host.ErrTimeout), errors.Is(err, context.DeadlineExceeded):
		code = cli.ExitUnreachable
	case errors.Is(err, host.ErrNoHandler), errors.Is(err, host.ErrNoRegion), errors.Is(err, host.ErrNoProgram),
		errors.Is(err, host.ErrNoMember), errors.Is(err, host.ErrRange), errors.Is(err, host.ErrLayout):
		code = cli.ExitUsage
	}
	return &cli.ExitError{Code: code, Err: err}
}

// outputFlag is -o/--output: how a command prints what it read.
type outputFlag string

func (o *outputFlag) String() string { return string(*o) }
func (o *outputFlag) Type() string   { return "text|json" }

func (o *outputFlag) Set(s string) error {
	if s != "text" && s != "json" {
		return fmt.Errorf("%q: want text or json", s)
	}
	*o = outputFlag(s)
	return nil
}

func (o *outputFlag) add(cmd *cobra.Command) {
	*o = "text"
	cmd.Flags().VarP(o, "output", "o", "text (for people, the default) or json (one document, for scripts)")
}

func (o outputFlag) json() bool { return o == "json" }

// printJSON writes v as one indented JSON document.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
