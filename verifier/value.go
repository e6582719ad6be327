package verifier

import (
	"fmt"

	"github.com/naam-project/naam/verifier/internal/scalar"
)

// kind is the type of a register or spilled stack slot.
type kind uint8

const (
	kUninit   kind = iota // never written
	kConflict             // different types on paths that merged: unusable
	kScalar
	kCtx      // the read-only context (handler mode)
	kStack    // a stack frame
	kMem      // raw mode's memory
	kRegion   // a region
	kReq      // the request payload (ctx.data)
	kReqEnd   // ctx.data_end
	kReply    // the reply buffer (ctx.reply)
	kReplyEnd // ctx.reply_end
)

var kindNames = [...]string{
	kUninit: "uninit", kConflict: "conflict", kScalar: "scalar", kCtx: "ctx", kStack: "fp",
	kMem: "mem", kRegion: "region", kReq: "pkt", kReqEnd: "pkt_end", kReply: "reply", kReplyEnd: "reply_end",
}

func (k kind) String() string { return kindNames[k] }

func (k kind) isPointer() bool { return k >= kCtx }

// packetLike kinds are bounded by a comparison with their end pointer.
func (k kind) packetLike() bool { return k == kReq || k == kReply }

// value is the abstract value of a register or spill.
//
// For scalars, off is the value. For kCtx, kStack, kMem and kRegion, off is
// the offset from the object's start (for kStack: from the frame pointer, so
// valid offsets are negative). For kReq and kReply, as in the Linux
// verifier, the offset is fixed (a constant part) plus off (a variable part
// whose identity is id; 0 when there is none), and rng is the number of
// bytes past base+off that a comparison with the end pointer proved safe.
type value struct {
	off    scalar.Value
	fixed  int32 // within ±maxPacketOff
	rng    int32
	id     int32
	region int16
	// solo marks a packet pointer whose identity may be shared with values
	// of a different variable offset (folded at a merge, or left over from
	// an earlier run of the instruction that made the identity): a
	// comparison proves bytes for it alone, never for other holders of id.
	solo  bool
	frame int8
	kind  kind
}

func scalarValue(v scalar.Value) value { return value{kind: kScalar, off: v} }

func constValue(c uint64) value { return scalarValue(scalar.Const(c)) }

func unknownScalar() value { return scalarValue(scalar.Unknown()) }

func pointer(k kind, off int64) value { return value{kind: k, off: scalar.Const(uint64(off))} }

// sameObject reports whether two pointers point into the same object.
func (v value) sameObject(w value) bool {
	return v.kind == w.kind && v.frame == w.frame && v.region == w.region
}

func (v value) String() string {
	switch v.kind {
	case kUninit, kConflict, kReqEnd, kReplyEnd, kCtx:
		if v.kind == kCtx && !isZero(v.off) {
			return fmt.Sprintf("ctx(off=%s)", v.off)
		}
		return v.kind.String()
	case kScalar:
		return v.off.String()
	case kStack:
		return fmt.Sprintf("fp%d(off=%s)", v.frame, signed(v.off))
	case kRegion:
		return fmt.Sprintf("region%d(off=%s)", v.region, v.off)
	case kReq, kReply:
		s := fmt.Sprintf("%s(off=%d", v.kind, v.fixed)
		if v.id != 0 {
			s += fmt.Sprintf(",id=%d,var=%s", v.id, v.off)
			if v.solo {
				s += ",solo"
			}
		}
		return s + fmt.Sprintf(",r=%d)", v.rng)
	}
	return fmt.Sprintf("%s(off=%s)", v.kind, v.off)
}

func isZero(s scalar.Value) bool {
	c, ok := s.Const()
	return ok && c == 0
}

// signed prints a constant offset as a signed number.
func signed(s scalar.Value) string {
	if c, ok := s.Const(); ok {
		return fmt.Sprint(int64(c))
	}
	return s.String()
}

// join is the least upper bound of two values at a control-flow merge;
// merge identifies the merge point, for variable parts born there.
func (v value) join(w value, merge int32) value {
	switch {
	case v == w: // values are kept reduced, so this is their join
		return v
	case v.kind == kUninit || w.kind == kUninit:
		return value{kind: kUninit}
	case v.kind == kConflict || w.kind == kConflict, !v.sameObject(w):
		return value{kind: kConflict}
	case v.kind == kReqEnd || v.kind == kReplyEnd:
		return v
	case v.kind.packetLike():
		if v.id == w.id && v.fixed == w.fixed {
			out := v
			out.off = v.off.Join(w.off)
			out.rng = min(v.rng, w.rng)
			out.solo = v.solo || w.solo
			return out
		}
		// Different constant parts or identities: fold the constant parts
		// into a variable part that belongs to this merge point. Folding
		// everything keeps the chain of states at a loop head finite.
		// What stays proved is the part of each side's window at or
		// after the pointer itself: [p, p + rng - fixed) on both sides.
		a := scalar.ALU(scalar.Add, true, v.off, scalar.Const(uint64(v.fixed)))
		b := scalar.ALU(scalar.Add, true, w.off, scalar.Const(uint64(w.fixed)))
		// (A negative constant part would put the pointer before its
		// window: nothing is kept then.)
		rng := int32(0)
		if v.fixed >= 0 && w.fixed >= 0 {
			rng = max(min(v.rng-v.fixed, w.rng-w.fixed), 0)
		}
		return value{kind: v.kind, off: a.Join(b), id: -merge, solo: true, rng: rng}
	}
	out := v
	out.off = v.off.Join(w.off)
	return out
}

// widen is join with widening of the numeric parts, for loop heads.
func (v value) widen(next value, merge int32, th scalar.Thresholds) value {
	if v == next {
		return v
	}
	j := v.join(next, merge)
	if j.kind == v.kind && (j.kind == kScalar || j.kind.isPointer()) {
		j.off = v.off.Widen(j.off, th)
	}
	return j
}

func (v value) equal(w value) bool {
	return v.kind == w.kind && v.frame == w.frame && v.region == w.region && v.id == w.id &&
		v.fixed == w.fixed && v.rng == w.rng && v.solo == w.solo && v.off.Equal(w.off)
}
