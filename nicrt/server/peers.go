package server

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/nicrt/wire"
)

// peer is the state kept per peerKey: the anti-replay window and the
// reply cache over the ids inside it.
type peer struct {
	mu    sync.Mutex
	win   wire.Window
	bytes *atomic.Int64 // the reply cache bytes of the peer's tenant (Server.tenantCache)
	// cache is the reply cache by request id mod WindowSize, in chunks
	// made as ids reach them (slot): a peer that sent a few requests holds
	// one chunk, not the whole cache (spec/nic.md, Peer state).
	cache [wire.WindowSize / cacheChunk]*[cacheChunk]cacheSlot
	seen  atomic.Bool  // a request since the last activity count
	idle  atomic.Int64 // activity periods without a request (countActive)
	// Under mu: requests submitted and not done; evicted once the server
	// dropped the state (a request that finds it so looks the key up
	// again); floor, when hasFloor, the high edge of an evicted window of
	// the same key: ids at or below it are refused.
	running  int
	evicted  bool
	hasFloor bool
	floor    uint64
}

// peerKey names a peer state. Requests a caller sends directly and those
// another node forwarded for it (via) are windowed apart, as are the
// one-way messages a node sends: each stream has its own id counter.
type peerKey struct {
	src, tenant, via uint32
	kind             peerKind
}

type peerKind uint8

// viaKey is a caller and tenant of forwarded requests (Server.vias).
type viaKey struct{ src, tenant uint32 }

const (
	peerDirect    peerKind = iota // the caller's own requests and control packets
	peerForwarded                 // requests node via forwarded for src
	peerOneWay                    // one-way messages (send) from src
)

// cacheChunk is how many reply cache slots are allocated together.
const cacheChunk = 64

// slot returns the reply cache slot of id, making its chunk if need be;
// pr.mu is held.
func (pr *peer) slot(id uint64) *cacheSlot {
	i := id % wire.WindowSize
	c := pr.cache[i/cacheChunk]
	if c == nil {
		c = new([cacheChunk]cacheSlot)
		pr.cache[i/cacheChunk] = c
	}
	return &c[i%cacheChunk]
}

// cached returns the reply cache slot of id if its chunk exists, else
// nil; pr.mu is held.
func (pr *peer) cached(id uint64) *cacheSlot {
	i := id % wire.WindowSize
	if c := pr.cache[i/cacheChunk]; c != nil {
		return &c[i%cacheChunk]
	}
	return nil
}

// cacheSlot is the reply cache entry of one request id.
type cacheSlot struct {
	id    uint64
	state slotState
	dgram []byte // the sealed reply (slotDone) or forwarded request (slotForwarded)
}

type slotState uint8

const (
	slotEmpty     slotState = iota
	slotRunning             // submitted; the reply will come
	slotDone                // dgram holds the reply
	slotForwarded           // the handler forwarded it: another node answers
	slotNotCached           // answered or forwarded, but past the reply cache's bytes: not kept
)

// activityPeriod is how often the server counts its active peers for the
// credit policy.
const activityPeriod = 100 * time.Millisecond

// peer returns the state of key, creating it; nil when the server holds
// MaxPeers states and none may be evicted.
func (s *Server) peer(key peerKey) *peer {
	s.peersMu.RLock()
	pr := s.peers[key]
	s.peersMu.RUnlock()
	if pr != nil {
		return pr
	}
	s.peersMu.Lock()
	defer s.peersMu.Unlock()
	if pr = s.peers[key]; pr != nil {
		return pr
	}
	if len(s.peers) >= s.cfg.MaxPeers && !s.evictLocked() {
		return nil
	}
	pr = &peer{bytes: s.tenantCache[key.tenant]}
	if pr.bytes == nil {
		pr.bytes = new(atomic.Int64)
		s.tenantCache[key.tenant] = pr.bytes
	}
	if f, ok := s.floors[key]; ok {
		pr.hasFloor, pr.floor = true, f
	}
	s.peers[key] = pr
	if key.kind == peerForwarded {
		vk := viaKey{key.src, key.tenant}
		s.vias[vk] = append(s.vias[vk], key.via)
	}
	s.active.Add(1) // counted at once, until the next count
	return pr
}

// forwarders returns the nodes whose forwards of src's requests of tenant
// have states here.
func (s *Server) forwarders(src, tenant uint32) []uint32 {
	s.peersMu.RLock()
	defer s.peersMu.RUnlock()
	return slices.Clone(s.vias[viaKey{src, tenant}])
}

// evictLocked drops the peer states idle longest (no request in the
// current activity period, none running), up to a sixteenth of MaxPeers
// at once so that the scan is paid rarely. Each leaves its window's high
// edge in floors: the ids it saw can never run again. It reports whether
// it freed any; s.peersMu is held.
func (s *Server) evictLocked() bool {
	type cand struct {
		key  peerKey
		pr   *peer
		idle int64
	}
	var cands []cand
	for k, pr := range s.peers {
		if !pr.seen.Load() {
			cands = append(cands, cand{k, pr, pr.idle.Load()})
		}
	}
	sort.Slice(cands, func(i, j int) bool { return cands[i].idle > cands[j].idle })
	want, freed := max(s.cfg.MaxPeers/16, 1), 0
	for _, c := range cands {
		if freed == want {
			break
		}
		pr := c.pr
		pr.mu.Lock()
		if pr.running > 0 || pr.seen.Load() {
			pr.mu.Unlock()
			continue
		}
		pr.evicted = true
		s.uncacheAllLocked(pr)
		floor, ok := pr.win.Top()
		if pr.hasFloor {
			floor, ok = max(floor, pr.floor), true
		}
		pr.mu.Unlock()
		if ok {
			s.floors[c.key] = floor
		}
		delete(s.peers, c.key)
		if c.key.kind == peerForwarded {
			vk := viaKey{c.key.src, c.key.tenant}
			if vs := slices.DeleteFunc(s.vias[vk], func(v uint32) bool { return v == c.key.via }); len(vs) > 0 {
				s.vias[vk] = vs
			} else {
				delete(s.vias, vk)
			}
		}
		freed++
	}
	s.ctr.peersEvicted.Add(uint64(freed))
	return freed > 0
}

// countActive counts the peers that sent requests in each activity
// period, for the credit policy.
func (s *Server) countActive() {
	t := time.NewTicker(activityPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		s.countActiveOnce()
		s.expireUploads()
	}
}

// countActiveOnce ends an activity period: it counts the peers that sent
// a request in it and ages the others, for eviction.
func (s *Server) countActiveOnce() {
	var n int64
	s.peersMu.RLock()
	for _, pr := range s.peers {
		if pr.seen.Swap(false) {
			n++
			pr.idle.Store(0)
		} else {
			pr.idle.Add(1)
		}
	}
	s.peersMu.RUnlock()
	s.active.Store(n)
}

// uncacheAllLocked gives back the bytes of an evicted state's reply
// cache; pr.mu is held.
func (s *Server) uncacheAllLocked(pr *peer) {
	for _, c := range pr.cache {
		if c != nil {
			for i := range c {
				s.uncache(pr, &c[i])
			}
		}
	}
}
