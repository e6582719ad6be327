package btree

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/host"
)

// Tree is host-side access to a tree's region bytes (host.Region.Bytes on
// the node that serves it): the bulk loader, inserts, and lookups for
// checks. Its writes follow the handlers' protocol (node versions taken
// with a compare-and-swap, version_end around a change), so handlers and
// one-sided readers may run beside them; its own writers take turns (one
// mutex), which is what makes the splits simple: a writer always finds
// every split in the parents.
type Tree struct {
	cfg Config
	mem []byte
	mu  sync.Mutex
	// loaded is where BulkLoad laid the levels: the first node of level
	// i at loaded[i] (the leaves' at 0), and one past its last inner node
	// at the end; nil before a bulk load.
	loaded []uint32
}

// NewTree wraps mem, which must hold at least cfg.RegionSize() bytes and
// start on an 8-byte boundary (regions do). A region of zeros becomes an
// empty tree: a root leaf without keys.
func NewTree(cfg Config, mem []byte) (*Tree, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if uint64(len(mem)) < cfg.RegionSize() {
		return nil, fmt.Errorf("btree: region of %d bytes, the tree needs %d", len(mem), cfg.RegionSize())
	}
	if len(mem) > 0 && uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, fmt.Errorf("btree: region bytes not 8-byte aligned")
	}
	t := &Tree{cfg: cfg, mem: mem[:cfg.RegionSize()]}
	if t.Used() == 0 {
		t.writeNode(0, node{level: 0, next: NIL})
		atomic.StoreUint32(t.u32(HeaderHeight), 1)
		atomic.StoreUint32(t.u32(HeaderUsed), 1)
	}
	return t, nil
}

// Config is the tree's configuration, defaults filled in.
func (t *Tree) Config() Config { return t.cfg }

func (t *Tree) u64(off uint64) *uint64 { return (*uint64)(unsafe.Pointer(&t.mem[off])) }
func (t *Tree) u32(off uint64) *uint32 { return (*uint32)(unsafe.Pointer(&t.mem[off])) }

// Used is the nodes allocated; Height the levels; Len the keys.
func (t *Tree) Used() uint32   { return atomic.LoadUint32(t.u32(HeaderUsed)) }
func (t *Tree) Height() uint32 { return atomic.LoadUint32(t.u32(HeaderHeight)) }
func (t *Tree) Len() uint64    { return atomic.LoadUint64(t.u64(HeaderKeys)) }

// node is one node's contents, decoded.
type node struct {
	level, next uint32
	high        uint64
	keys, vals  []uint64
}

func (t *Tree) word(n uint32, off uint64) *uint64 { return t.u64(t.cfg.NodeOffset(n) + off) }
func (t *Tree) half(n uint32, off uint64) *uint32 { return t.u32(t.cfg.NodeOffset(n) + off) }

// readNode decodes node n. Only the writer (holding mu) calls it: nothing
// else changes nodes' entries.
func (t *Tree) readNode(n uint32) node {
	cnt := min(atomic.LoadUint32(t.half(n, NodeCount)), t.cfg.Fanout)
	nd := node{
		level: atomic.LoadUint32(t.half(n, NodeLevel)), next: atomic.LoadUint32(t.half(n, NodeNext)),
		high: atomic.LoadUint64(t.word(n, NodeHigh)), keys: make([]uint64, cnt), vals: make([]uint64, cnt),
	}
	for i := range cnt {
		nd.keys[i] = atomic.LoadUint64(t.word(n, NodeKeys+8*uint64(i)))
		nd.vals[i] = atomic.LoadUint64(t.word(n, t.cfg.NodeVals()+8*uint64(i)))
	}
	return nd
}

// writeNode stores nd's fields into node n (not its versions).
func (t *Tree) writeNode(n uint32, nd node) {
	atomic.StoreUint32(t.half(n, NodeLevel), nd.level)
	atomic.StoreUint32(t.half(n, NodeCount), uint32(len(nd.keys)))
	atomic.StoreUint32(t.half(n, NodeNext), nd.next)
	atomic.StoreUint32(t.half(n, NodeFlags), 0)
	atomic.StoreUint64(t.word(n, NodeHigh), nd.high)
	for i := range t.cfg.Fanout {
		var k, v uint64
		if int(i) < len(nd.keys) {
			k, v = nd.keys[i], nd.vals[i]
		}
		atomic.StoreUint64(t.word(n, NodeKeys+8*uint64(i)), k)
		atomic.StoreUint64(t.word(n, t.cfg.NodeVals()+8*uint64(i)), v)
	}
}

