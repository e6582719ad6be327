package btree

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/retry"
	"github.com/naam-project/naam/host"
)

// DefaultRetries is how many times a client tries an operation that met
// a node a writer holds (CodeBusy) before it gives up with ErrBusy,
// backing off between tries (retry.Backoff). The host's insert holds a
// node for one rewrite; a one-sided update for three round trips.
const DefaultRetries = 64

// HandlerIDs are the node-wide ids of an installed btree program's
// handlers.
type HandlerIDs struct {
	Lookup, Scan, Update uint32
}

// PeerIDs finds the handler ids of the btree program a node installed,
// through the host library (the node describes its handlers).
func PeerIDs(ctx context.Context, p *host.Peer) (HandlerIDs, error) {
	var ids HandlerIDs
	err := call.PeerIDs(ctx, p, "btree", call.HandlerID{Name: "btree." + HandlerLookup, ID: &ids.Lookup},
		call.HandlerID{Name: "btree." + HandlerScan, ID: &ids.Scan}, call.HandlerID{Name: "btree." + HandlerUpdate, ID: &ids.Update})
	return ids, err
}

// Reply counts an operation's round trips, retries included.
type Reply struct{ RoundTrips int }

// Client runs the operations with one active message each (more only
// when it retries a busy node). It is safe for concurrent use.
type Client struct {
	caller call.Caller
	cfg    Config
	ids    HandlerIDs
	// Retries is the number of tries for a busy node (DefaultRetries).
	Retries int
}

// NewClient is a client of the tree cfg served by handlers ids.
func NewClient(c call.Caller, cfg Config, ids HandlerIDs) *Client {
	return &Client{caller: c, cfg: cfg.withDefaults(), ids: ids, Retries: DefaultRetries}
}

func (c *Client) do(ctx context.Context, handler uint32, req []byte, rep *Reply) ([]byte, error) {
	// TOO_DEEP once more: a descent at the client from old copies of the
	// upper levels (Tree.UpperLevels) may need more moves right than a lookup
	// visits; the failed run dropped the ones it used.
	h := retry.Handler{Caller: c.caller, Busy: CodeBusy, Tries: c.Retries, Codes: codeErrors, What: "btree: handler failed", Again: CodeTooDeep}
	return h.Call(ctx, handler, req, &rep.RoundTrips)
}

// Lookup is key's value: the descent runs on the node, one round trip.
func (c *Client) Lookup(ctx context.Context, key uint64) (uint64, Reply, error) {
	var rep Reply
	var req [8]byte
	out, err := c.do(ctx, c.ids.Lookup, AppendU64(req[:0], key), &rep)
	if err != nil {
		return 0, rep, err
	}
	v, err := DecodeU64(out)
	return v, rep, err
}

// Scan returns up to n pairs (1…Config.Scan) with keys ≥ start, in key
// order; end says the tree ended before n.
func (c *Client) Scan(ctx context.Context, start uint64, n uint32) ([]Pair, bool, Reply, error) {
	var rep Reply
	out, err := c.do(ctx, c.ids.Scan, AppendScan(nil, start, n), &rep)
	if err != nil {
		return nil, false, rep, err
	}
	pairs, end, err := c.cfg.DecodeScan(out)
	return pairs, end, rep, err
}

// Update replaces the value of key, which must be in the tree, and
// returns the old one.
func (c *Client) Update(ctx context.Context, key, value uint64) (uint64, Reply, error) {
	var rep Reply
	out, err := c.do(ctx, c.ids.Update, AppendUpdate(nil, key, value), &rep)
	if err != nil {
		return 0, rep, err
	}
	old, err := DecodeU64(out)
	return old, rep, err
}

// RDMAClient traverses the tree as a Cell client does with one-sided
// READs: one READ per level from the root (node 0) to the leaf, moving
// right past a node a split has halved. It keeps the nodes of the top
// CacheLevels levels it has read, so a lookup READs only the levels
// below them. A cached node never misleads, only costs a move right: a
// split moves keys to the right sibling and never frees a node. A
// lookup that moves right from a cached node drops it.
//
// A READ is accepted when the node's two versions are even and equal
// (its writers store version_end before their first write and after
// their last), so a READ that overlapped a change retries.
type RDMAClient struct {
	r   call.Reader
	cfg Config
	// CacheLevels is how many levels from the root the client caches:
	// 0 none. The leaves are never cached.
	CacheLevels int
	// Retries is the number of tries for a node a writer holds
	// (DefaultRetries).
	Retries int

	mu    sync.RWMutex
	cache map[uint32][]byte
}

// NewRDMAClient is a one-sided client of the tree cfg read through r,
// caching the top cacheLevels levels.
func NewRDMAClient(r call.Reader, cfg Config, cacheLevels int) *RDMAClient {
	return &RDMAClient{r: r, cfg: cfg.withDefaults(), CacheLevels: cacheLevels, Retries: DefaultRetries, cache: map[uint32][]byte{}}
}

// Cached is the number of nodes the client holds.
func (c *RDMAClient) Cached() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.cache)
}

// Forget empties the cache.
func (c *RDMAClient) Forget() {
	c.mu.Lock()
	clear(c.cache)
	c.mu.Unlock()
}

// view is a node's bytes as a one-sided reader decodes them.
type view struct {
	b   []byte
	cfg *Config
}

