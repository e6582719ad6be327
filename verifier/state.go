package verifier

import (
	"fmt"
	"strings"

	"github.com/naam-project/naam/verifier/internal/scalar"
)

// stackSize is one frame's stack, as in the VM.
const stackSize = 512

// byteState is what the verifier knows of one stack byte.
type byteState uint8

const (
	bUninit byteState = iota // never written
	bMisc                    // scalar data
	bSpill                   // part of an 8-byte register spill, see frame.spills
	bTaint                   // may hold part of a pointer: never readable
)

// frame is one stack frame: its bytes, its spilled registers, and what the
// call that created it saved of the caller.
//
// States share frames: a frame a state holds may be read by others, so it
// is changed only through state.frameW, which copies it first unless the
// state owns it alone.
type frame struct {
	bytes [stackSize]byteState
	// chunks hold the values of the 8-byte slots whose bytes are bSpill,
	// eight slots a chunk; nil for a chunk without spills. Frames share
	// chunks: own has bit i when chunks[i] belongs to this frame alone.
	chunks [stackSize / 8 / chunkSlots]*spillChunk
	own    uint8
	saved  [4]value // the caller's r6–r9
	depth  int      // deepest byte ever accessed, from the frame pointer
	// callerWrote is the caller's state.wrote at the call.
	callerWrote uint8
	// pkts is set once a request or reply pointer may be among the spills
	// or saved registers.
	pkts bool
	// refs counts the held states (block states, pending returns) that
	// hold the frame, for the memory accounting.
	refs int32
}

// chunkSlots is how many 8-byte slots a spillChunk holds.
const chunkSlots = 8

// spillChunk is the spilled values of chunkSlots consecutive slots.
type spillChunk struct {
	v    [chunkSlots]value
	has  uint8 // bit i: slot i holds a spill; v[i] is zero otherwise
	refs int32 // held frames that hold the chunk, for the accounting
}

// spill returns the value spilled to slot, or the zero value.
func (f *frame) spill(slot int) value {
	c := f.chunks[slot/chunkSlots]
	if c == nil || c.has&(1<<(slot%chunkSlots)) == 0 {
		return value{}
	}
	return c.v[slot%chunkSlots]
}

// chunkW returns chunk i for changing, copying it first if it is shared.
func (f *frame) chunkW(i int) *spillChunk {
	if f.own&(1<<i) == 0 {
		nc := &spillChunk{}
		if c := f.chunks[i]; c != nil {
			nc.v, nc.has = c.v, c.has
		}
		f.chunks[i] = nc
		f.own |= 1 << i
	}
	return f.chunks[i]
}

// setSpill records v in slot; the frame must be the state's own.
func (f *frame) setSpill(slot int, v value) {
	c := f.chunkW(slot / chunkSlots)
	c.v[slot%chunkSlots] = v
	c.has |= 1 << (slot % chunkSlots)
}

// dropSpill forgets the value of slot.
func (f *frame) dropSpill(slot int) {
	i, bit := slot/chunkSlots, uint8(1)<<(slot%chunkSlots)
	if c := f.chunks[i]; c == nil || c.has&bit == 0 {
		return
	}
	c := f.chunkW(i)
	c.v[slot%chunkSlots] = value{}
	if c.has &^= bit; c.has == 0 {
		f.chunks[i] = nil
		f.own &^= 1 << i
	}
}

// eachSpill calls fn with every spilled slot and its value, in slot order.
func (f *frame) eachSpill(fn func(slot int, v value)) {
	for i, c := range f.chunks {
		if c == nil {
			continue
		}
		for k := range chunkSlots {
			if c.has&(1<<k) != 0 {
				fn(i*chunkSlots+k, c.v[k])
			}
		}
	}
}

// updateSpills applies upd to every spilled value that matches, copying
// only the chunks that hold one; the frame must be the state's own.
func (f *frame) updateSpills(match func(*value) bool, upd func(*value)) {
	for i, c := range f.chunks {
		if c == nil {
			continue
		}
		for k := range chunkSlots {
			if c.has&(1<<k) != 0 && match(&c.v[k]) {
				c = f.chunkW(i)
				upd(&c.v[k])
			}
		}
	}
}

// anySpill reports whether a spilled value matches.
func (f *frame) anySpill(match func(*value) bool) bool {
	for _, c := range f.chunks {
		if c == nil {
			continue
		}
		for k := range chunkSlots {
			if c.has&(1<<k) != 0 && match(&c.v[k]) {
				return true
			}
		}
	}
	return false
}