// lock takes node n's sequence lock (a handler's update holds it for one
// run, a one-sided update for a few round trips) and returns the version
// it took it at; version_end says odd before the first change.
func (t *Tree) lock(n uint32) uint64 {
	ver := t.word(n, NodeVersion)
	for {
		v := atomic.LoadUint64(ver)
		if v&1 == 0 && atomic.CompareAndSwapUint64(ver, v, v+1) {
			atomic.StoreUint64(t.word(n, t.cfg.NodeVersionEnd()), v+1)
			return v
		}
		runtime.Gosched()
	}
}

// unlock publishes the change: version_end, then the version, v+2.
func (t *Tree) unlock(n uint32, v uint64) {
	atomic.StoreUint64(t.word(n, t.cfg.NodeVersionEnd()), v+2)
	atomic.StoreUint64(t.word(n, NodeVersion), v+2)
}

// rewrite replaces node n's contents under its lock.
func (t *Tree) rewrite(n uint32, nd node) {
	v := t.lock(n)
	t.writeNode(n, nd)
	t.unlock(n, v)
}

// search is the slot of the last key ≤ key (0 if none), as the handlers'.
func search(keys []uint64, key uint64) int {
	i, _ := slices.BinarySearch(keys, key+1)
	if key == ^uint64(0) {
		i = len(keys)
	}
	return max(i-1, 0)
}

// alloc takes a fresh node. Nodes are never freed, so one that a reader
// still holds an old index of keeps making sense.
func (t *Tree) alloc() uint32 {
	n := atomic.LoadUint32(t.u32(HeaderUsed))
	atomic.StoreUint32(t.u32(HeaderUsed), n+1)
	return n
}

// ErrNotEmpty is BulkLoad's error for a tree that holds keys.
var ErrNotEmpty = errors.New("btree: bulk load into a tree that is not empty")

// BulkLoad builds the tree from keys (strictly ascending) and their
// values, fill keys to a node (1…Fanout; 0: three quarters of the
// fanout), level by level from the leaves up, the root last in node 0.
// The tree must be empty; handlers may run meanwhile (they see an empty
// root until the last step).
func (t *Tree) BulkLoad(keys, vals []uint64, fill int) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	F := int(t.cfg.Fanout)
	if fill == 0 {
		fill = F * 3 / 4
	}
	switch {
	case fill < 1 || fill > F:
		return fmt.Errorf("btree: fill %d, want 1…%d", fill, F)
	case len(keys) != len(vals):
		return fmt.Errorf("btree: %d keys and %d values", len(keys), len(vals))
	case t.Len() != 0 || t.Used() != 1:
		return ErrNotEmpty
	}
	for i := 1; i < len(keys); i++ {
		if keys[i] <= keys[i-1] {
			return fmt.Errorf("btree: bulk load: key %d (%d) is not above key %d (%d)", i, keys[i], i-1, keys[i-1])
		}
	}
	// The nodes needed, level by level, before anything is written.
	need, height := uint64(0), uint32(1)
	for n := (len(keys) + fill - 1) / fill; n > 1; n = (n + fill - 1) / fill {
		need += uint64(n)
		height++
	}
	if height > t.cfg.MaxHeight {
		return fmt.Errorf("btree: %d keys at %d a node make %d levels, more than MaxHeight %d", len(keys), fill, height, t.cfg.MaxHeight)
	}
	if 1+need > uint64(t.cfg.Nodes) {
		return fmt.Errorf("%w: bulk load of %d keys at %d a node needs %d nodes, the region holds %d", ErrFull, len(keys), fill, 1+need, t.cfg.Nodes)
	}
	total := uint64(len(keys))
	level := uint32(0)
	var loaded []uint32
	for {
		chunks := (len(keys) + fill - 1) / fill
		if chunks <= 1 {
			t.rewrite(0, node{level: level, next: NIL, keys: keys, vals: vals})
			break
		}
		first := t.Used()
		loaded = append(loaded, first)
		atomic.StoreUint32(t.u32(HeaderUsed), first+uint32(chunks))
		upKeys, upVals := make([]uint64, chunks), make([]uint64, chunks)
		for c := range chunks {
			lo, hi := c*fill, min((c+1)*fill, len(keys))
			nd := node{level: level, next: NIL, keys: keys[lo:hi], vals: vals[lo:hi]}
			if c+1 < chunks {
				nd.next, nd.high = first+uint32(c)+1, keys[hi]
			}
			t.writeNode(first+uint32(c), nd)
			upKeys[c], upVals[c] = keys[lo], uint64(first)+uint64(c)
		}
		keys, vals = upKeys, upVals
		level++
	}
	t.loaded = append(loaded, t.Used()) // an empty load before this one laid nothing
	atomic.StoreUint32(t.u32(HeaderHeight), level+1)
	atomic.StoreUint64(t.u64(HeaderKeys), total)
	return nil
}

