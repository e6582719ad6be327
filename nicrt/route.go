package nicrt

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/naam-project/naam/bytecode"
)

// ProgramDigest is the identity under which nodes name a program to each
// other: the first 8 bytes, little-endian, of the SHA-256 of the object's
// file (bytecode.Object.Marshal, which is deterministic). A handler's send
// and forward name a handler of the same object on another node by its id
// in the object; the packet carries this digest and the receiving node
// maps (tenant, digest, object id) to its own handler id (spec/nic.md,
// Handler ids in send and forward).
func ProgramDigest(obj *bytecode.Object) (uint64, error) {
	b, err := obj.Marshal()
	if err != nil {
		return 0, fmt.Errorf("nicrt: program digest: %w", err)
	}
	sum := sha256.Sum256(b)
	return binary.LittleEndian.Uint64(sum[:8]), nil
}

// digestKey names a program by tenant and digest.
type digestKey struct{ tenant, digest uint64 }

// digestIndex maps (tenant, digest) to the programs installed with it,
// newest last. It has its own lock: the rx loops read it for every
// program-relative request.
type digestIndex struct {
	mu    sync.RWMutex
	progs map[digestKey][]*Program
}

func (x *digestIndex) add(p *Program) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.progs == nil {
		x.progs = map[digestKey][]*Program{}
	}
	k := digestKey{p.Tenant, p.Digest}
	x.progs[k] = append(x.progs[k], p)
}

func (x *digestIndex) remove(p *Program) {
	x.mu.Lock()
	defer x.mu.Unlock()
	k := digestKey{p.Tenant, p.Digest}
	list := x.progs[k]
	for i, q := range list {
		if q == p {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(x.progs, k)
	} else {
		x.progs[k] = list
	}
}

// ProgramByDigest returns the newest program of tenant installed from the
// object with digest (ProgramDigest), if any.
func (n *NIC) ProgramByDigest(tenant, digest uint64) (*Program, bool) {
	x := &n.digests
	x.mu.RLock()
	defer x.mu.RUnlock()
	list := x.progs[digestKey{tenant, digest}]
	if len(list) == 0 {
		return nil, false
	}
	return list[len(list)-1], true
}
