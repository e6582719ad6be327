package peer

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm"
)

// A handler runs at the client (spec/client.md) when the caller holds the
// object the node installed and the node's verifier found the handler
// client-eligible: the peer matches objects to installed programs by
// digest, takes each handler's proof from the node's description, and
// reaches the node's regions with the verbs.

// knownObject is an object the caller holds, with the region bindings it
// was installed with.
type knownObject struct {
	obj     *bytecode.Object
	regions map[string]string // object region → registered region; absent: the same name
}

// clientProgram is what runs one installed program's handlers at the
// client: the runner (made once per digest) and a fetcher over the
// regions the program links.
type clientProgram struct {
	runner *clientrun.Runner
	fetch  *verbFetcher
}

// objectDigest is the program digest of obj: the first 8 bytes,
// little-endian, of the SHA-256 of its file. It is nicrt.ProgramDigest,
// which a caller does not link (a test checks that the two agree).
func objectDigest(obj *bytecode.Object) (uint64, error) {
	b, err := obj.Marshal()
	if err != nil {
		return 0, err
	}
	sum := sha256.Sum256(b)
	return binary.LittleEndian.Uint64(sum[:8]), nil
}

// AddObject tells the peer that obj may be installed on it, linked with
// opts's region bindings (as InstallWith takes them; none: by the
// regions' own names), so that its client-eligible handlers can run at
// the client (Placement AtClient, Auto). The peer recognises the program
// by its digest in the node's description; an object it does not find
// there is kept for a later Refresh. Install and InstallWith add the
// objects they install.
func (p *Peer) AddObject(obj *bytecode.Object, opts wire.InstallOptions) error {
	if err := p.keepObject(obj, opts); err != nil {
		return fmt.Errorf("host: AddObject: %w", err)
	}
	p.mu.RLock()
	last := p.described
	p.mu.RUnlock()
	return p.load(last)
}

// Keep is what runs at the client keep from one run to the next
// (clientrun.Keep): ranges of an object's regions and the fail codes that
// drop them.
type Keep = clientrun.Keep

// KeepAtClient gives the runs of obj's handlers at the client what to
// keep from one run to the next (clientrun.Keep: units of the object's
// regions, by region index, that may not overlap and are kept and given
// whole, which a later run reads again without a READ, and the fail codes
// that drop them): data whose readers tolerate an old copy and check a
// copy's consistency themselves, such as a B-link tree's inner nodes
// (btree.Tree.KeepUpperLevels: the top levels, dropped on BUSY and
// TOO_DEEP). The zero Keep keeps nothing. It drops what runs of obj kept
// so far. obj is matched by its digest, as AddObject matches it, before
// or after AddObject; all calls through the peer share what it keeps.
func (p *Peer) KeepAtClient(obj *bytecode.Object, k Keep) error {
	if obj == nil {
		return errors.New("host: KeepAtClient: nil object")
	}
	if err := clientrun.CheckKeep(obj, k); err != nil {
		return fmt.Errorf("host: KeepAtClient: %w", err)
	}
	d, err := objectDigest(obj)
	if err != nil {
		return fmt.Errorf("host: KeepAtClient: %w", err)
	}
	k = clientrun.Keep{Ranges: slices.Clone(k.Ranges), DropOn: slices.Clone(k.DropOn)}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.keep == nil {
		p.keep = map[uint64]clientrun.Keep{}
	}
	p.keep[d] = k
	if r := p.runners[d]; r != nil {
		return r.Keep(k)
	}
	return nil
}

// keepObject records obj for runs at the client; the next load links it.
func (p *Peer) keepObject(obj *bytecode.Object, opts wire.InstallOptions) error {
	if obj == nil {
		return errors.New("nil object")
	}
	if err := obj.Validate(); err != nil {
		return err
	}
	d, err := objectDigest(obj)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.objects == nil {
		p.objects = map[uint64]knownObject{}
	}
	p.objects[d] = knownObject{obj: obj, regions: opts.Regions}
	return nil
}

// clientProgramFor returns what runs prog's handlers at the client, or nil
// when the caller holds no object of that digest, none of its handlers is
// eligible, or the peer lacks a region the object links. Runners are kept
// per digest (under p.mu, held by the caller): a program installed again
// with the same object reuses its runner.
func (p *Peer) clientProgramFor(prog wire.ProgramDesc, regions map[string]wire.RegionDesc) *clientProgram {
	ko, ok := p.objects[prog.Digest]
	if !ok || prog.Digest == 0 {
		return nil
	}
	proofs := make([]clientrun.Proof, len(ko.obj.Handlers))
	eligible := false
	for i, oh := range ko.obj.Handlers {
		for _, hd := range prog.Handlers {
			if hd.Name == oh.Name && hd.Client {
				proofs[i] = clientrun.Proof{ClientEligible: true, MaxInsns: hd.MaxInsns}
				eligible = true
			}
		}
		if !proofs[i].ClientEligible {
			proofs[i].ClientReason = "the node's verifier did not find it client-eligible"
		}
	}
	if !eligible {
		return nil
	}
	f := &verbFetcher{p: p, refs: make([]wire.RegionRef, len(ko.obj.Regions))}
	for i, r := range ko.obj.Regions {
		name := r.Name
		if b, ok := ko.regions[name]; ok {
			name = b
		}
		rd, ok := regions[name]
		if !ok || rd.Size < r.Size {
			return nil
		}
		f.refs[i] = wire.RegionRef{ID: rd.Region, Key: rd.Key}
	}
	runner := p.runners[prog.Digest]
	if runner == nil {
		var err error
		// A fetch past the declared ranges brings one READ's worth.
		runner, err = clientrun.New(ko.obj, proofs, clientrun.Config{FetchSize: rangeChunk, ReadPiece: rangeChunk, ReplySize: wire.MaxPayload, Keep: p.keep[prog.Digest]})
		if err != nil {
			return nil
		}
		if p.runners == nil {
			p.runners = map[uint64]*clientrun.Runner{}
		}
		p.runners[prog.Digest] = runner
	}
	return &clientProgram{runner: runner, fetch: f}
}

