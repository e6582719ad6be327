package xdp

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/naam-project/naam/nicrt/wire"
)

// PeerTable is the anti-replay and reply-cache state that the XDP program
// and the host process share (spec/xdp.md, Shared state): an array of
// peer states in memory both map, one per (tenant, src), each a window of
// wire.WindowSize reply-cache slots. Every field is read and written with
// atomics on both sides, so the user-space node can take part in the same
// exactly-once protocol as the kernel: a request claimed by one is a
// duplicate for the other, and a reply cached by one is resent by either.
type PeerTable struct {
	mem      []byte
	n        int // states, a power of two
	peerSize int
	slotSize int
}

// peerHashMul spreads (tenant, src) over the table (Fibonacci hashing).
const peerHashMul = 0x9e3779b97f4a7c15

// peerKeyOf is the key word of (tenant, src); 0 is that of the one pair
// the table cannot hold (2^32-1, 2^32-1).
func peerKeyOf(tenant, src uint32) uint64 { return (uint64(tenant)<<32 | uint64(src)) + 1 }

// peerHome is the first state a key may occupy.
func peerHome(key uint64, n int) int {
	h := key * peerHashMul
	h ^= h >> 32
	return int(h & uint64(n-1))
}

func newPeerTable(mem []byte, l layout) (*PeerTable, error) {
	if len(mem) < l.maxPeers*l.peerSize {
		return nil, fmt.Errorf("xdp: peer memory of %d bytes, %d states need %d", len(mem), l.maxPeers, l.maxPeers*l.peerSize)
	}
	return &PeerTable{mem: mem, n: l.maxPeers, peerSize: l.peerSize, slotSize: l.slotSize}, nil
}

func (t *PeerTable) word(off int) *uint64 { return (*uint64)(unsafe.Pointer(&t.mem[off])) }
func (t *PeerTable) half(off int) *uint32 { return (*uint32)(unsafe.Pointer(&t.mem[off])) }

// Peer returns the state of (tenant, src), taking a free one for a new
// pair, as the XDP program does. ok is false when the pair's probe
// sequence is full (or it is the one pair the table cannot hold).
func (t *PeerTable) Peer(tenant, src uint32) (p Peer, ok bool) {
	key := peerKeyOf(tenant, src)
	if key == 0 {
		return Peer{}, false
	}
	home := peerHome(key, t.n)
	for i := range peerProbes {
		idx := (home + i) & (t.n - 1)
		w := t.word(idx*t.peerSize + peerKey)
		k := atomic.LoadUint64(w)
		if k == key || k == 0 && (atomic.CompareAndSwapUint64(w, 0, key) || atomic.LoadUint64(w) == key) {
			return Peer{t: t, base: idx * t.peerSize, Index: idx}, true
		}
	}
	return Peer{}, false
}

// Peer is one (tenant, src)'s state in a PeerTable.
type Peer struct {
	t     *PeerTable
	base  int
	Index int // the state's index in the table
}

// Verdict is what a peer state says about a request id.
type Verdict uint8

const (
	// Claimed: the id is new and now this caller's to run; it must end
	// with Complete or Elsewhere.
	Claimed Verdict = iota
	// Running: another path claimed the id and has not answered yet.
	Running
	// Cached: answered; the sealed reply datagram is in the slot.
	Cached
	// Elsewhere: answered; the host process holds the reply.
	Elsewhere
	// TooOld: WindowSize or more below the highest id claimed, or a newer
	// id holds the slot.
	TooOld
	// BelowFloor: below the floor an evicted state left.
	BelowFloor
	// Contended: the slot changed under every try; nothing was claimed.
	Contended
)

var verdictNames = [...]string{"claimed", "running", "cached", "elsewhere", "too-old", "below-floor", "contended"}