func (v view) version() uint64 { return binary.LittleEndian.Uint64(v.b[NodeVersion:]) }
func (v view) level() uint32   { return binary.LittleEndian.Uint32(v.b[NodeLevel:]) }
func (v view) count() int      { return int(min(binary.LittleEndian.Uint32(v.b[NodeCount:]), v.cfg.Fanout)) }
func (v view) next() uint32    { return binary.LittleEndian.Uint32(v.b[NodeNext:]) }
func (v view) high() uint64    { return binary.LittleEndian.Uint64(v.b[NodeHigh:]) }
func (v view) key(i int) uint64 {
	return binary.LittleEndian.Uint64(v.b[NodeKeys+8*i:])
}
func (v view) val(i int) uint64 {
	return binary.LittleEndian.Uint64(v.b[v.cfg.NodeVals()+8*uint64(i):])
}

// search is the slot of the last key ≤ key (0 if none).
func (v view) search(key uint64) int {
	lo, hi := 0, v.count()
	for hi > lo+1 {
		mid := (lo + hi) / 2
		if v.key(mid) <= key {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

// node returns node n, from the cache or with one READ; cached says
// which.
func (c *RDMAClient) node(ctx context.Context, n uint32, rep *Reply) (v view, cached bool, err error) {
	c.mu.RLock()
	b, ok := c.cache[n]
	c.mu.RUnlock()
	if ok {
		return view{b, &c.cfg}, true, nil
	}
	size := c.cfg.NodeSize()
	rep.RoundTrips++
	b, err = c.r.Read(ctx, c.cfg.NodeOffset(n), uint32(size))
	if err != nil {
		return view{}, false, err
	}
	if uint64(len(b)) != size {
		return view{}, false, fmt.Errorf("btree: READ of %d bytes gave %d", size, len(b))
	}
	v = view{b, &c.cfg}
	if ver := v.version(); ver&1 == 1 || ver != binary.LittleEndian.Uint64(b[c.cfg.NodeVersionEnd():]) {
		return view{}, false, ErrBusy
	}
	return v, false, nil
}

func (c *RDMAClient) keep(n uint32, v view) {
	c.mu.Lock()
	c.cache[n] = v.b
	c.mu.Unlock()
}

func (c *RDMAClient) drop(n uint32) {
	c.mu.Lock()
	delete(c.cache, n)
	c.mu.Unlock()
}

// leaf descends to the leaf of key's place: its index and bytes.
func (c *RDMAClient) leaf(ctx context.Context, key uint64, rep *Reply) (uint32, view, error) {
	n, rootLevel := uint32(0), 0
	for range c.cfg.MaxHeight + 4 {
		v, cached, err := c.node(ctx, n, rep)
		if err != nil {
			return 0, view{}, err
		}
		level := int(v.level())
		if n == 0 {
			rootLevel = level
		}
		if !cached && level > 0 && level > rootLevel-c.CacheLevels {
			c.keep(n, v)
		}
		if v.next() != NIL && key >= v.high() {
			if cached {
				c.drop(n)
			}
			n = v.next()
			continue
		}
		if level == 0 {
			return n, v, nil
		}
		n = uint32(v.val(v.search(key)))
	}
	return 0, view{}, ErrTooDeep
}

// Lookup is key's value, found with READs.
func (c *RDMAClient) Lookup(ctx context.Context, key uint64) (uint64, Reply, error) {
	var rep Reply
	var value uint64
	err := retry.Do(ctx, c.Retries, ErrBusy, func() error {
		_, v, err := c.leaf(ctx, key, &rep)
		if err != nil {
			return err
		}
		i := v.search(key)
		if v.count() == 0 || v.key(i) != key {
			return ErrNotFound
		}
		value = v.val(i)
		return nil
	})
	return value, rep, err
}

// ErrNoVerbs is RDMAClient.Update's error when its Reader cannot write.
var ErrNoVerbs = errors.New("btree: the RDMA client's reader has no WRITE, CAS and FETCH-ADD (call.Verbs)")

// Update replaces key's value with one-sided verbs, as the update handler
// does in one message: the READs down to the leaf, then CAS the leaf's
// version from v to v+1 (the lock), WRITE the value, WRITE version_end
// v+2, FETCH-ADD 1 to the version. Four round trips past the descent. A
// client that dies between the CAS and the FETCH-ADD leaves the leaf
// locked.
func (c *RDMAClient) Update(ctx context.Context, key, value uint64) (uint64, Reply, error) {
	var rep Reply
	vb, ok := c.r.(call.Verbs)
	if !ok {
		return 0, rep, ErrNoVerbs
	}
	var old uint64
	err := retry.Do(ctx, c.Retries, ErrBusy, func() error {
		n, v, err := c.leaf(ctx, key, &rep)
		if err != nil {
			return err
		}
		i := v.search(key)
		if v.count() == 0 || v.key(i) != key {
			return ErrNotFound
		}
		off, ver := c.cfg.NodeOffset(n), v.version()
		rep.RoundTrips++
		if _, swapped, err := vb.CompareAndSwap(ctx, off+NodeVersion, ver, ver+1); err != nil {
			return err
		} else if !swapped {
			return ErrBusy
		}
		old = v.val(i)
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], value)
		// The unlock goes ahead whatever the WRITE of the value did, so
		// that the leaf's versions end even and equal.
		rep.RoundTrips += 3
		werr := vb.Write(ctx, off+c.cfg.NodeVals()+8*uint64(i), w[:])
		binary.LittleEndian.PutUint64(w[:], ver+2)
		eerr := vb.Write(ctx, off+c.cfg.NodeVersionEnd(), w[:])
		_, ferr := vb.FetchAdd(ctx, off+NodeVersion, 1)
		return errors.Join(werr, eerr, ferr)
	})
	return old, rep, err
}