// KeepUpperLevels is what a caller keeps to run lookups at the client
// from the top levels: UpperLevels(levels), dropped when a lookup fails
// BUSY (a copy a writer tore) or TOO_DEEP (copies so old that a descent
// from them visits more nodes than a lookup may); host.Peer.KeepAtClient
// takes it.
func (t *Tree) KeepUpperLevels(levels int) host.Keep {
	return host.Keep{Ranges: t.UpperLevels(levels), DropOn: []int32{CodeBusy, CodeTooDeep}}
}

// UpperLevels returns the nodes of the top levels of the tree as BulkLoad
// laid them, one range of the program's region (index 0) each, the units
// a clientrun.Keep keeps whole: the root, node 0, and the nodes of the
// levels-1 levels below it, which BulkLoad allocated last and together. They are inner nodes for as long as the
// tree lives (a node's level never changes, but node 0's, which only
// rises), so a caller may keep them from one lookup to the next
// (KeepUpperLevels, host.Peer.KeepAtClient, dropped on CodeBusy and
// CodeTooDeep): a split moves keys to a new node on the right and frees
// none, so an old copy costs moves right, and a descent that needs more
// than a lookup may make fails CodeTooDeep, which Client tries once more.
// The leaves are never among them: levels is at most the height less
// one, and nil is returned for a tree that was not bulk loaded or is a
// lone leaf.
func (t *Tree) UpperLevels(levels int) []bytecode.AccessRange {
	t.mu.Lock()
	defer t.mu.Unlock()
	inner := len(t.loaded) - 2 // the inner levels BulkLoad allocated below the root
	if inner < 0 || levels < 1 {
		return nil
	}
	node := func(n uint32) bytecode.AccessRange {
		return bytecode.AccessRange{Offset: uint32(t.cfg.NodeOffset(n)), Length: uint32(t.cfg.NodeSize())}
	}
	out := []bytecode.AccessRange{node(0)}
	if below := min(levels-1, inner); below > 0 {
		for n := t.loaded[len(t.loaded)-1-below]; n < t.loaded[len(t.loaded)-1]; n++ {
			out = append(out, node(n))
		}
	}
	return out
}

