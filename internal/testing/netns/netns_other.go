//go:build !linux

package netns

import (
	"errors"
	"net"
	"net/netip"
	"testing"
)

var errNotLinux = errors.New("netns: network namespaces need Linux")

// Pair is two namespaces, side 0 and side 1, and the veth between them.
type Pair struct {
	NS   [2]string
	Dev  [2]string
	Addr [2]netip.Addr
	MAC  [2]net.HardwareAddr
}

// New skips t: network namespaces are Linux's.
func New(t testing.TB) *Pair {
	t.Skip("network namespaces need Linux")
	return nil
}

// Exec, Ifindex and Run fail on other systems.
func (p *Pair) Exec(int, ...string) ([]byte, error) { return nil, errNotLinux }
func (p *Pair) Ifindex(int) (int, error)            { return 0, errNotLinux }
func (p *Pair) Run(int, func() error) error         { return errNotLinux }
