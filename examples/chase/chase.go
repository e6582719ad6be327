package chase

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/source"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/nicrt"
)

//go:embed chase.naam
var sourceText []byte

var prog = source.New("chase", "chase.naam", sourceText)

// RegionName is the list region in chase.naam; Config.InstallOptions binds
// it to the registered region Config.Region.
const RegionName = "chase"

// The node layout.
const (
	NodeSize  = 24
	NodeKey   = 0  // u64
	NodeValue = 8  // u64
	NodeNext  = 16 // u32, NIL at the end of a list
	NIL       = 0xffff_ffff
)

// Fail codes of the handlers.
const (
	CodeNotFound = 1 // lookup: the list ended without the key
	CodeEnd      = 2 // walk: the list ended before the hop count
	CodeBadHops  = 3 // walk: hops is 0 or more than MaxHops
	CodeTooLong  = 4 // lookup: MaxHops nodes visited without the key
)

// Handler names, in object order.
const (
	HandlerWalk   = "walk"
	HandlerLookup = "lookup"
)

// Limits of a Config. 256 hops verify at about 3,200 instructions, over
// the NIC budget (2,000): such a walk runs on a host core.
const MaxMaxHops = 256

// Config is one list region's parameters: the constants of chase.naam
// (whose declared values are the defaults) and the region the program
// binds to.
type Config struct {
	Region  string // the registered region (read-only will do); default "chase"
	Nodes   uint32 // NODES: default 4096; less than NIL
	MaxHops uint32 // MAX_HOPS: default 64, at most MaxMaxHops
}

// DefaultConfig is what chase.naam declares: 4096 nodes, 64 hops, in
// region "chase".
func DefaultConfig() Config { return Config{}.withDefaults() }

// params ties c's fields to chase.naam's constants.
func (c *Config) params() []source.Param {
	return []source.Param{{Const: "NODES", Value: &c.Nodes}, {Const: "MAX_HOPS", Value: &c.MaxHops}}
}

func (c Config) withDefaults() Config {
	if c.Region == "" {
		c.Region = RegionName
	}
	prog.Defaults(c.params()...)
	return c
}

// Validate reports what is wrong with c.
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.MaxHops > MaxMaxHops:
		return fmt.Errorf("chase: %d hops, at most %d", c.MaxHops, MaxMaxHops)
	case c.Nodes == NIL || c.RegionSize() > bytecode.MaxRegionSize:
		return fmt.Errorf("chase: %d nodes do not fit a region", c.Nodes)
	}
	return nil
}

// RegionSize is the list region's size.
func (c Config) RegionSize() uint64 { return uint64(c.withDefaults().Nodes) * NodeSize }

// Compile compiles chase.naam with c's parameters (nicrt.NIC.Install
// verifies it). Install it with c.InstallOptions().
func Compile(c Config) (*bytecode.Object, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return prog.Compile(c.params()...)
}

// InstallOptions binds the program's region to c.Region.
func (c Config) InstallOptions() nicrt.InstallOptions {
	return nicrt.InstallOptions{Regions: map[string]string{RegionName: c.withDefaults().Region}}
}

// Node is one list node as the host sees it.
type Node struct {
	Key, Value uint64
	Next       uint32
}

// SetNode writes node i into region bytes mem.
func SetNode(mem []byte, i uint32, n Node) error {
	off := uint64(i) * NodeSize
	if off+NodeSize > uint64(len(mem)) {
		return fmt.Errorf("chase: node %d is outside a region of %d bytes", i, len(mem))
	}
	b := mem[off : off+NodeSize]
	binary.LittleEndian.PutUint64(b[NodeKey:], n.Key)
	binary.LittleEndian.PutUint64(b[NodeValue:], n.Value)
	binary.LittleEndian.PutUint32(b[NodeNext:], n.Next)
	clear(b[NodeNext+4:])
	return nil
}

