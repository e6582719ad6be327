package netns

import (
	"errors"
	"net"
	"net/netip"
)

// ErrUnavailable: this machine or process cannot make namespaces (not
// root, no ip tool, not Linux, namespaces refused). New wraps it with the
// reason.
var ErrUnavailable = errors.New("netns: network namespaces unavailable")

// Pair is two namespaces, side 0 and side 1, and the veth between them.
type Pair struct {
	NS   [2]string     // namespace names
	Dev  [2]string     // the veth end in each
	Addr [2]netip.Addr // 198.18.N.1 and 198.18.N.2
	MAC  [2]net.HardwareAddr
	// Queues is the number of transmit and receive queues of each end:
	// one per CPU, transmit queue i steered to CPU i (XPS).
	Queues int
}