func (v Verdict) String() string {
	if int(v) < len(verdictNames) {
		return verdictNames[v]
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

func (p Peer) slot(id uint64) int {
	return p.base + peerSlots + int(id%wire.WindowSize)*p.t.slotSize
}

// claimTries bounds the compare-and-swap retries of a claim, on both
// sides.
const claimTries = 4

// Claim judges id and claims it when it is new, as the XDP program does
// (spec/xdp.md, The claim). Ids are claimed at most once however many
// paths race: a slot's id only grows, by compare-and-swap. Id 2^64-1
// cannot be held (its slot word would be 0): it is TooOld.
func (p Peer) Claim(id uint64) Verdict {
	t := p.t
	if id == ^uint64(0) {
		return TooOld
	}
	if floor := atomic.LoadUint64(t.word(p.base + peerFloor)); id < floor {
		return BelowFloor
	}
	top := t.word(p.base + peerTop)
	s := p.slot(id)
	sid := t.word(s + slotID)
	for range claimTries {
		if tp := atomic.LoadUint64(top); tp != 0 && id <= tp-1 && tp-1-id >= wire.WindowSize {
			return TooOld
		}
		cur := atomic.LoadUint64(sid)
		switch {
		case cur == id+1:
			return p.state(s, id)
		case cur > id+1:
			return TooOld
		}
		if atomic.CompareAndSwapUint64(sid, cur, id+1) {
			atomic.StoreUint32(t.half(s+slotState), SlotRunning)
			atomic.StoreUint64(t.word(s+slotSID), id+1)
			for range claimTries {
				tp := atomic.LoadUint64(top)
				if tp >= id+1 || atomic.CompareAndSwapUint64(top, tp, id+1) {
					break
				}
			}
			return Claimed
		}
	}
	return Contended
}

// state reads the verdict of an id that holds slot s.
func (p Peer) state(s int, id uint64) Verdict {
	t := p.t
	if atomic.LoadUint64(t.word(s+slotSID)) != id+1 {
		return Running // claimed, the claimer has not marked it yet
	}
	switch atomic.LoadUint32(t.half(s + slotState)) {
	case SlotCached:
		return Cached
	case SlotElsewhere:
		return Elsewhere
	}
	return Running
}

// Cached appends the reply cached for id to dst, and false when id does
// not hold its slot with a cached reply (any more: a newer id may take
// the slot while it is read, which the read detects).
func (p Peer) Cached(dst []byte, id uint64) ([]byte, bool) {
	t := p.t
	s := p.slot(id)
	if atomic.LoadUint64(t.word(s+slotID)) != id+1 || p.state(s, id) != Cached {
		return dst, false
	}
	n := int(atomic.LoadUint32(t.half(s + slotLen)))
	if n > t.slotSize-slotData {
		return dst, false
	}
	start := len(dst)
	for i := 0; i < n; i += 8 { // word by word, as the kernel wrote them
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], atomic.LoadUint64(t.word(s+slotData+i)))
		dst = append(dst, w[:min(8, n-i)]...)
	}
	if atomic.LoadUint64(t.word(s+slotID)) != id+1 || atomic.LoadUint64(t.word(s+slotSID)) != id+1 {
		return dst[:start], false
	}
	return dst, true
}

// Complete records the sealed reply datagram of a claimed id in its slot,
// where either path resends it to a retransmission; a datagram too large
// for the slot is recorded as Elsewhere (the caller keeps it). It
// returns false when id does not hold the slot (it was never claimed).
func (p Peer) Complete(id uint64, datagram []byte) bool {
	t := p.t
	s := p.slot(id)
	if atomic.LoadUint64(t.word(s+slotID)) != id+1 {
		return false
	}
	if len(datagram) > t.slotSize-slotData {
		atomic.StoreUint32(t.half(s+slotState), SlotElsewhere)
		return true
	}
	var w [8]byte
	for i := 0; i < len(datagram); i += 8 {
		clear(w[:])
		copy(w[:], datagram[i:])
		atomic.StoreUint64(t.word(s+slotData+i), binary.LittleEndian.Uint64(w[:]))
	}
	atomic.StoreUint32(t.half(s+slotLen), uint32(len(datagram)))
	atomic.StoreUint32(t.half(s+slotState), SlotCached)
	return true
}

// CompleteElsewhere records that the host process answered id and keeps
// the reply: the XDP program passes retransmissions of it up.
func (p Peer) CompleteElsewhere(id uint64) bool {
	t := p.t
	s := p.slot(id)
	if atomic.LoadUint64(t.word(s+slotID)) != id+1 {
		return false
	}
	atomic.StoreUint32(t.half(s+slotState), SlotElsewhere)
	return true
}

// SetFloor refuses every id below floor from now on (an evicted state's
// high edge, spec/nic.md, Peer state). The floor only rises.
func (p Peer) SetFloor(floor uint64) {
	w := p.t.word(p.base + peerFloor)
	for {
		f := atomic.LoadUint64(w)
		if f >= floor || atomic.CompareAndSwapUint64(w, f, floor) {
			return
		}
	}
}
