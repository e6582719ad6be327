package peer

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"strconv"

	"github.com/naam-project/naam/nicrt/wire"
)

// DevSecret is the key a Config without a Secret uses. It is in the
// source: anyone can forge its packets.
var DevSecret = []byte("naam development key: do not use on a network")

// ResolveAddr turns "HOST:PORT" into an address: HOST is an IP address,
// or a name it looks up (its first IPv4 address, else its first IPv6
// one).
func ResolveAddr(ctx context.Context, addr string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(addr); err == nil {
		return ap, nil
	}
	h, p, err := net.SplitHostPort(addr)
	if err != nil || h == "" {
		return netip.AddrPort{}, fmt.Errorf("address %q: want HOST:PORT", addr)
	}
	port, err := strconv.ParseUint(p, 10, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: port %q is not a number from 0 to 65535", addr, p)
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", h)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", addr, err)
	}
	if len(ips) == 0 {
		return netip.AddrPort{}, fmt.Errorf("address %q: %s has no IP address", addr, h)
	}
	ip := ips[0]
	for _, a := range ips {
		if a.Unmap().Is4() {
			ip = a
			break
		}
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}

// Dial connects to the node at addr as a caller that runs no node of its
// own, as a tool does (`naam call`): node is the caller's id on the wire (0:
// random), secret the tenant's key (empty: DevSecret).
func Dial(ctx context.Context, addr string, tenant uint32, secret []byte, node uint32) (*Peer, error) {
	ap, err := ResolveAddr(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("host: dial: %w", err)
	}
	if tenant == 0 {
		tenant = 1
	}
	if len(secret) == 0 {
		secret = DevSecret
	}
	key, err := wire.NewKey(secret)
	if err != nil {
		return nil, fmt.Errorf("host: secret: %w", err)
	}
	for node == 0 {
		node = randomID()
	}
	return DialConfig(ctx, ap, Config{Node: node, Tenant: tenant, Keys: wire.KeyMap{tenant: key}})
}

// randomID is a random non-zero node id for callers without a node.
func randomID() uint32 {
	var b [4]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint32(b[:])
}
