package host

import "github.com/naam-project/naam/host/peer"

// Placement says where a peer's calls run: at the node, at this caller
// over one-sided verbs, or chosen per message (peer.Placement,
// spec/client.md).
type Placement = peer.Placement

// Placements (peer's).
const (
	PlaceDefault = peer.PlaceDefault // the peer's own placement, for a per-call method
	AtNode       = peer.AtNode       // the node runs it (on its NIC or host cores)
	AtClient     = peer.AtClient     // the caller runs it where it can, over the verbs
	Auto         = peer.Auto         // the caller chooses per message from measured costs
)

// PlacementStats are one handler's placements at a caller
// (peer.PlacementStats).
type PlacementStats = peer.PlacementStats

// CallInfo says where a call ran and its round trips (peer.CallInfo).
type CallInfo = peer.CallInfo

// ParsePlacement reads node, client or auto (peer.ParsePlacement).
func ParsePlacement(s string) (Placement, error) { return peer.ParsePlacement(s) }
