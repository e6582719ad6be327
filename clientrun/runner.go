package clientrun

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// Defaults of Config.
const (
	DefaultFetchSize = 2048
	DefaultMaxBytes  = 16 << 20
	DefaultReplySize = 4096
)

// ErrFetchLimit is the cause of a run that would fetch more than
// Config.MaxBytes.
var ErrFetchLimit = errors.New("clientrun: fetch limit")

// Config configures a Runner. The zero value is the defaults.
type Config struct {
	// FetchSize is how many bytes a read of bytes not held yet fetches,
	// from the first one it needs (clipped to the region; at least the
	// read's own): one round trip that also brings what the handler is
	// likely to read next, a struct's later fields. The default covers the
	// examples' largest struct read field by field, a B+tree node of
	// 1,064 bytes; bytes cost far less than round trips. 0 means
	// DefaultFetchSize.
	FetchSize uint32
	// MaxBytes bounds the bytes one run fetches, declared and extra: a
	// run that needs more fails with ErrFetchLimit, and declared ranges
	// past it are not fetched ahead. 0 means DefaultMaxBytes.
	MaxBytes int
	// ReplySize is the reply buffer of a run, as a node's reply buffer;
	// 0 means DefaultReplySize.
	ReplySize int
	// Keep names units of the object's regions that the runner keeps
	// from one run to the next and gives later runs without a READ
	// (Runner.Keep changes them; see Keep for when a unit is kept and
	// given): data whose readers tolerate an old copy and check a copy's
	// consistency themselves, such as a B-link tree's inner nodes (a split
	// moves keys right and never frees a node, so an old node costs moves
	// right, and a node's two versions show a copy a writer tore while one
	// READ brought it). Bytes outside them are fetched by every run. Only
	// a run that replies adds what it fetched; a run that used kept units
	// and faulted or failed with one of Keep.DropOn's codes drops the
	// units it used, so that the next run fetches them afresh. A handler that
	// replies from a torn copy without failing is not protected, so name
	// only units whose handlers check. The bytes kept are at most the
	// units' total.
	Keep Keep
	// ReadPiece is the most bytes the Fetcher reads at one go, from the
	// start of a Read range, in order (host/peer's: one READ verb of 1
	// KiB; the READs of a longer range go out at once and may be served
	// in either order); 0 means a whole range. A unit (Keep) is kept only
	// from within one piece.
	ReadPiece uint32
	// Env serves the now and random helpers of the handlers (it must be
	// safe for concurrent use if Run is); nil means a vm.LocalEnv per
	// machine. Client-eligible handlers never trace, send or forward.
	Env vm.Env
}

func (c Config) withDefaults() Config {
	if c.FetchSize == 0 {
		c.FetchSize = DefaultFetchSize
	}
	if c.MaxBytes <= 0 {
		c.MaxBytes = DefaultMaxBytes
	}
	if c.ReplySize <= 0 {
		c.ReplySize = DefaultReplySize
	}
	return c
}

// Call is one request to run at the client: the handler (its name in the
// object) and the context a node would give it.
type Call struct {
	Handler   string
	Request   []byte
	SrcNode   uint64
	Tenant    uint64
	RequestID uint64
	// ReplySize is the reply buffer's size for this run; 0 means
	// Config.ReplySize.
	ReplySize int
}

// Stats is what a run cost in round trips and bytes.
type Stats struct {
	// RoundTrips counts every round trip to the node: the declared batch,
	// the extra reads and the atomics.
	RoundTrips int
	// Declared is how many ranges the declaration came to, after merging
	// those that overlap or touch, when the first round trip fetched any
	// of them (0: no round trip for them, none declared or all kept).
	Declared int
	// ExtraReads counts the round trips that fetched bytes the handler
	// read beyond its declaration.
	ExtraReads int
	// Atomics counts the FETCH-ADDs and CASes.
	Atomics int
	// BytesRead is the bytes fetched by reads.
	BytesRead uint64
	// KeptBytes is the bytes the run took from what the runner kept
	// (Config.Keep) instead of fetching them.
	KeptBytes uint64
	// AccessFailed says the access function failed (a fail in a fn it
	// calls, a short request): the run fetched nothing ahead.
	AccessFailed bool
}

// Result is how a run ended: the handler's result as vm.Machine.Invoke
// gives it (Reply is the run's own copy) and its Stats.
type Result struct {
	vm.Result
	Stats Stats
}

// NotEligibleError says a handler cannot run at the client, and why
// (Proof.ClientReason).
type NotEligibleError struct {
	Handler string
	Reason  string
}

func (e *NotEligibleError) Error() string {
	if e.Reason == "" {
		return fmt.Sprintf("clientrun: handler %s is not client-eligible", e.Handler)
	}
	return fmt.Sprintf("clientrun: handler %s is not client-eligible: %s", e.Handler, e.Reason)
}

