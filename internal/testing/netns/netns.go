package netns

import (
	"errors"
	"testing"

	"github.com/naam-project/naam/internal/netns"
)

// Pair is two namespaces, side 0 and side 1, and the veth between them
// (internal/netns.Pair: NS, Dev, Addr, MAC; Run, Exec, Ifindex).
type Pair struct {
	*netns.Pair
}

// New creates a pair for t, removed when t ends, or skips t with the
// reason it cannot.
func New(t testing.TB) *Pair {
	t.Helper()
	p, err := netns.New()
	if errors.Is(err, netns.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return &Pair{p}
}
