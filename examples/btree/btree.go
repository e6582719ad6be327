package btree

import (
	_ "embed"
	"errors"
	"fmt"
	"math/bits"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/source"
	"github.com/naam-project/naam/host"
)

//go:embed btree.naam
var sourceText []byte

var prog = source.New("btree", "btree.naam", sourceText)

// RegionName is the tree's region in btree.naam; Config.InstallOptions
// binds it to the registered region Config.Region.
const RegionName = "btree"

// The header, HeaderSize bytes at offset 0.
const (
	HeaderSize   = 64
	HeaderUsed   = 0 // u32: nodes allocated, the root included
	HeaderHeight = 4 // u32: levels, 1 for a lone root leaf
	HeaderKeys   = 8 // u64: keys in the tree
)

// A node, Config.NodeSize() bytes, Nodes of them from HeaderSize; node 0
// is the root.
const (
	NodeVersion = 0  // u64: sequence lock, even when stable, +2 per change
	NodeLevel   = 8  // u32: 0 for a leaf
	NodeCount   = 12 // u32: key slots in use
	NodeNext    = 16 // u32: the right sibling, NIL for the rightmost
	NodeFlags   = 20 // u32: 0
	NodeHigh    = 24 // u64: keys ≥ high live right of the node (if Next != NIL)
	NodeKeys    = 32 // [u64; Fanout], then vals [u64; Fanout], then version_end u64
)

// NIL ends a level's chain of siblings.
const NIL = 0xffff_ffff

// Fail codes of the handlers (the constants of btree.naam).
const (
	CodeNotFound = 1 // no such key
	CodeBusy     = 2 // a writer holds a node, or it changed during the read: retry
	CodeTooDeep  = 3 // the lookup visited MaxHeight+4 nodes without reaching its leaf
	CodeBadCount = 4 // scan: n is 0 or more than Scan
)

// Limits of a Config.
const (
	MinFanout    = 16
	MaxFanout    = 64 // a node of 64 keys is 1,064 bytes: one READ (at most 1,408)
	MaxMaxHeight = 16
	MaxScan      = 64 // a reply of 64 pairs is 1,032 bytes
)

// Handler names, in the object's order.
const (
	HandlerLookup = "lookup"
	HandlerScan   = "scan"
	HandlerUpdate = "update"
)

// Config is one tree's parameters: the constants of btree.naam (whose
// declared values are the defaults) and the region the program binds to.
type Config struct {
	// Region is the registered region (writable) that holds the tree:
	// InstallOptions binds the program's region btree to it. Default
	// "btree".
	Region string
	// Fanout is the key slots per node (FANOUT = 1 << LOG_FANOUT), a
	// power of two in MinFanout…MaxFanout. Default 32.
	Fanout uint32
	// Nodes is the nodes the region holds (NODES), the root included.
	// Default 4096; NodesFor sizes it for a number of keys.
	Nodes uint32
	// MaxHeight is the deepest tree a lookup descends (MAX_HEIGHT),
	// 1…MaxMaxHeight; the handlers visit at most MaxHeight + 4 nodes.
	// Default 8: 16^8 keys at the smallest fanout.
	MaxHeight uint32
	// Scan is the most pairs one scan returns (SCAN), 1…MaxScan. Default
	// 32.
	Scan uint32
}

// DefaultConfig is what btree.naam declares.
func DefaultConfig() Config { return Config{}.withDefaults() }

func (c Config) withDefaults() Config {
	if c.Region == "" {
		c.Region = RegionName
	}
	prog.Defaults(source.Param{Const: "FANOUT", Value: &c.Fanout}, source.Param{Const: "NODES", Value: &c.Nodes},
		source.Param{Const: "MAX_HEIGHT", Value: &c.MaxHeight}, source.Param{Const: "SCAN", Value: &c.Scan})
	return c
}