// Insert puts key with value into the tree, or replaces the value of key
// if it is there (replaced says which). A full leaf splits in two, and
// the split goes up as far as it must; a full root moves its entries into
// two new nodes and becomes their parent, one level higher.
func (t *Tree) Insert(key, value uint64) (replaced bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.Height(); t.Used()+h+1 > t.cfg.Nodes {
		return false, fmt.Errorf("%w: %d of %d nodes used, a split of a %d-level tree may take %d", ErrFull, t.Used(), t.cfg.Nodes, h, h+1)
	}
	var path []pathStep
	n := uint32(0)
	nd := t.readNode(n)
	for nd.level > 0 {
		i := search(nd.keys, key)
		path = append(path, pathStep{n, i})
		n = uint32(nd.vals[i])
		nd = t.readNode(n)
	}
	i := search(nd.keys, key)
	if len(nd.keys) > 0 && nd.keys[i] == key {
		v := t.lock(n)
		atomic.StoreUint64(t.word(n, t.cfg.NodeVals()+8*uint64(i)), value)
		t.unlock(n, v)
		return true, nil
	}
	if t.Height() == t.cfg.MaxHeight && len(nd.keys) == int(t.cfg.Fanout) && t.fullPath(path) {
		return false, fmt.Errorf("btree: the insert would grow the tree past MaxHeight %d", t.cfg.MaxHeight)
	}
	pos := i
	if len(nd.keys) > 0 && nd.keys[i] < key {
		pos = i + 1
	}
	k, v := key, value
	for {
		keys, vals := slices.Insert(slices.Clone(nd.keys), pos, k), slices.Insert(slices.Clone(nd.vals), pos, v)
		switch {
		case len(keys) <= int(t.cfg.Fanout):
			nd.keys, nd.vals = keys, vals
			t.rewrite(n, nd)
		case n == 0:
			t.splitRoot(nd, keys, vals)
		default:
			h := len(keys) / 2
			r := t.alloc()
			t.writeNode(r, node{level: nd.level, next: nd.next, high: nd.high, keys: keys[h:], vals: vals[h:]})
			t.rewrite(n, node{level: nd.level, next: r, high: keys[h], keys: keys[:h], vals: vals[:h]})
			up := path[len(path)-1]
			path = path[:len(path)-1]
			n, pos, k, v = up.n, up.slot+1, keys[h], uint64(r)
			nd = t.readNode(n)
			continue
		}
		break
	}
	atomic.AddUint64(t.u64(HeaderKeys), 1)
	return false, nil
}

// pathStep is a node an insert descended through and the slot it took.
type pathStep struct {
	n    uint32
	slot int
}

// fullPath says whether every node on path is full: an insert into a
// full leaf below it splits up to the root.
func (t *Tree) fullPath(path []pathStep) bool {
	for _, s := range path {
		if atomic.LoadUint32(t.half(s.n, NodeCount)) < t.cfg.Fanout {
			return false
		}
	}
	return true
}

// splitRoot moves the root's entries (keys, vals: one more than fit) into
// two new nodes, left and right, and makes the root their parent.
func (t *Tree) splitRoot(root node, keys, vals []uint64) {
	h := len(keys) / 2
	a, b := t.alloc(), t.alloc()
	t.writeNode(b, node{level: root.level, next: NIL, keys: keys[h:], vals: vals[h:]})
	t.writeNode(a, node{level: root.level, next: b, high: keys[h], keys: keys[:h], vals: vals[:h]})
	t.rewrite(0, node{level: root.level + 1, next: NIL, keys: []uint64{keys[0], keys[h]}, vals: []uint64{uint64(a), uint64(b)}})
	atomic.AddUint32(t.u32(HeaderHeight), 1)
}

// Get looks key up as the lookup handler does, retrying while a writer
// holds a node.
func (t *Tree) Get(key uint64) (uint64, error) {
	for {
		v, err := t.get(key)
		if !errors.Is(err, ErrBusy) {
			return v, err
		}
		runtime.Gosched()
	}
}

func (t *Tree) get(key uint64) (uint64, error) {
	n := uint32(0)
	for range t.cfg.MaxHeight + 4 {
		ver := atomic.LoadUint64(t.word(n, NodeVersion))
		if ver&1 == 1 {
			return 0, ErrBusy
		}
		next, high := atomic.LoadUint32(t.half(n, NodeNext)), atomic.LoadUint64(t.word(n, NodeHigh))
		if next != NIL && key >= high {
			if atomic.LoadUint64(t.word(n, NodeVersion)) != ver {
				return 0, ErrBusy
			}
			n = next
			continue
		}
		cnt := min(atomic.LoadUint32(t.half(n, NodeCount)), t.cfg.Fanout)
		keys := make([]uint64, cnt)
		for i := range cnt {
			keys[i] = atomic.LoadUint64(t.word(n, NodeKeys+8*uint64(i)))
		}
		i := search(keys, key)
		val := atomic.LoadUint64(t.word(n, t.cfg.NodeVals()+8*uint64(i)))
		leaf := atomic.LoadUint32(t.half(n, NodeLevel)) == 0
		if atomic.LoadUint64(t.word(n, NodeVersion)) != ver {
			return 0, ErrBusy
		}
		if leaf {
			if cnt == 0 || keys[i] != key {
				return 0, ErrNotFound
			}
			return val, nil
		}
		n = uint32(val)
	}
	return 0, ErrTooDeep
}