// Proof is what the verifier of the node that serves an object proved of
// one of its handlers, as far as a run at the client needs it
// (verifier.EntryReport): whether the handler is client-eligible, why not,
// and its instruction bound. A Runner takes it on trust, from the node's
// description of the installed program or from a verification of its own;
// its machine is checked either way, so an object or a proof that lies can
// make a run fault, never reach memory outside it or change a region but
// by the Fetcher's atomics.
type Proof struct {
	ClientEligible bool
	ClientReason   string
	// MaxInsns bounds the handler's run and its access function's: the
	// budget of each.
	MaxInsns uint64
}

// Runner runs the client-eligible handlers of one object. It is safe for
// concurrent use (each run takes a machine of its own).
type Runner struct {
	obj      *bytecode.Object
	prog     *vm.Program
	proofs   []Proof
	cfg      Config
	machines sync.Pool
	kept     keptStore
}

// New prepares obj's handlers for runs at the client; proofs[i] is what
// was proved of obj.Handlers[i]. It checks the object's form
// (bytecode.Object.Validate) and loads its code; it does not verify it
// (package clientrun links no verifier): eligibility is the proofs'.
func New(obj *bytecode.Object, proofs []Proof, cfg Config) (*Runner, error) {
	if obj == nil {
		return nil, errors.New("clientrun: nil object")
	}
	if err := obj.Validate(); err != nil {
		return nil, fmt.Errorf("clientrun: %w", err)
	}
	if len(proofs) != len(obj.Handlers) {
		return nil, fmt.Errorf("clientrun: %d proofs for an object with %d handlers", len(proofs), len(obj.Handlers))
	}
	budget := uint64(0)
	for i, p := range proofs {
		if p.ClientEligible && p.MaxInsns == 0 {
			return nil, fmt.Errorf("clientrun: the proof of handler %s says it is client-eligible and gives no instruction bound", obj.Handlers[i].Name)
		}
		budget = max(budget, p.MaxInsns)
	}
	insns, err := obj.Insns()
	if err != nil {
		return nil, fmt.Errorf("clientrun: %w", err)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		return nil, fmt.Errorf("clientrun: %w", err)
	}
	r := &Runner{obj: obj, prog: prog, proofs: slices.Clone(proofs), cfg: cfg.withDefaults()}
	r.cfg.Keep = Keep{} // the store holds it
	if err := r.Keep(cfg.Keep); err != nil {
		return nil, err
	}
	r.machines.New = func() any {
		env := r.cfg.Env
		if env == nil {
			env = vm.NewLocalEnv(1, nil)
		}
		return &machine{
			m:      vm.NewMachine(vm.Options{Budget: max(budget, 1), Helpers: vm.ABIHelpers(refusing{env})}),
			reply:  alignedBuffer(r.cfg.ReplySize),
			ranges: alignedBuffer(bytecode.MaxAccessRanges * bytecode.AccessRangeSize),
		}
	}
	return r, nil
}

// machine is a pooled machine with its reply buffers.
type machine struct {
	m             *vm.Machine
	reply, ranges []byte
}

// refusing is an env whose sends and forwards are refused: a
// client-eligible handler never calls them, and nothing leaves the client
// if one did.
type refusing struct{ vm.Env }

var errClientSend = errors.New("clientrun: a handler run at the client cannot send or forward")

func (refusing) Send(uint64, uint32, []byte) error { return errClientSend }
func (refusing) Forward(uint64, uint32) error      { return errClientSend }
func (refusing) Trace([]byte)                      {}

// Keep replaces what the runner keeps from one run to the next
// (Config.Keep) and drops the bytes it kept; the zero Keep keeps nothing.
// Runs under way finish with the bytes they hold and add none.
func (r *Runner) Keep(k Keep) error {
	keep, err := checkKeep(r.obj, k.Ranges)
	if err != nil {
		return err
	}
	r.kept.reset(keep, k.DropOn)
	return nil
}

// Forget drops the bytes the runner kept (Config.Keep), so that the next
// runs fetch them afresh; the ranges stay.
func (r *Runner) Forget() { r.kept.forget() }

// Kept is the bytes the runner holds of its Keep ranges.
func (r *Runner) Kept() uint64 { return r.kept.held() }

// Object returns the object the runner runs.
func (r *Runner) Object() *bytecode.Object { return r.obj }

// Program returns the object's code as the runner loaded it.
func (r *Runner) Program() *vm.Program { return r.prog }

// Proof returns what the runner was told of handler i of the object.
func (r *Runner) Proof(i int) Proof { return r.proofs[i] }

// Eligible returns nil if handler can run at the client, or why not: a
// *NotEligibleError, or an error for a handler the object lacks.
func (r *Runner) Eligible(handler string) error {
	_, err := r.handler(handler)
	return err
}