// verbFetcher reaches one program's regions on the peer with the verbs:
// clientrun.Fetcher over READ, FETCH-ADD and CAS. A caller.Client
// retransmits each verb under its request id, so a lost packet neither
// loses nor repeats an atomic.
type verbFetcher struct {
	p    *Peer
	refs []wire.RegionRef // by the object's region index
}

// maxParallelReads bounds the READs of one round trip in flight at once.
const maxParallelReads = 16

// readChunk is one READ of a Fetcher.Read.
type readChunk struct {
	ref wire.RegionRef
	off uint64
	dst []byte
}

// Read implements clientrun.Fetcher: every range in READs of at most a
// KiB (rangeChunk), all sent at once, so the batch costs one round trip.
func (f *verbFetcher) Read(ctx context.Context, reads []clientrun.Read) error {
	var chunks []readChunk
	for _, r := range reads {
		if int(r.Region) >= len(f.refs) {
			return fmt.Errorf("host: read: region %d of %d", r.Region, len(f.refs))
		}
		for done := 0; done < len(r.Dst); done += rangeChunk {
			end := min(done+rangeChunk, len(r.Dst))
			chunks = append(chunks, readChunk{ref: f.refs[r.Region], off: uint64(r.Offset) + uint64(done), dst: r.Dst[done:end]})
		}
	}
	if len(chunks) == 1 {
		return f.read(ctx, chunks[0])
	}
	errs := make([]error, len(chunks))
	sem := make(chan struct{}, maxParallelReads)
	var wg sync.WaitGroup
	for i := range chunks {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = f.read(ctx, chunks[i])
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

func (f *verbFetcher) read(ctx context.Context, c readChunk) error {
	b, err := f.p.cl.Read(ctx, f.p.tenant, c.ref, c.off, uint32(len(c.dst)))
	if err != nil {
		return f.p.verbError("read", err)
	}
	if len(b) != len(c.dst) {
		return fmt.Errorf("host: read on %v: %d bytes at %d, want %d", f.p.addr, len(b), c.off, len(c.dst))
	}
	copy(c.dst, b)
	return nil
}

// FetchAdd implements clientrun.Fetcher with the FETCH-ADD verb.
func (f *verbFetcher) FetchAdd(ctx context.Context, region, offset uint32, delta uint64) (uint64, error) {
	if int(region) >= len(f.refs) {
		return 0, fmt.Errorf("host: fetch-add: region %d of %d", region, len(f.refs))
	}
	old, err := f.p.cl.FetchAdd(ctx, f.p.tenant, f.refs[region], uint64(offset), delta)
	return old, f.p.verbError("fetch-add", err)
}

// CompareAndSwap implements clientrun.Fetcher with the CAS verb.
func (f *verbFetcher) CompareAndSwap(ctx context.Context, region, offset uint32, old, new uint64) (uint64, error) {
	if int(region) >= len(f.refs) {
		return 0, fmt.Errorf("host: compare-and-swap: region %d of %d", region, len(f.refs))
	}
	prev, _, err := f.p.cl.CompareAndSwap(ctx, f.p.tenant, f.refs[region], uint64(offset), old, new)
	return prev, f.p.verbError("compare-and-swap", err)
}

// runAtClient runs h with payload at the client and returns its reply, as
// a node's would come back: a handler's fail is a *HandlerError with its
// source position, a fault an error matching ErrFault, and a verb that
// failed (a timeout, the context) ends the run with that verb's error.
func (p *Peer) runAtClient(ctx context.Context, h *Handler, payload []byte) ([]byte, clientrun.Stats, error) {
	cp := h.client
	res, err := cp.runner.Run(ctx, cp.fetch, clientrun.Call{
		Handler: h.Name, Request: payload, SrcNode: uint64(p.src), Tenant: uint64(p.tenant),
		RequestID: p.runIDs.Add(1),
	})
	obj := cp.runner.Object()
	if err != nil {
		var f *vm.Fault
		switch {
		case errors.As(err, &f) && f.Kind == vm.FaultRemote:
			return nil, res.Stats, p.err(fmt.Errorf("host: call %s at the client: %w", h, err))
		case errors.As(err, &f):
			msg := err.Error()
			if pos, ok := obj.Position(f.PC); ok && pos.Line > 0 {
				msg = pos.String() + ": " + msg
			}
			return nil, res.Stats, fmt.Errorf("host: call %s at the client: %w", h, &caller.RemoteError{Status: wire.RuntimeFault, Msg: msg})
		}
		return nil, res.Stats, fmt.Errorf("host: call %s at the client: %w", h, err)
	}
	switch res.Outcome {
	case bytecode.OutcomeReply:
		return res.Reply, res.Stats, nil
	case bytecode.OutcomeError:
		if res.Code > 0 {
			he := &caller.HandlerError{Code: uint32(res.Code)}
			if pos, ok := obj.Position(res.Exit); ok && pos.Line > 0 {
				he.Pos = pos.String()
			}
			return nil, res.Stats, fmt.Errorf("host: call %s: %w", h, he)
		}
	}
	// A code that cannot travel as a handler error is a fault at the node
	// too; a client-eligible handler never forwards.
	return nil, res.Stats, fmt.Errorf("host: call %s at the client: %w", h, &caller.RemoteError{Status: wire.RuntimeFault})
}