func (c *spillChunk) equal(d *spillChunk) bool {
	if c == d {
		return true
	}
	var ch, dh uint8
	if c != nil {
		ch = c.has
	}
	if d != nil {
		dh = d.has
	}
	if ch != dh {
		return false
	}
	for k := range chunkSlots {
		if ch&(1<<k) != 0 && !c.v[k].equal(d.v[k]) {
			return false
		}
	}
	return true
}

// state is the abstract machine state at one program point of one call
// context.
type state struct {
	regs   [11]value
	frames []*frame // frames[0] is the entry's; the last is the current one
	// own has bit i set when frames[i] belongs to this state alone.
	own uint8
	// wrote has bit i set when frame i, below the current one, may have
	// been written since the current function was entered: a shared call
	// context gives its callers back their own copies of the frames it
	// did not write (spec/verifier.md, Local calls).
	wrote uint8
}

// clone copies s; the two share every frame until one of them writes it.
func (s *state) clone() *state {
	out := &state{regs: s.regs, frames: make([]*frame, len(s.frames)), wrote: s.wrote}
	copy(out.frames, s.frames)
	s.own = 0
	return out
}

// frameW returns frame i for changing, copying it first if it is shared.
func (s *state) frameW(i int) *frame {
	if s.own&(1<<i) == 0 {
		f := *s.frames[i]
		f.refs, f.own = 0, 0
		s.frames[i] = &f
		s.own |= 1 << i
	}
	return s.frames[i]
}

// writeFrame is frameW for a store by the program: it also records a
// write below the current frame in wrote.
func (s *state) writeFrame(i int) *frame {
	if i < len(s.frames)-1 {
		s.wrote |= 1 << i
	}
	return s.frameW(i)
}

func (s *state) cur() *frame { return s.frames[len(s.frames)-1] }

// join merges o into a copy of s; with widen, numeric parts are widened.
// Frames the two share, or that the join leaves as s had them, stay
// shared.
func (s *state) join(o *state, merge int32, widen bool, th scalar.Thresholds) *state {
	out := &state{frames: make([]*frame, len(s.frames)), wrote: s.wrote | o.wrote}
	for i := range out.regs {
		if widen {
			out.regs[i] = s.regs[i].widen(o.regs[i], merge, th)
		} else {
			out.regs[i] = s.regs[i].join(o.regs[i], merge)
		}
	}
	for fi, f := range s.frames {
		g := o.frames[fi]
		if f == g || f.equal(g) {
			out.frames[fi] = f
			continue
		}
		if nf := f.join(g, merge, widen, th); nf.equal(f) {
			out.frames[fi] = f
		} else {
			out.frames[fi] = nf
			out.own |= 1 << fi
		}
	}
	return out
}

// join is the frame of s's join with o's for frames f and g.
func (f *frame) join(g *frame, merge int32, widen bool, th scalar.Thresholds) *frame {
	nf := *f
	nf.refs, nf.own = 0, 0
	sameBytes := f.bytes == g.bytes
	for slot := 0; slot < stackSize/8 && !sameBytes; slot++ {
		// A pointer spill met by anything but a spill: its bytes may
		// hold address bits on one path, so they can be read on none.
		aSpill, bSpilled := f.bytes[slot*8] == bSpill, g.bytes[slot*8] == bSpill
		aPtr := aSpill && f.spill(slot).kind.isPointer()
		bPtr := bSpilled && g.spill(slot).kind.isPointer()
		for i := slot * 8; i < slot*8+8; i++ {
			x, y := f.bytes[i], g.bytes[i]
			if (aPtr || bPtr) && !(aSpill && bSpilled) {
				if aPtr {
					x = bTaint
				}
				if bPtr {
					y = bTaint
				}
			}
			nf.bytes[i] = joinByte(x, y)
		}
	}
	for ci := range nf.chunks {
		fc, gc := f.chunks[ci], g.chunks[ci]
		if fc == gc {
			continue // the same spills, and so the same bytes: as f has them
		}
		var nc spillChunk
		for k := range chunkSlots {
			slot := ci*chunkSlots + k
			if nf.bytes[slot*8] != bSpill || fc == nil || gc == nil {
				continue
			}
			a, b := fc.v[k], gc.v[k]
			var v value
			if widen {
				v = a.widen(b, merge, th)
			} else {
				v = a.join(b, merge)
			}
			if v.kind == kConflict || v.kind == kUninit {
				// A pointer on one path, something else on the other:
				// the bytes can be read as neither.
				for i := slot * 8; i < slot*8+8; i++ {
					nf.bytes[i] = bTaint
				}
				continue
			}
			nc.v[k] = v
			nc.has |= 1 << k
		}
		switch {
		case nc.has == 0:
			nf.chunks[ci] = nil
		case fc.equal(&nc):
			nf.chunks[ci] = fc
		default:
			nf.chunks[ci] = &nc
			nf.own |= 1 << ci
		}
	}
	for i := range nf.saved {
		nf.saved[i] = f.saved[i].join(g.saved[i], merge)
	}
	nf.depth = max(f.depth, g.depth)
	nf.callerWrote = f.callerWrote | g.callerWrote
	nf.pkts = f.pkts || g.pkts
	return &nf
}

