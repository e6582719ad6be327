package verifier

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/cilium/ebpf/asm"

	"github.com/naam-project/naam/bytecode"
)

// DefaultBudget is the largest worst-case instruction count accepted when
// Config.Budget is 0.
const DefaultBudget = 100_000

// Region is one region the program may address with lddw region[i].
type Region struct {
	Name     string
	Size     uint64
	Writable bool
}

// Entry is a point where execution starts: a handler, or a handler's
// access function (Access), which is held to stricter rules: it may not
// touch a region, nor call a helper that sends or exists only on the host.
type Entry struct {
	Name   string
	Slot   int
	Access bool
}

// Config says what the program may assume and what it may do.
type Config struct {
	// Raw selects raw mode (conformance, naamc vm): r1 points to MemSize
	// readable and writable bytes, r2 = MemSize, no helpers. Otherwise the
	// handler ABI applies (spec/abi.md): r1 is the read-only context.
	Raw     bool
	MemSize uint64
	// Entries are the handlers; nil means one entry at slot 0.
	Entries []Entry
	Regions []Region
	// Budget is the largest accepted worst case; 0 means DefaultBudget.
	Budget uint64
	// Limits bound the verifier's own time and memory; the zero value is
	// the defaults, which every install over the wire runs under.
	Limits Limits
	// Position names the source of a slot ("file:line") for messages.
	Position func(slot int) string
	// Log, if set, receives the whole walk: every block visit with its
	// state, as the kernel's verifier log at level 2. Writing it is slow,
	// so with a Log the time limit applies only when Limits.Time is set.
	Log io.Writer
}

// Report is what the verifier proved about an accepted program.
type Report struct {
	// MaxInsns is the largest worst-case instruction count over the entries.
	MaxInsns uint64
	Entries  []EntryReport
	// StackDepth is the most stack bytes any run uses, over all frames.
	StackDepth int
	// RegionsRead and RegionsWritten list region indices.
	RegionsRead, RegionsWritten []int
	// Helpers lists the helper numbers called; HostOnly is set when one of
	// them exists only on the host.
	Helpers  []uint32
	HostOnly bool
	// Insns is the program's length in instructions, States how many block
	// visits the analysis took.
	Insns, States int
	// Usage is what the verification used of Config.Limits.
	Usage Usage
}

// EntryReport is what the verifier proved of one entry: its bound, and
// the regions and helpers its runs may use (a subset of the Report's: the
// ones on paths the analysis found feasible from this entry).
type EntryReport struct {
	Name     string
	Slot     int
	MaxInsns uint64
	// RegionsRead and RegionsWritten list region indices.
	RegionsRead, RegionsWritten []int
	// Helpers lists the helper numbers the entry may call; HostOnly is
	// set when one of them exists only on the host.
	Helpers  []uint32
	HostOnly bool
	// Access says the entry is an access function (Entry.Access).
	Access bool
	// ClientEligible says a caller can run the entry in a VM of its own
	// and reproduce its effects with one-sided verbs: it reads regions,
	// writes them only with 8-byte atomic adds and compare-and-swaps,
	// and calls no helper that sends or exists only on the host. When it
	// is false, ClientReason names the first instruction that prevents it
	// ("insn 57 (kv.naam:73): store to region 0 (kv)"). Access functions
	// are always eligible.
	ClientEligible bool
	ClientReason   string
}

// String is a one-line summary with max-insns=K, as naamc verify prints it.
func (r *Report) String() string {
	return fmt.Sprintf("max-insns=%d stack=%d insns=%d regions-read=%v regions-written=%v helpers=%v",
		r.MaxInsns, r.StackDepth, r.Insns, r.RegionsRead, r.RegionsWritten, r.Helpers)
}

// Verify checks insns under cfg. A rejection is an *Error.
func Verify(insns asm.Instructions, cfg Config) (*Report, error) {
	rep, _, err := verify(insns, cfg)
	return rep, err
}

