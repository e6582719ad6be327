package caller

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

// The control plane over the wire (spec/wire.md, Control plane): control
// packets are sealed, windowed, retransmitted and answered once, as
// requests are.

// Register registers a region of size bytes named name for tenant on the
// responder and returns what verbs and peers need to reach it.
func (c *Client) Register(ctx context.Context, tenant uint32, name string, size uint64, opts wire.RegionOptions) (wire.RegionRef, error) {
	var r wire.RegisterReply
	err := c.Control(ctx, tenant, &wire.Register{Name: name, Size: size, Writable: opts.Writable, Placement: opts.Placement()}, &r)
	return wire.RegionRef{ID: r.Region, Key: r.Key}, err
}

// Unregister removes tenant's region (its id, wire.RegionRef.ID) from the
// responder, as its host would: refused (ErrControlFailed, with the
// reason) while an installed program links it.
func (c *Client) Unregister(ctx context.Context, tenant uint32, region uint32) error {
	return c.Control(ctx, tenant, &wire.Unregister{Region: uint64(region)}, nil)
}

// Installed is a program the responder installed.
type Installed struct {
	Program  uint64                  // for Uninstall
	Handlers []wire.InstalledHandler // names and the ids requests use
}

// uploads numbers a process's object uploads.
var uploads atomic.Uint64

// Install is InstallWith with the zero wire.InstallOptions.
func (c *Client) Install(ctx context.Context, tenant uint32, obj *bytecode.Object) (Installed, error) {
	return c.InstallWith(ctx, tenant, obj, wire.InstallOptions{})
}

// InstallWith uploads obj to the responder for tenant, in chunks that fit
// a packet, each sent when the last is answered, with opts's region
// bindings in the first. The responder verifies it (nothing of the sender
// is trusted) and links its regions; a refusal is a *RemoteError matching
// ErrControlFailed whose text says why.
func (c *Client) InstallWith(ctx context.Context, tenant uint32, obj *bytecode.Object, opts wire.InstallOptions) (Installed, error) {
	file, err := obj.Marshal()
	if err != nil {
		return Installed{}, err
	}
	if len(file) > wire.MaxInstallSize {
		return Installed{}, fmt.Errorf("caller: install: the object file has %d bytes, the most is %d", len(file), wire.MaxInstallSize)
	}
	bindings := opts.Bindings()
	// Room for the body's keys and integers beside the data, and in the
	// first chunk for the bindings.
	chunk := c.codec.MaxPayload() - 64
	first := chunk
	if len(bindings) > 0 {
		room, err := wire.AppendControl(nil, &wire.Install{Total: 1, Data: []byte{0}, Regions: bindings})
		if err != nil {
			return Installed{}, fmt.Errorf("caller: install: %w", err)
		}
		if first -= len(room); first < 1 {
			return Installed{}, fmt.Errorf("caller: install: %d region bindings do not fit a packet", len(bindings))
		}
	}
	id := uploads.Add(1) ^ c.cfg.FirstID
	var r wire.InstallReply
	for off, n := 0, first; off < len(file); off, n = off+n, chunk {
		end := min(off+n, len(file))
		m := &wire.Install{Upload: id, Total: uint64(len(file)), Offset: uint64(off), Data: file[off:end]}
		if off == 0 {
			m.Regions = bindings
		}
		if err := c.Control(ctx, tenant, m, &r); err != nil {
			return Installed{}, err
		}
	}
	if r.Program == 0 {
		return Installed{}, fmt.Errorf("caller: install: the responder holds %d of %d bytes and installed nothing", r.Received, len(file))
	}
	return Installed{Program: r.Program, Handlers: r.Handlers}, nil
}

// Uninstall removes tenant's program from the responder once its requests
// in flight are done.
func (c *Client) Uninstall(ctx context.Context, tenant uint32, program uint64) error {
	return c.Control(ctx, tenant, &wire.Uninstall{Program: program}, nil)
}

// maxStatsPages bounds the pages NodeStats asks for, so that a responder
// that always says more cannot keep a caller asking.
const maxStatsPages = 1 << 16

// NodeStats returns the responder's counters whose names start with
// prefix, sorted by name: the NIC's as the tenant may read them
// (Stats.ForTenant, Stats.Counters) and its server's
// (ServerStats.Counters), page by page.
func (c *Client) NodeStats(ctx context.Context, tenant uint32, prefix string) ([]wire.Counter, error) {
	var out []wire.Counter
	after := ""
	for range maxStatsPages {
		var r wire.StatsReply
		if err := c.Control(ctx, tenant, &wire.StatsRequest{Prefix: prefix, After: after}, &r); err != nil {
			return nil, err
		}
		if len(r.Counters) > 0 && r.Counters[0].Name <= after {
			return nil, fmt.Errorf("caller: stats: page after %q starts at %q", after, r.Counters[0].Name)
		}
		out = append(out, r.Counters...)
		if !r.More {
			return out, nil
		}
		after = r.Counters[len(r.Counters)-1].Name
	}
	return nil, fmt.Errorf("caller: stats: more than %d pages", maxStatsPages)
}

// Control runs one control op as tenant: it sends req's body and
// decodes the reply body into reply (nil: the reply must be empty). The
// ops above (Register, InstallWith, …) are made of it.
func (c *Client) Control(ctx context.Context, tenant uint32, req, reply wire.Control) error {
	body, err := wire.AppendControl(nil, req)
	if err != nil {
		return err
	}
	out, err := c.ControlBody(ctx, tenant, req.Op(), body)
	if err != nil {
		return err
	}
	if reply == nil {
		if len(out) != 0 {
			return fmt.Errorf("caller: %v: %d-byte reply, want none", req.Op(), len(out))
		}
		return nil
	}
	return wire.UnmarshalControl(out, reply)
}

// ControlBody sends body, as it is, as a control packet of op and returns
// the reply body: Control without the encoding, for tools and tests that
// probe what a responder does with a body it must refuse.
func (c *Client) ControlBody(ctx context.Context, tenant uint32, op wire.Op, body []byte) ([]byte, error) {
	cl := c.calls.Get().(*call)
	return c.doType(ctx, cl, wire.TypeControl, tenant, uint32(op), body, nil)
}

// Description is a node's answer to describe, all pages joined: its id,
// and the tenant's programs and regions.
type Description struct {
	Node     uint32
	Programs []wire.ProgramDesc
	Regions  []wire.RegionDesc
}

// Describe asks the responder for tenant's programs (with handler ids and
// layouts) and regions (with ids and keys), page by page. It works before
// the caller knows the responder's node id: a client dialed with Server 0
// may ask it, and learns the id from Description.Node.
func (c *Client) Describe(ctx context.Context, tenant uint32) (Description, error) {
	var d Description
	cursor := uint64(0)
	for {
		var r wire.DescribeReply
		if err := c.Control(ctx, tenant, &wire.DescribeRequest{Cursor: cursor}, &r); err != nil {
			return Description{}, err
		}
		if cursor > 0 && r.Node != d.Node {
			return Description{}, fmt.Errorf("caller: describe: page at %d came from node %d, the first from %d", cursor, r.Node, d.Node)
		}
		d.Node = r.Node
		d.Programs = append(d.Programs, r.Programs...)
		d.Regions = append(d.Regions, r.Regions...)
		if r.Next == 0 {
			return d, nil
		}
		if r.Next <= cursor {
			return Description{}, fmt.Errorf("caller: describe: next page %d does not follow %d", r.Next, cursor)
		}
		cursor = r.Next
	}
}
