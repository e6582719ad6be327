package clientrun

import (
	"context"

	"github.com/naam-project/naam/bytecode"
)

// Fetcher reaches the regions of the node that serves the object, with
// one-sided verbs. Regions are named by their index in the object's
// region table (bytecode.Object.Regions); mapping that to what the node
// registered is the Fetcher's business. Every method is one round trip.
type Fetcher interface {
	// Read fetches every range of reads, in one round trip, into its
	// Dst (len(Dst) == Length). The ranges lie inside their regions.
	Read(ctx context.Context, reads []Read) error
	// FetchAdd adds delta to the 8-byte word at offset of region (8-byte
	// aligned) and returns its old value.
	FetchAdd(ctx context.Context, region, offset uint32, delta uint64) (old uint64, err error)
	// CompareAndSwap stores new in the 8-byte word at offset of region if
	// it holds old, and returns the value it held.
	CompareAndSwap(ctx context.Context, region, offset uint32, old, new uint64) (prev uint64, err error)
}

// Read is one range of a Fetcher.Read: the bytes of Range, into Dst.
type Read struct {
	bytecode.AccessRange
	Dst []byte
}