// DecodeNode reads a node from its NodeSize bytes.
func DecodeNode(b []byte) (Node, error) {
	if len(b) != NodeSize {
		return Node{}, fmt.Errorf("chase: node of %d bytes, want %d", len(b), NodeSize)
	}
	return Node{
		Key:   binary.LittleEndian.Uint64(b[NodeKey:]),
		Value: binary.LittleEndian.Uint64(b[NodeValue:]),
		Next:  binary.LittleEndian.Uint32(b[NodeNext:]),
	}, nil
}

// ValueOf is the value BuildList gives the node with key k.
func ValueOf(k uint64) uint64 { return k*0x9e3779b97f4a7c15 ^ 0x5eed }

// BuildList writes a list of length nodes into mem, each in a slot drawn
// at random (so consecutive nodes are not neighbours in memory), with
// keys 0, 1, … in list order and values ValueOf(key). It returns the head
// and the slots in list order.
func BuildList(mem []byte, cfg Config, length int, r *rand.Rand) (head uint32, order []uint32, err error) {
	cfg = cfg.withDefaults()
	if length <= 0 || uint64(length) > uint64(cfg.Nodes) {
		return NIL, nil, fmt.Errorf("chase: a list of %d nodes in %d slots", length, cfg.Nodes)
	}
	if uint64(len(mem)) < cfg.RegionSize() {
		return NIL, nil, fmt.Errorf("chase: region of %d bytes, want %d", len(mem), cfg.RegionSize())
	}
	perm := r.Perm(int(cfg.Nodes))
	order = make([]uint32, length)
	for p := range order {
		order[p] = uint32(perm[p])
	}
	for p, slot := range order {
		next := uint32(NIL)
		if p+1 < length {
			next = order[p+1]
		}
		if err := SetNode(mem, slot, Node{Key: uint64(p), Value: ValueOf(uint64(p)), Next: next}); err != nil {
			return NIL, nil, err
		}
	}
	return order[0], order, nil
}

// Errors of the clients, one per fail code.
var (
	ErrNotFound = errors.New("chase: key not in the list")
	ErrEnd      = errors.New("chase: the list ended before the hop count")
	ErrBadHops  = errors.New("chase: hop count 0 or over the maximum")
	ErrTooLong  = errors.New("chase: the key is further than the maximum hops")
)

// codeErrors are the sentinels of the handlers' fail codes.
var codeErrors = call.Errors{CodeNotFound: ErrNotFound, CodeEnd: ErrEnd, CodeBadHops: ErrBadHops, CodeTooLong: ErrTooLong}

// Result is what a walk or lookup found and what it cost.
type Result struct {
	Index      uint32 // the last node visited (Walk)
	Key, Value uint64
	Hops       uint32 // nodes visited
	RoundTrips int
}

// HandlerIDs are an installed program's handler ids.
type HandlerIDs struct{ Walk, Lookup uint32 }

// IDs finds them in p.
func IDs(p *nicrt.Program) (HandlerIDs, error) {
	w, ok1 := p.HandlerID(HandlerWalk)
	l, ok2 := p.HandlerID(HandlerLookup)
	if !ok1 || !ok2 {
		return HandlerIDs{}, errors.New("chase: the program has no walk or lookup handler")
	}
	return HandlerIDs{Walk: w, Lookup: l}, nil
}

// Client walks lists with one active message per walk.
type Client struct {
	c   call.Caller
	ids HandlerIDs
}

// NewClient is a client of the handlers ids through c.
func NewClient(c call.Caller, ids HandlerIDs) *Client { return &Client{c: c, ids: ids} }

func (c *Client) call(ctx context.Context, h uint32, a uint32, b uint64, bsize int) ([]byte, error) {
	req := make([]byte, 0, 16)
	req = binary.LittleEndian.AppendUint32(req, a)
	if bsize == 4 {
		req = binary.LittleEndian.AppendUint32(req, uint32(b))
	} else {
		req = binary.LittleEndian.AppendUint32(req, 0) // padding before the u64
		req = binary.LittleEndian.AppendUint64(req, b)
	}
	out, err := c.c.Call(ctx, h, req)
	if code, ok := call.Code(err); ok {
		return nil, codeErrors.Of("chase: handler failed", code, err)
	}
	return out, err
}