// Validate reports what is wrong with c (after defaults).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case bits.OnesCount32(c.Fanout) != 1 || c.Fanout < MinFanout || c.Fanout > MaxFanout:
		return fmt.Errorf("btree: fanout %d is not a power of two in %d…%d", c.Fanout, MinFanout, MaxFanout)
	case c.Nodes < 1 || c.Nodes >= NIL:
		return fmt.Errorf("btree: %d nodes, want 1…%d", c.Nodes, uint32(NIL-1))
	case c.MaxHeight < 1 || c.MaxHeight > MaxMaxHeight:
		return fmt.Errorf("btree: max height %d, want 1…%d", c.MaxHeight, MaxMaxHeight)
	case c.Scan < 1 || c.Scan > MaxScan:
		return fmt.Errorf("btree: scan of %d pairs, want 1…%d", c.Scan, MaxScan)
	case c.RegionSize() > bytecode.MaxRegionSize:
		return fmt.Errorf("btree: the tree needs %d bytes, a region holds at most %d", c.RegionSize(), uint64(bytecode.MaxRegionSize))
	}
	return nil
}

// NodeSize is the size of one node.
func (c Config) NodeSize() uint64 { return 40 + 16*uint64(c.withDefaults().Fanout) }

// NodeVals is the offset of a node's values (or children).
func (c Config) NodeVals() uint64 { return NodeKeys + 8*uint64(c.withDefaults().Fanout) }

// NodeVersionEnd is the offset of a node's trailing version.
func (c Config) NodeVersionEnd() uint64 { return c.NodeSize() - 8 }

// NodeOffset is where node i starts in the region.
func (c Config) NodeOffset(i uint32) uint64 { return HeaderSize + uint64(i)*c.NodeSize() }

// RegionSize is the size of the tree's region.
func (c Config) RegionSize() uint64 {
	c = c.withDefaults()
	return HeaderSize + uint64(c.Nodes)*c.NodeSize()
}

// Compile compiles btree.naam with c's parameters. The node verifies the
// object at install; install it with c.InstallOptions().
func Compile(c Config) (*bytecode.Object, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var logFanout uint32
	if c.Fanout != 0 {
		logFanout = uint32(bits.TrailingZeros32(c.Fanout))
	}
	return prog.Compile(source.Param{Const: "LOG_FANOUT", Value: &logFanout}, source.Param{Const: "NODES", Value: &c.Nodes},
		source.Param{Const: "MAX_HEIGHT", Value: &c.MaxHeight}, source.Param{Const: "SCAN", Value: &c.Scan})
}

// InstallOptions binds the program's region to c.Region (for
// host.Node.InstallWith and host.Peer.InstallWith).
func (c Config) InstallOptions() host.InstallOptions {
	return host.InstallOptions{Regions: map[string]string{RegionName: c.withDefaults().Region}}
}

// NodesFor is the nodes for keys keys at any mix of bulk load and
// inserts at the given fanout: every node at least half full (a split
// leaves two halves), plus the inner levels and some slack.
func NodesFor(keys uint64, fanout uint32) uint32 {
	half := uint64(max(fanout, MinFanout) / 2)
	n := (keys+half-1)/half + (keys+half-1)/half/(half-1) + 64
	return uint32(min(n, NIL-1))
}

// Errors of the clients and of Tree, one per fail code.
var (
	ErrNotFound = errors.New("btree: not found")
	ErrBusy     = errors.New("btree: busy (a writer holds the node)")
	ErrTooDeep  = errors.New("btree: the lookup visited too many nodes")
	ErrBadCount = errors.New("btree: scan count out of range")
	ErrFull     = errors.New("btree: no free node for a split")
)

var codeErrors = call.Errors{CodeNotFound: ErrNotFound, CodeBusy: ErrBusy, CodeTooDeep: ErrTooDeep, CodeBadCount: ErrBadCount}

// KeyStride spaces the benchmark's records: record n has key
// n × KeyStride, so that keys can be inserted between them.
const KeyStride = 16

// KeyOf is record n's key; ValueOf the value the benchmark loads for it.
func KeyOf(n uint64) uint64   { return n * KeyStride }
func ValueOf(n uint64) uint64 { return n ^ 0x5eed_0000_0000_0000 }