// verify is Verify, and the meter, for tests of the limits.
func verify(insns asm.Instructions, cfg Config) (*Report, *meter, error) {
	lim := cfg.Limits
	if cfg.Log != nil && lim.Time == 0 {
		lim.Time = -1
	}
	m := newMeter(lim)
	if err := bytecode.Validate(insns); err != nil {
		if ie, ok := err.(*bytecode.InsnError); ok {
			e := &Error{Insn: ie.Insn, Code: CodeInvalidInsn, Msg: ie.Msg}
			if e.Msg == "" {
				e.Msg = ie.Error()
			}
			if cfg.Position != nil {
				e.Pos = cfg.Position(ie.Insn)
			}
			return nil, m, e
		}
		return nil, m, &Error{Code: CodeInvalidInsn, Msg: err.Error()}
	}
	if cfg.Budget == 0 {
		cfg.Budget = DefaultBudget
	}
	rep, verr := run(insns, cfg, m)
	if verr != nil {
		return nil, m, withPos(verr, cfg)
	}
	rep.Usage = m.usage()
	return rep, m, nil
}

// run is the pipeline after validation.
func run(insns asm.Instructions, cfg Config, m *meter) (*Report, *Error) {
	// The slot tables, before they exist.
	slots := int64(0)
	for i := range insns {
		slots += int64(insns[i].Width())
	}
	if err := m.grow(0, slots*slotCost+int64(len(insns))*8, 0); err != nil {
		return nil, err
	}
	p := newProgram(insns)
	entries := cfg.Entries
	if entries == nil {
		entries = []Entry{{Name: "main", Slot: 0}}
	}
	slotsOf := make([]int, len(entries))
	for i, e := range entries {
		if e.Slot < 0 || e.Slot >= p.slots || p.insnAt[e.Slot] < 0 {
			return nil, &Error{Insn: e.Slot, Code: CodeBadEntry, Msg: fmt.Sprintf("entry %q at slot %d is not an instruction", e.Name, e.Slot)}
		}
		slotsOf[i] = e.Slot
	}
	g, err := buildCFG(p, slotsOf, m)
	if err != nil {
		return nil, err
	}
	funcs, err := g.structure(slotsOf, m)
	if err != nil {
		return nil, err
	}
	c, err := newChecker(p, g, funcs, cfg, m)
	if err != nil {
		return nil, err
	}
	rep := &Report{Insns: len(insns)}
	read, written, helpers := map[int16]bool{}, map[int16]bool{}, map[uint32]bool{}
	for _, e := range entries {
		c.regionsRead, c.regionsWritten, c.helpersUsed = map[int16]bool{}, map[int16]bool{}, map[uint32]bool{}
		c.entry, c.clientSlot, c.clientWhy = e, -1, ""
		bound, err := c.analyzeEntry(e)
		if err != nil {
			return nil, err
		}
		if bound > cfg.Budget {
			return nil, &Error{Insn: c.crossing(cfg.Budget), Code: CodeBudget,
				Msg: fmt.Sprintf("entry %q may execute up to %d instructions, over the budget of %d; its costliest path passes the budget here", e.Name, bound, cfg.Budget)}
		}
		er := EntryReport{Name: e.Name, Slot: e.Slot, MaxInsns: bound,
			RegionsRead: keys(c.regionsRead), RegionsWritten: keys(c.regionsWritten),
			Access: e.Access, ClientEligible: c.clientSlot < 0, ClientReason: c.clientWhy}
		er.Helpers, er.HostOnly = helperList(c.helpersUsed)
		rep.Entries = append(rep.Entries, er)
		rep.MaxInsns = max(rep.MaxInsns, bound)
		maps.Copy(read, c.regionsRead)
		maps.Copy(written, c.regionsWritten)
		maps.Copy(helpers, c.helpersUsed)
	}
	rep.StackDepth = c.stackDepth
	rep.RegionsRead = keys(read)
	rep.RegionsWritten = keys(written)
	rep.Helpers, rep.HostOnly = helperList(helpers)
	rep.States = c.visits
	return rep, nil
}

// helperList is the sorted helper numbers of set, and whether one of them
// exists only on the host.
func helperList(set map[uint32]bool) (ids []uint32, hostOnly bool) {
	for id := range set {
		ids = append(ids, id)
		if h, ok := bytecode.Helper(id); ok && h.HostOnly {
			hostOnly = true
		}
	}
	slices.Sort(ids)
	return ids, hostOnly
}

func withPos(e *Error, cfg Config) *Error {
	if cfg.Position != nil && e.Pos == "" {
		e.Pos = cfg.Position(e.Insn)
	}
	return e
}

func keys[K ~int16 | ~int](m map[K]bool) []int {
	out := []int{}
	for k := range m {
		out = append(out, int(k))
	}
	sort.Ints(out)
	return out
}
