package verifier

import (
	"fmt"
	"time"
	"unsafe"
)

// The default Limits: what a node spends at most on verifying one object
// (spec/verifier.md, Resource limits).
const (
	DefaultStates      = 1 << 16
	DefaultBytes       = 64 << 20
	DefaultSteps       = 4_000_000
	DefaultTime        = time.Second
	DefaultCallStrings = 8
)

// Limits bound the verifier's own work on one program, whatever the
// program: a program that would need more is rejected with
// CodeVerifierBudget, naming the limit. Every limit is checked before the
// memory or work it guards is spent. A zero field takes its default.
type Limits struct {
	// States is the most abstract states the analysis holds at once: one
	// per block per call context it reached, plus one per pending return
	// of a shared context.
	States int
	// Bytes is the most memory the analysis holds: the control-flow graph,
	// the states and their stack frames, the loop structure and the
	// widening thresholds, as the verifier accounts them.
	Bytes int64
	// Steps is the most work: instructions interpreted, summed over every
	// visit of every block, plus the blocks the CFG, loop and bound passes
	// walk.
	Steps int64
	// Time is the most wall-clock time; a negative value means no limit.
	Time time.Duration
	// CallStrings is how many call contexts of its own a function gets,
	// one per chain of call sites that reaches it; its further calls
	// share one context per call depth (spec/verifier.md, Local calls).
	// A negative value makes every call share.
	CallStrings int
}

// withDefaults fills the zero fields.
func (l Limits) withDefaults() Limits {
	if l.States == 0 {
		l.States = DefaultStates
	}
	if l.Bytes == 0 {
		l.Bytes = DefaultBytes
	}
	if l.Steps == 0 {
		l.Steps = DefaultSteps
	}
	if l.Time == 0 {
		l.Time = DefaultTime
	}
	if l.CallStrings == 0 {
		l.CallStrings = DefaultCallStrings
	}
	return l
}

// Usage is what one verification used of its Limits: the work, and the
// most states and bytes it held at once.
type Usage struct {
	Steps  int64
	States int
	Bytes  int64
	Time   time.Duration
}

// What the accounting charges. The sizes are the structures' own, plus
// the map entries that index them.
var (
	stateCost = roundAlloc(int64(unsafe.Sizeof(state{}))) + roundAlloc(int64(unsafe.Sizeof(nodeState{}))) + 64 // the state, its node, the map entry
	frameCost = roundAlloc(int64(unsafe.Sizeof(frame{})))
	chunkCost = roundAlloc(int64(unsafe.Sizeof(spillChunk{})))
	loopCost  = int64(unsafe.Sizeof(loop{})) + 256 // the loop, its lists, its entry in the heads map
	framePtr  = int64(unsafe.Sizeof((*frame)(nil)))
	slotCost  = int64(2*unsafe.Sizeof(int32(0)) + 1) // insnAt, blockOf, leader
	blockCost = int64(unsafe.Sizeof(block{})) + 3*int64(unsafe.Sizeof(int32(0))) + 1
	ctxCost   = int64(unsafe.Sizeof(context{})) + 64
	mapEntry  = int64(48) // one entry of a map[int]…, buckets included
)

// roundAlloc is n rounded up as the allocator's size classes may: by at
// most an eighth above 256 bytes.
func roundAlloc(n int64) int64 {
	if n <= 256 {
		return (n + 15) &^ 15
	}
	return n + n/8
}

// meter enforces Limits during one verification.
type meter struct {
	lim       Limits
	start     time.Time
	deadline  time.Time
	nextClock int64 // steps at which the clock is read next
	used      Usage
	states    int
	bytes     int64
}

// clockEvery is how many steps pass between two readings of the clock.
const clockEvery = 1 << 14

func newMeter(l Limits) *meter {
	m := &meter{lim: l.withDefaults(), start: time.Now(), nextClock: clockEvery}
	if m.lim.Time > 0 {
		m.deadline = m.start.Add(m.lim.Time)
	}
	return m
}

// budgetError is the rejection for limit kind ("states", "bytes", …) at
// slot.
func budgetError(slot int, format string, args ...any) *Error {
	return &Error{Insn: slot, Code: CodeVerifierBudget, Msg: "verifier budget: " + fmt.Sprintf(format, args...)}
}

// step charges n units of work, about to be done at slot.
func (m *meter) step(n int64, slot int) *Error {
	if m.used.Steps+n > m.lim.Steps {
		return budgetError(slot, "%d steps: the analysis needs more work than that (instructions interpreted over every visit of every block); simplify the control flow or the call tree", m.lim.Steps)
	}
	m.used.Steps += n
	if m.used.Steps >= m.nextClock {
		m.nextClock = m.used.Steps + clockEvery
		if err := m.clock(slot); err != nil {
			return err
		}
	}
	return nil
}

// clock checks the deadline.
func (m *meter) clock(slot int) *Error {
	if !m.deadline.IsZero() && time.Now().After(m.deadline) {
		return budgetError(slot, "%v: the analysis takes longer than that", m.lim.Time)
	}
	return nil
}

// grow reserves states and bytes before they are allocated.
func (m *meter) grow(states int, bytes int64, slot int) *Error {
	if m.states+states > m.lim.States {
		return budgetError(slot, "%d states: the analysis needs more abstract states than that (one per block per call context); simplify the control flow or the call tree", m.lim.States)
	}
	if m.bytes+bytes > m.lim.Bytes {
		return budgetError(slot, "%d bytes: the analysis needs more memory than that; split the program or simplify its control flow", m.lim.Bytes)
	}
	m.states += states
	m.bytes += bytes
	m.used.States = max(m.used.States, m.states)
	m.used.Bytes = max(m.used.Bytes, m.bytes)
	return nil
}

// shrink returns what grow reserved once it is freed.
func (m *meter) shrink(states int, bytes int64) {
	m.states -= states
	m.bytes -= bytes
}

// usage is the Usage so far.
func (m *meter) usage() Usage {
	u := m.used
	u.Time = time.Since(m.start)
	return u
}
