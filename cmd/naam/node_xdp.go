package main

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/spf13/pflag"

	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/host/peer"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/nicrt/wire"
)

// xdpFlags are naam node's settings of the XDP tier and of the MAC
// algorithm, which the tier needs to be SipHash.
type xdpFlags struct {
	XDP        string
	XDPGeneric bool
	MAC        string
}

func (f *xdpFlags) add(fl *pflag.FlagSet) {
	fl.StringVar(&f.XDP, "xdp", "", "answer the handlers placed on the NIC and the verbs in the kernel, in an XDP program attached to this interface (needs root and XDP; the node fails to start without them)")
	fl.BoolVar(&f.XDPGeneric, "xdp-generic", false, "attach the XDP program in generic (skb) mode, for devices without native XDP")
	fl.StringVar(&f.MAC, "mac", "", "MAC algorithm of the tenants' keys: hmac-sha256 or siphash-2-4-128 (default siphash-2-4-128 with --xdp, which answers SipHash tenants only; hmac-sha256 otherwise); callers must use the same")
}

// apply sets cfg's XDP fields and MAC algorithm.
func (f *xdpFlags) apply(cfg *host.Config) error {
	mac := f.MAC
	if mac == "" && f.XDP != "" {
		mac = wire.MACSipHash128.String()
	}
	alg, err := parseMAC(mac)
	if err != nil {
		return err
	}
	cfg.MAC, cfg.XDP, cfg.XDPGeneric = alg, f.XDP, f.XDPGeneric
	return nil
}

// parseMAC reads --mac: "" is HMAC-SHA256.
func parseMAC(s string) (wire.MACAlg, error) {
	if s == "" {
		return wire.MACHMACSHA256, nil
	}
	alg, err := wire.ParseMACAlg(s)
	if err != nil {
		return 0, cli.Errorf(cli.ExitUsage, "--mac: %w", err)
	}
	return alg, nil
}

// dialMAC dials the node at ap as host.Dial does, with a key of the
// given algorithm (--mac).
func dialMAC(ctx context.Context, ap netip.AddrPort, tenant uint32, secret []byte, mac string) (*host.Peer, error) {
	alg, err := parseMAC(mac)
	if err != nil {
		return nil, err
	}
	if alg == wire.MACHMACSHA256 {
		return host.Dial(ctx, ap.String(), tenant, secret, 0)
	}
	if tenant == 0 {
		tenant = 1
	}
	if len(secret) == 0 {
		secret = host.DevSecret
	}
	key, err := wire.NewKeyAlg(alg, secret)
	if err != nil {
		return nil, fmt.Errorf("host: secret: %w", err)
	}
	var node uint32
	for node == 0 {
		var b [4]byte
		rand.Read(b[:])
		node = binary.LittleEndian.Uint32(b[:])
	}
	return peer.DialConfig(ctx, ap, peer.Config{Node: node, Tenant: tenant, Keys: wire.KeyMap{tenant: key}})
}
