package peer

import (
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/caller"
)

// ClientOf is p's runtime client and tenant, for the benchmark that sets
// Peer.Call beside the client's own call.
func ClientOf(p *Peer) (*caller.Client, uint32) { return p.cl, p.tenant }

// Buffer and PutBuffer take and give back one of p's pooled buffers, as a
// call does.
func Buffer(p *Peer) *[]byte       { return p.bufs.Get().(*[]byte) }
func PutBuffer(p *Peer, b *[]byte) { p.bufs.Put(b) }

func ObjectDigest(obj *bytecode.Object) uint64 {
	d, _ := objectDigest(obj)
	return d
}