func joinByte(a, b byteState) byteState {
	switch {
	case a == b:
		return a
	case a == bUninit || b == bUninit:
		return bUninit
	case a == bTaint || b == bTaint:
		return bTaint
	}
	// bMisc with bSpill: initialised data, but the spill is gone. If the
	// spill was a pointer the join of the slot's values taints it.
	return bMisc
}

func (s *state) equal(o *state) bool {
	if len(s.frames) != len(o.frames) || s.wrote != o.wrote {
		return false
	}
	for i := range s.regs {
		if !s.regs[i].equal(o.regs[i]) {
			return false
		}
	}
	for fi, f := range s.frames {
		if !f.equal(o.frames[fi]) {
			return false
		}
	}
	return true
}

func (f *frame) equal(g *frame) bool {
	if f == g {
		return true
	}
	if f.bytes != g.bytes || f.depth != g.depth || f.callerWrote != g.callerWrote {
		return false
	}
	for i := range f.chunks {
		if !f.chunks[i].equal(g.chunks[i]) {
			return false
		}
	}
	for i := range f.saved {
		if !f.saved[i].equal(g.saved[i]) {
			return false
		}
	}
	return true
}

// regString prints the registers in use, kernel-log style.
func (s *state) regString() string {
	var parts []string
	for i, v := range s.regs {
		if v.kind != kUninit {
			parts = append(parts, fmt.Sprintf("r%d=%s", i, v))
		}
	}
	return strings.Join(parts, " ")
}

// stackString prints the initialised part of the current frame.
func (s *state) stackString() string {
	f := s.cur()
	var parts []string
	for slot := 0; slot < stackSize/8; slot++ {
		off := -stackSize + slot*8
		b := f.bytes[slot*8 : slot*8+8]
		switch {
		case b[0] == bSpill:
			parts = append(parts, fmt.Sprintf("fp%d=%s", off, f.spill(slot)))
		case allBytes(b, bUninit):
		default:
			var m strings.Builder
			for _, x := range b {
				m.WriteByte(".mst"[x])
			}
			parts = append(parts, fmt.Sprintf("fp%d=%s", off, m.String()))
		}
	}
	return strings.Join(parts, " ")
}

func allBytes(b []byteState, x byteState) bool {
	for _, y := range b {
		if y != x {
			return false
		}
	}
	return true
}

// mark sets the state of stack bytes [lo, hi) of frame f (offsets from the
// frame pointer, negative), dropping spills they overlap: the rest of an
// overlapped pointer spill becomes taint, of a scalar spill misc.
func (f *frame) mark(lo, hi int64, b byteState) {
	for slot := (lo + stackSize) / 8; slot <= (hi-1+stackSize)/8 && slot < stackSize/8; slot++ {
		if f.bytes[slot*8] == bSpill {
			rest := bMisc
			if f.spill(int(slot)).kind.isPointer() {
				rest = bTaint
			}
			for i := slot * 8; i < slot*8+8; i++ {
				f.bytes[i] = rest
			}
			f.dropSpill(int(slot))
		}
	}
	for i := lo + stackSize; i < hi+stackSize; i++ {
		f.bytes[i] = b
	}
	f.depth = max(f.depth, int(-lo))
}

// clobber records a write of scalar bytes somewhere in [lo, hi), where is
// unknown: no byte becomes initialised, and every spill the range touches
// is gone; a pointer spill's bytes may keep address bits, so they become
// taint, a scalar spill's stay plain data.
func (f *frame) clobber(lo, hi int64) {
	for slot := (lo + stackSize) / 8; slot <= (hi-1+stackSize)/8 && slot < stackSize/8; slot++ {
		if f.bytes[slot*8] != bSpill {
			continue
		}
		rest := bMisc
		if f.spill(int(slot)).kind.isPointer() {
			rest = bTaint
		}
		for i := slot * 8; i < slot*8+8; i++ {
			f.bytes[i] = rest
		}
		f.dropSpill(int(slot))
	}
	f.depth = max(f.depth, int(-lo))
}

// unknownOfSize is the value of a zero-extended load of size bytes.
func unknownOfSize(size int) scalar.Value {
	if size >= 8 {
		return scalar.Unknown()
	}
	return scalar.Range(0, 1<<(8*size)-1)
}