func (r *Runner) handler(name string) (int, error) {
	i := slices.IndexFunc(r.obj.Handlers, func(h bytecode.Handler) bool { return h.Name == name })
	if i < 0 {
		return 0, fmt.Errorf("clientrun: the object has no handler %q", name)
	}
	if p := r.proofs[i]; !p.ClientEligible {
		return 0, &NotEligibleError{Handler: name, Reason: p.ClientReason}
	}
	return i, nil
}

// Run runs call at the client, reaching the node's regions through f.
// The error is a *NotEligibleError or an unknown handler before anything
// is fetched; an invalid range from the access function; or a *vm.Fault
// of the run, which is an ErrRemote fault wrapping f's error when a
// fetch or an atomic failed (the run stops there; atomics done before it
// stay done, as on a node that faults).
func (r *Runner) Run(ctx context.Context, f Fetcher, call Call) (Result, error) {
	hi, err := r.handler(call.Handler)
	if err != nil {
		return Result{}, err
	}
	h := &r.obj.Handlers[hi]
	pm := r.machines.Get().(*machine)
	defer r.machines.Put(pm)

	run := &fetchRun{ctx: ctx, f: f, cfg: &r.cfg, kept: &r.kept}
	run.keptGen, run.keptEpoch, run.keepUnits = r.kept.begin()
	mems := make([]vm.RegionMem, len(r.obj.Regions))
	for i, or := range r.obj.Regions {
		c := &regionCache{run: run, index: uint32(i), size: uint32(or.Size)}
		run.regions = append(run.regions, c)
		mems[i] = vm.RegionMem{Remote: c, Writable: or.Writable}
	}
	inv := vm.Invocation{Handler: h.ID, SrcNode: call.SrcNode, Tenant: call.Tenant, RequestID: call.RequestID, Request: call.Request}
	if h.HasAccess() {
		inv.Entry, inv.Reply = h.Access, pm.ranges[:h.MaxRanges*bytecode.AccessRangeSize]
		res, err := pm.m.Invoke(r.prog, &inv)
		if err != nil {
			return Result{}, fmt.Errorf("clientrun: the access function of %s: %w", h.Name, err)
		}
		if res.Outcome != bytecode.OutcomeReply {
			run.stats.AccessFailed = true
		} else if err := run.fetchDeclared(r.obj, res.Reply); err != nil {
			return Result{Stats: run.stats}, fmt.Errorf("clientrun: the declared reads of %s: %w", h.Name, err)
		}
	}
	inv.Entry, inv.Reply, inv.Regions = h.Entry, pm.reply, mems
	if call.ReplySize > 0 {
		inv.Reply = alignedBuffer(call.ReplySize)
	}
	res, err := pm.m.Invoke(r.prog, &inv)
	switch {
	case err == nil && res.Outcome == bytecode.OutcomeReply:
		r.kept.commit(run.keptGen, run.collected)
	case run.stats.KeptBytes > 0:
		r.kept.failed(run.keptEpoch, run.served, res.Code, err != nil || res.Outcome != bytecode.OutcomeError)
	}
	res.Reply = append([]byte(nil), res.Reply...)
	if len(res.Reply) == 0 {
		res.Reply = nil
	}
	return Result{Result: res, Stats: run.stats}, err
}

// fetchDeclared fetches the ranges an access function replied, merged,
// in one round trip; ranges past Config.MaxBytes are left to be fetched
// when read.
func (r *fetchRun) fetchDeclared(obj *bytecode.Object, reply []byte) error {
	ranges, err := bytecode.DecodeAccessRanges(reply)
	if err != nil {
		return err
	}
	if err := obj.CheckAccessRanges(ranges); err != nil {
		return err
	}
	ranges = slices.DeleteFunc(ranges, func(a bytecode.AccessRange) bool { return a.Length == 0 })
	slices.SortFunc(ranges, func(a, b bytecode.AccessRange) int {
		if a.Region != b.Region {
			return int(a.Region) - int(b.Region)
		}
		return int(int64(a.Offset) - int64(b.Offset))
	})
	var merged []bytecode.AccessRange
	var total uint64
	for _, a := range ranges {
		if n := len(merged); n > 0 && merged[n-1].Region == a.Region && merged[n-1].End() >= uint64(a.Offset) {
			last := &merged[n-1]
			grow := max(last.End(), a.End()) - last.End()
			if total+grow > uint64(r.cfg.MaxBytes) {
				break
			}
			last.Length += uint32(grow)
			total += grow
			continue
		}
		if total+uint64(a.Length) > uint64(r.cfg.MaxBytes) {
			break
		}
		merged = append(merged, a)
		total += uint64(a.Length)
	}
	trips := r.stats.RoundTrips
	err = r.fetch(merged, false)
	if r.stats.RoundTrips > trips {
		r.stats.Declared = len(merged)
	}
	return err
}

// alignedBuffer is n zero bytes on an 8-byte boundary (a writable VM
// segment needs one).
func alignedBuffer(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n]
}
