package peer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
)

// What a tenant manages on a peer over the control plane: programs
// (install, uninstall, list), regions (register, list, bulk reads and
// writes by the verbs) and the counters.

// ErrNoProgram: the peer has no program of that name or id.
var ErrNoProgram = errors.New("host: no such program")

// ErrRange: a range is not inside the peer's region. Nothing was sent.
var ErrRange = errors.New("host: outside the region")

// Program is a program installed on a peer, as it described it.
type Program struct {
	ID     uint64 // the node's id for it (Uninstall)
	Source string // the object's source file name ("counter.naam")
	// Name qualifies its handlers' names: the source's base name without
	// .naam, with "#ID" added where two of the tenant's programs share it
	// ("counter", "counter#3"; bytecode.ProgramLabels).
	Name     string
	Handlers []*Handler
}

// Region is a region registered on a peer for the tenant.
type Region struct {
	Name     string
	ID       uint32 // the node's id for it
	Size     uint64 // bytes
	Writable bool   // stores, atomics and the WRITE verb allowed
	NICMem   bool   // in the NIC's memory rather than the host's
}

// Programs lists the peer's programs for the tenant, by id, as last
// described (Refresh asks again).
func (p *Peer) Programs() []Program {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return append([]Program(nil), p.programs...)
}

// Regions lists the peer's regions for the tenant, by name, as last
// described.
func (p *Peer) Regions() []Region {
	p.mu.RLock()
	out := make([]Region, 0, len(p.regions))
	for _, r := range p.regions {
		out = append(out, peerRegion(r))
	}
	p.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func peerRegion(r wire.RegionDesc) Region {
	return Region{Name: r.Name, ID: r.Region, Size: r.Size, Writable: r.Writable, NICMem: r.Placement == wire.PlacementNICMem}
}

// Region returns the peer's region called name, describing the peer
// again if it does not know it.
func (p *Peer) Region(ctx context.Context, name string) (Region, error) {
	r, err := p.regionDesc(ctx, name)
	return peerRegion(r), err
}

// regionDesc is the description of the peer's region called name,
// described again if the peer does not know the name.
func (p *Peer) regionDesc(ctx context.Context, name string) (wire.RegionDesc, error) {
	get := func() (wire.RegionDesc, bool) {
		p.mu.RLock()
		defer p.mu.RUnlock()
		r, ok := p.regions[name]
		return r, ok
	}
	r, ok := get()
	if !ok {
		if err := p.Refresh(ctx); err != nil {
			return wire.RegionDesc{}, err
		}
		if r, ok = get(); !ok {
			return wire.RegionDesc{}, fmt.Errorf("host: %v has no region %q: %w (it has %s)", p.addr, name, ErrNoRegion, p.regionNames())
		}
	}
	return r, nil
}

func (p *Peer) regionNames() string {
	rs := p.Regions()
	if len(rs) == 0 {
		return "none"
	}
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// Program returns the peer's program called name: its Name ("counter",
// "counter#3"), its source file's name ("counter.naam") or its id ("3"),
// describing the peer again if none matches. A name two programs share
// is an error that lists their Names.
func (p *Peer) Program(ctx context.Context, name string) (Program, error) {
	find := func() ([]Program, bool) {
		var out []Program
		for _, pr := range p.Programs() {
			if pr.Name == name || pr.Source == name || strconv.FormatUint(pr.ID, 10) == name || programNameOf(pr) == name {
				out = append(out, pr)
			}
		}
		return out, len(out) > 0
	}
	found, ok := find()
	if !ok {
		if err := p.Refresh(ctx); err != nil {
			return Program{}, err
		}
		found, ok = find()
	}
	switch {
	case !ok:
		return Program{}, fmt.Errorf("host: %v has no program %q: %w (it has %s)", p.addr, name, ErrNoProgram, p.programNames())
	case len(found) > 1:
		names := make([]string, len(found))
		for i, pr := range found {
			names[i] = pr.Name
		}
		return Program{}, fmt.Errorf("host: %v: program %q is ambiguous: name one of %s: %w", p.addr, name, strings.Join(names, ", "), ErrNoProgram)
	}
	return found[0], nil
}

// programNameOf is the program's name without the "#ID" its Name may
// carry.
func programNameOf(pr Program) string {
	name, _, _ := strings.Cut(pr.Name, "#")
	return name
}

func (p *Peer) programNames() string {
	ps := p.Programs()
	if len(ps) == 0 {
		return "none"
	}
	names := make([]string, len(ps))
	for i, pr := range ps {
		names[i] = pr.Name
	}
	return strings.Join(names, ", ")
}

// Install sends obj to the peer, which verifies it (it trusts nothing of
// the sender) and links its regions; the peer's handlers are then known
// by name. It is InstallWith with the zero wire.InstallOptions.
func (p *Peer) Install(ctx context.Context, obj *bytecode.Object) (Program, error) {
	return p.InstallWith(ctx, obj, wire.InstallOptions{})
}

// InstallWith is Install with opts: opts.Regions links object regions to
// the peer's registered regions of other names. It returns the program as
// the peer then describes it. The peer keeps obj, so that its
// client-eligible handlers can run at the client (AddObject).
func (p *Peer) InstallWith(ctx context.Context, obj *bytecode.Object, opts wire.InstallOptions) (Program, error) {
	if err := p.usable(); err != nil {
		return Program{}, err
	}
	inst, err := p.cl.InstallWith(ctx, p.tenant, obj, opts)
	if err != nil {
		return Program{}, p.err(fmt.Errorf("host: install on %v: %w", p.addr, err))
	}
	// The node accepted the object, so it is valid and its digest exists.
	_ = p.keepObject(obj, opts)
	if err := p.Refresh(ctx); err != nil {
		return Program{}, err
	}
	for _, pr := range p.Programs() {
		if pr.ID == inst.Program {
			return pr, nil
		}
	}
	return Program{}, fmt.Errorf("host: install on %v: program %d is gone already", p.addr, inst.Program)
}

// Uninstall removes the tenant's program with id from the peer once its
// requests in flight are done.
func (p *Peer) Uninstall(ctx context.Context, id uint64) error {
	if err := p.usable(); err != nil {
		return err
	}
	if err := p.cl.Uninstall(ctx, p.tenant, id); err != nil {
		return p.err(fmt.Errorf("host: uninstall on %v: %w", p.addr, err))
	}
	return p.Refresh(ctx)
}

// Register asks the peer to register a region for the tenant.
func (p *Peer) Register(ctx context.Context, name string, size uint64, opts wire.RegionOptions) error {
	if err := p.usable(); err != nil {
		return err
	}
	if _, err := p.cl.Register(ctx, p.tenant, name, size, opts); err != nil {
		return p.err(fmt.Errorf("host: register on %v: %w", p.addr, err))
	}
	return p.Refresh(ctx)
}

// Unregister asks the peer to remove the tenant's region called name;
// it refuses while an installed program links the region.
func (p *Peer) Unregister(ctx context.Context, name string) error {
	ref, err := p.region(ctx, name)
	if err != nil {
		return err
	}
	if err := p.usable(); err != nil {
		return err
	}
	if err := p.cl.Unregister(ctx, p.tenant, ref.ID); err != nil {
		return p.err(fmt.Errorf("host: unregister %q on %v: %w", name, p.addr, err))
	}
	return p.Refresh(ctx)
}

// Stats returns the peer's counters whose names start with prefix, sorted
// by name, page by page: the node's, its server's, and those of the
// tenant's handlers ("handler.counter.add.runs") and of the verbs
// ("verb.read.runs").
func (p *Peer) Stats(ctx context.Context, prefix string) ([]Counter, error) {
	if err := p.usable(); err != nil {
		return nil, err
	}
	cs, err := p.cl.NodeStats(ctx, p.tenant, prefix)
	return cs, p.verbError("stats", err)
}

// rangeChunk is the most one READ or WRITE of ReadRange and WriteRange
// moves: below every payload limit and reply buffer.
const rangeChunk = 1024

// checkRange reports a range that is not inside r.
func checkRange(r Region, off, n uint64) error {
	if off > r.Size || n > r.Size-off {
		return fmt.Errorf("%w: %d bytes at %d, region %s has %d", ErrRange, n, off, r.Name, r.Size)
	}
	return nil
}

// ReadRange copies n bytes at off of the peer's region to w, by READs
// of at most a KiB each. A range outside the region is an error that
// wraps ErrRange, before anything is sent.
func (p *Peer) ReadRange(ctx context.Context, w io.Writer, region string, off, n uint64) error {
	r, err := p.Region(ctx, region)
	if err != nil {
		return err
	}
	if err := checkRange(r, off, n); err != nil {
		return err
	}
	for done := uint64(0); done < n; {
		k := min(n-done, rangeChunk)
		b, err := p.Read(ctx, region, off+done, uint32(k))
		if err != nil {
			return err
		}
		if uint64(len(b)) != k {
			return fmt.Errorf("host: read on %v: %d bytes at %d, want %d", p.addr, len(b), off+done, k)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		done += k
	}
	return nil
}

// WriteRange writes data at off of the peer's region, by WRITEs of at
// most a KiB each, in order (a failure part way leaves the chunks before
// it written). A range outside the region, or a region registered
// read-only, is an error before anything is sent (ErrRange, ErrRejected).
func (p *Peer) WriteRange(ctx context.Context, region string, off uint64, data []byte) error {
	r, err := p.Region(ctx, region)
	if err != nil {
		return err
	}
	if err := checkRange(r, off, uint64(len(data))); err != nil {
		return err
	}
	if !r.Writable {
		return fmt.Errorf("host: write on %v: region %s is read-only: %w", p.addr, region, ErrRejected)
	}
	for done := 0; done < len(data); {
		k := min(len(data)-done, rangeChunk)
		if err := p.Write(ctx, region, off+uint64(done), data[done:done+k]); err != nil {
			return err
		}
		done += k
	}
	return nil
}
