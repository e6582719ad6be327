package call

import (
	"context"
	"fmt"

	"github.com/naam-project/naam/host"
)

// HandlerID names a handler ("kv.get", as host.Peer.Handler takes it) and
// where its node-wide id goes.
type HandlerID struct {
	Name string
	ID   *uint32
}

// PeerIDs looks the handlers up on the node p reaches, through the host
// library (the node describes its handlers): the ids an example's client
// calls by. what begins the error.
func PeerIDs(ctx context.Context, p *host.Peer, what string, ids ...HandlerID) error {
	for _, h := range ids {
		hd, err := p.Handler(ctx, h.Name)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		*h.ID = hd.ID
	}
	return nil
}