// Check walks the whole tree and reports the first thing wrong with it:
// levels, key order, fences, sibling links, the children's ranges, the
// versions, the nodes reached and the key count. The writers must be
// idle.
func (t *Tree) Check() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	root := t.readNode(0)
	if root.level+1 != t.Height() {
		return fmt.Errorf("btree: the root is at level %d, the header says %d levels", root.level, t.Height())
	}
	if root.next != NIL {
		return fmt.Errorf("btree: the root links to %d", root.next)
	}
	// Walk each level left to right from its leftmost node. Within a
	// level, a node's fence is its right sibling's first key; the children
	// of a node's slots are consecutive in the level below, each starting
	// at its slot's key (the leftmost may start lower: new smallest keys
	// go to it).
	leftmost := uint32(0)
	seen := map[uint32]bool{}
	var keys uint64
	for level := int(root.level); level >= 0; level-- {
		var below []uint32 // the children in order, for the level below
		var prev *node
		for n := leftmost; n != NIL; {
			if seen[n] {
				return fmt.Errorf("btree: node %d is reached twice", n)
			}
			seen[n] = true
			if n >= t.Used() {
				return fmt.Errorf("btree: node %d is past the %d allocated", n, t.Used())
			}
			if v, ve := atomic.LoadUint64(t.word(n, NodeVersion)), atomic.LoadUint64(t.word(n, t.cfg.NodeVersionEnd())); v&1 == 1 || v != ve {
				return fmt.Errorf("btree: node %d versions %d and %d", n, v, ve)
			}
			nd := t.readNode(n)
			if int(nd.level) != level {
				return fmt.Errorf("btree: node %d is at level %d in level %d's chain", n, nd.level, level)
			}
			if len(nd.keys) == 0 && !(n == 0 && level == 0) {
				return fmt.Errorf("btree: node %d has no keys", n)
			}
			if prev != nil && prev.high != nd.keys[0] {
				return fmt.Errorf("btree: node %d starts at %d, its left sibling's fence is %d", n, nd.keys[0], prev.high)
			}
			for i, k := range nd.keys {
				if i > 0 && k <= nd.keys[i-1] {
					return fmt.Errorf("btree: node %d: key %d (%d) is not above key %d", n, i, k, nd.keys[i-1])
				}
				if nd.next != NIL && k >= nd.high {
					return fmt.Errorf("btree: node %d: key %d not below its fence %d", n, k, nd.high)
				}
				if level > 0 {
					below = append(below, uint32(nd.vals[i]))
				}
			}
			if level == 0 {
				keys += uint64(len(nd.keys))
			}
			prev = &nd
			n = nd.next
		}
		if level == 0 {
			break
		}
		// The level below, in chain order, is the children in order.
		slot := 0
		for n := leftmost; n != NIL; {
			nd := t.readNode(n)
			for i, k := range nd.keys {
				c := below[slot]
				ck := t.readNode(c)
				if int(ck.level) != level-1 || len(ck.keys) == 0 {
					return fmt.Errorf("btree: node %d slot %d: child %d is at level %d with %d keys", n, i, c, ck.level, len(ck.keys))
				}
				if (slot > 0 && ck.keys[0] != k) || (slot == 0 && ck.keys[0] > k) {
					return fmt.Errorf("btree: node %d slot %d: child %d starts at %d, the slot's key is %d", n, i, c, ck.keys[0], k)
				}
				if slot+1 < len(below) && ck.next != below[slot+1] {
					return fmt.Errorf("btree: child %d links to %d, the next child is %d", c, ck.next, below[slot+1])
				}
				if slot+1 == len(below) && ck.next != NIL {
					return fmt.Errorf("btree: the last child %d links to %d", c, ck.next)
				}
				slot++
			}
			n = nd.next
		}
		leftmost = below[0]
	}
	if len(seen) != int(t.Used()) {
		return fmt.Errorf("btree: %d nodes reached, %d allocated", len(seen), t.Used())
	}
	if keys != t.Len() {
		return fmt.Errorf("btree: %d keys in the leaves, the header says %d", keys, t.Len())
	}
	return nil
}
