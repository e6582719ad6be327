package nicrt

import (
	"errors"
	"fmt"
	"math"
)

// PlacementPolicy forces where installed handlers run (Config.Placement,
// NIC.SetPlacement). Built-in verbs run on NIC cores under every policy.
type PlacementPolicy uint8

const (
	// PolicyAuto places by the handler's bound and helpers, and spills to
	// the host past Config.SpillThreshold.
	PolicyAuto PlacementPolicy = iota
	// PolicyNIC runs a handler on NIC cores wherever its bound fits the
	// NIC budget and it calls no host-only helper, and never spills.
	PolicyNIC
	// PolicyHost runs every installed handler on host cores.
	PolicyHost
	// PolicySteer places every message of a handler that may run on
	// either class (its bound fits the NIC budget, it calls no host-only
	// helper) on the class with the earlier expected completion, by a
	// steer.Chooser per handler with hysteresis (spec/nic.md, Steering);
	// the others as PolicyAuto does, without spilling.
	PolicySteer
)

var policyNames = [...]string{"auto", "nic", "host", "steer"}

func (p PlacementPolicy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return fmt.Sprintf("PlacementPolicy(%d)", uint8(p))
}

// ParsePlacementPolicy parses "auto", "nic", "host" or "steer".
func ParsePlacementPolicy(s string) (PlacementPolicy, error) {
	for i, name := range policyNames {
		if s == name {
			return PlacementPolicy(i), nil
		}
	}
	return 0, fmt.Errorf("placement %q: want auto, nic, host or steer", s)
}

// ErrNoHostCores is what forcing host placement refuses with on a NIC
// without host cores.
var ErrNoHostCores = errors.New("no host cores")

func (c Config) checkPlacement(p PlacementPolicy) error {
	switch {
	case p > PolicySteer:
		return fmt.Errorf("unknown placement %d", p)
	case p == PolicyHost && c.hostCores() == 0:
		return fmt.Errorf("placement host: %w (HostCores %d)", ErrNoHostCores, c.HostCores)
	}
	return nil
}

func checkHostLoad(l float64) error {
	if math.IsNaN(l) || l < 0 || l > 1 {
		return fmt.Errorf("HostLoad %v must be in [0, 1]", l)
	}
	return nil
}

// SetHostLoad sets the share of the host cores' time a modelled
// application takes (Config.HostLoad), effective from the next run; safe
// while messages flow.
func (n *NIC) SetHostLoad(l float64) error {
	if err := checkHostLoad(l); err != nil {
		return fmt.Errorf("nicrt: %w", err)
	}
	n.hostLoad.Store(math.Float64bits(l))
	return nil
}

// HostLoad returns the host load in effect.
func (n *NIC) HostLoad() float64 { return math.Float64frombits(n.hostLoad.Load()) }

// SetPlacement sets the placement policy (Config.Placement), effective
// for the messages submitted from then on; safe while messages flow.
func (n *NIC) SetPlacement(p PlacementPolicy) error {
	if err := n.cfg.checkPlacement(p); err != nil {
		return fmt.Errorf("nicrt: %w", err)
	}
	n.policy.Store(uint32(p))
	return nil
}

// Placement returns the placement policy in effect.
func (n *NIC) Placement() PlacementPolicy { return PlacementPolicy(n.policy.Load()) }

// PlaceFor is the placement policy's choice for a message of a handler
// placed at fixed by its bound and helpers (Install): under every policy
// but PolicySteer, and under PolicySteer for a handler that must run on
// the host (steering chooses for one that may run on either class). It
// is PlaceNone when the message must go to host cores and they take
// nothing (hostOpen false); PlaceNIC for the NIC core; PlaceHostSpill
// when, under PolicyAuto, that core already queues nicQueued messages,
// at or past spillThreshold (negative: never), and a host core is open:
// the message goes there, or to the NIC core after all if the host
// core's queue is full; otherwise the host Placement it runs under. The
// NIC's placement and package sim's both decide by it.
func PlaceFor(policy PlacementPolicy, fixed Placement, hostOpen bool, nicQueued, spillThreshold int) Placement {
	switch {
	case fixed != PlaceNIC || policy == PolicyHost:
		if !hostOpen {
			return PlaceNone
		}
		if fixed == PlaceNIC {
			return PlaceHostForced
		}
		return fixed
	case policy == PolicyAuto && spillThreshold >= 0 && nicQueued >= spillThreshold && hostOpen:
		return PlaceHostSpill
	}
	return PlaceNIC
}

// hostOpen reports whether host cores take messages: there are some, and
// the modelled application leaves them time.
func (n *NIC) hostOpen() bool { return len(n.host) > 0 && n.HostLoad() < 1 }