// Walk visits hops nodes from head on the node: one round trip.
func (c *Client) Walk(ctx context.Context, head, hops uint32) (Result, error) {
	res := Result{RoundTrips: 1}
	out, err := c.call(ctx, c.ids.Walk, head, uint64(hops), 4)
	if err != nil {
		return res, err
	}
	if len(out) != 24 {
		return res, fmt.Errorf("chase: walk reply of %d bytes, want 24", len(out))
	}
	res.Index = binary.LittleEndian.Uint32(out)
	res.Key = binary.LittleEndian.Uint64(out[8:])
	res.Value = binary.LittleEndian.Uint64(out[16:])
	res.Hops = hops
	return res, nil
}

// Lookup finds key from head on the node: one round trip.
func (c *Client) Lookup(ctx context.Context, head uint32, key uint64) (Result, error) {
	res := Result{RoundTrips: 1, Key: key}
	out, err := c.call(ctx, c.ids.Lookup, head, key, 8)
	if err != nil {
		return res, err
	}
	if len(out) != 16 {
		return res, fmt.Errorf("chase: lookup reply of %d bytes, want 16", len(out))
	}
	res.Value = binary.LittleEndian.Uint64(out)
	res.Hops = binary.LittleEndian.Uint32(out[8:])
	return res, nil
}

// RDMAClient walks lists with one READ per node visited.
type RDMAClient struct {
	r   call.Reader
	cfg Config
}

// NewRDMAClient reads the list region cfg through r.
func NewRDMAClient(r call.Reader, cfg Config) *RDMAClient {
	return &RDMAClient{r: r, cfg: cfg.withDefaults()}
}

func (c *RDMAClient) read(ctx context.Context, i uint32, res *Result) (Node, error) {
	if i >= c.cfg.Nodes {
		return Node{}, fmt.Errorf("chase: link to node %d of %d", i, c.cfg.Nodes)
	}
	res.RoundTrips++
	res.Hops++
	b, err := c.r.Read(ctx, uint64(i)*NodeSize, NodeSize)
	if err != nil {
		return Node{}, err
	}
	return DecodeNode(b)
}

// Walk visits hops nodes from head, reading each.
func (c *RDMAClient) Walk(ctx context.Context, head, hops uint32) (Result, error) {
	var res Result
	if hops == 0 || hops > c.cfg.MaxHops {
		return res, ErrBadHops
	}
	i := head
	for {
		if i == NIL {
			return res, ErrEnd
		}
		n, err := c.read(ctx, i, &res)
		if err != nil {
			return res, err
		}
		if res.Hops == hops {
			res.Index, res.Key, res.Value = i, n.Key, n.Value
			return res, nil
		}
		i = n.Next
	}
}

// Lookup finds key from head, reading node after node.
func (c *RDMAClient) Lookup(ctx context.Context, head uint32, key uint64) (Result, error) {
	res := Result{Key: key}
	i := head
	for res.Hops < c.cfg.MaxHops {
		if i == NIL {
			return res, ErrNotFound
		}
		n, err := c.read(ctx, i, &res)
		if err != nil {
			return res, err
		}
		if n.Key == key {
			res.Value = n.Value
			return res, nil
		}
		i = n.Next
	}
	return res, ErrTooLong
}

// PeerIDs finds the handler ids of the chase program a node installed,
// through the host library.
func PeerIDs(ctx context.Context, p *host.Peer) (HandlerIDs, error) {
	w, err := p.Handler(ctx, HandlerWalk)
	if err != nil {
		return HandlerIDs{}, fmt.Errorf("chase: %w", err)
	}
	l, err := p.Handler(ctx, HandlerLookup)
	if err != nil {
		return HandlerIDs{}, fmt.Errorf("chase: %w", err)
	}
	return HandlerIDs{Walk: w.ID, Lookup: l.ID}, nil
}
