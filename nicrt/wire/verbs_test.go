package wire

import (
	"bytes"
	"testing"
)

// TestParseVerb: every encoder's request parses back to what it encoded,
// and a request of the wrong length for its verb is refused.
func TestParseVerb(t *testing.T) {
	ref := RegionRef{ID: 7, Key: 0x0123_4567_89ab_cdef}
	for _, tc := range []struct {
		name     string
		verb     uint32
		have     []byte
		want     VerbRequest
		operands []byte
		ok       bool
	}{
		{"read", HandlerRead, AppendRead(nil, ref, 16, 100), VerbRequest{Ref: ref, Length: 100, Offset: 16}, []byte{}, true},
		{"write", HandlerWrite, AppendWrite(nil, ref, 8, []byte("abc")), VerbRequest{Ref: ref, Length: 3, Offset: 8}, []byte("abc"), true},
		{"cas", HandlerCAS, AppendCAS(nil, ref, 24, 1, 2), VerbRequest{Ref: ref, Length: 8, Offset: 24}, []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0}, true},
		{"fetch-add", HandlerFetchAdd, AppendFetchAdd(nil, ref, 0, 5), VerbRequest{Ref: ref, Length: 8}, []byte{5, 0, 0, 0, 0, 0, 0, 0}, true},
		{"short", HandlerRead, make([]byte, VerbHeaderSize-1), VerbRequest{}, nil, false},
		{"read with operands", HandlerRead, append(AppendRead(nil, ref, 0, 8), 1), VerbRequest{}, nil, false},
		{"write short of its length", HandlerWrite, AppendWrite(nil, ref, 0, []byte("abc"))[:VerbHeaderSize+2], VerbRequest{}, nil, false},
		{"cas of 4 bytes", HandlerCAS, func() []byte { b := AppendCAS(nil, ref, 0, 1, 2); b[12] = 4; return b }(), VerbRequest{}, nil, false},
		{"fetch-add without delta", HandlerFetchAdd, AppendRead(nil, ref, 0, 8), VerbRequest{}, nil, false},
	} {
		got, ok := ParseVerb(tc.verb, tc.have)
		if ok != tc.ok || got.Ref != tc.want.Ref || got.Length != tc.want.Length || got.Offset != tc.want.Offset || !bytes.Equal(got.Operands, tc.operands) {
			t.Errorf("%s: %+v, %v; want %+v (operands %x), %v", tc.name, got, ok, tc.want, tc.operands, tc.ok)
		}
	}
}

// TestRuntimeStatus: the names, Rejected and the sentinels of the
// statuses, and the wire status they travel as.
func TestRuntimeStatus(t *testing.T) {
	for _, tc := range []struct {
		have     RuntimeStatus
		name     string
		rejected bool
		err      bool
	}{
		{RuntimeOK, "ok", false, false},
		{RuntimeFault, "fault", false, false},
		{RuntimeUnknownHandler, "unknown handler", true, true},
		{RuntimeControlFailed, "control failed", true, true},
		{RuntimeStatus(200), "Status(200)", true, false},
	} {
		if tc.have.String() != tc.name || tc.have.Rejected() != tc.rejected || (tc.have.Err() != nil) != tc.err {
			t.Errorf("%d: %q rejected=%v err=%v; want %q %v %v", tc.have, tc.have, tc.have.Rejected(), tc.have.Err(), tc.name, tc.rejected, tc.err)
		}
		if k, ok := tc.have.Wire().Runtime(); !ok || k != uint32(tc.have) {
			t.Errorf("%d travels as %v", tc.have, tc.have.Wire())
		}
	}
}
