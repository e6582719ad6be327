package wire

import "fmt"

// WindowSize is how many request ids, counted back from the highest one
// seen, a Window remembers.
const WindowSize = 1024

// Verdict is what a Window says about a request id.
type Verdict uint8

const (
	// IDNew: the id was never seen; the request may run.
	IDNew Verdict = iota
	// IDDuplicate: the id was seen; the request is a retransmission or a
	// replay, and must not run again (answer it from the reply cache).
	IDDuplicate
	// IDTooOld: the id is WindowSize or more below the highest id seen, so
	// the window cannot tell; the request must not run.
	IDTooOld
)

func (v Verdict) String() string {
	switch v {
	case IDNew:
		return "new"
	case IDDuplicate:
		return "duplicate"
	case IDTooOld:
		return "too-old"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
}

// Window is an anti-replay window over the request ids of one (peer,
// tenant), as IPsec keeps over sequence numbers (RFC 4303 §3.4.3, with the
// bitmap of RFC 6479): a bit for each of the WindowSize ids up to the
// highest seen. Ids may arrive in any order within the window. Feed it only
// packets whose MAC Decode checked, or a forger could slide it forward.
// The zero Window has seen nothing. It is not safe for concurrent use.
type Window struct {
	top     uint64 // highest id seen
	started bool
	bits    [WindowSize / 64]uint64 // bit id%WindowSize: id seen, for ids in (top-WindowSize, top]
}

// Check says whether id is new, a duplicate or too old, without recording
// it.
func (w *Window) Check(id uint64) Verdict {
	switch {
	case !w.started || id > w.top:
		return IDNew
	case w.top-id >= WindowSize:
		return IDTooOld
	case w.bits[id%WindowSize/64]&(1<<(id%64)) != 0:
		return IDDuplicate
	}
	return IDNew
}

// Observe is Check, and records id when it is new.
func (w *Window) Observe(id uint64) Verdict {
	v := w.Check(id)
	if v != IDNew {
		return v
	}
	switch {
	case !w.started:
		w.started, w.top = true, id
	case id > w.top:
		w.advance(id)
	}
	w.bits[id%WindowSize/64] |= 1 << (id % 64)
	return IDNew
}

// advance moves the top of the window to id, forgetting the ids that fall
// out of it: the bits of top+1 … id are cleared, a word at a time.
func (w *Window) advance(id uint64) {
	if id-w.top >= WindowSize {
		clear(w.bits[:])
		w.top = id
		return
	}
	// Counting down rather than comparing x with id: x wraps past 2^64-1.
	for x, left := w.top+1, id-w.top; left > 0; {
		bit := x % 64
		n := min(64-bit, left) // bits to clear in this word, 1…64
		w.bits[x%WindowSize/64] &^= (^uint64(0) >> (64 - n)) << bit
		x += n
		left -= n
	}
	w.top = id
}

// Top returns the highest id seen, and false when the window has seen
// none.
func (w *Window) Top() (uint64, bool) { return w.top, w.started }
