package xdp

import (
	"testing"

	"github.com/naam-project/naam/nicrt"
)

// TestRuntimeValues: the statuses and verb ids the tier answers with are
// nicrt's (spec/nic.md).
func TestRuntimeValues(t *testing.T) {
	for _, tc := range []struct {
		have int
		want nicrt.Status
	}{
		{statusFault, nicrt.StatusFault}, {statusUnknownHandler, nicrt.StatusUnknownHandler},
		{statusBadRequest, nicrt.StatusBadRequest}, {statusUnknownRegion, nicrt.StatusUnknownRegion},
		{statusForeignRegion, nicrt.StatusForeignRegion}, {statusWrongKey, nicrt.StatusWrongKey},
		{statusOutOfBounds, nicrt.StatusOutOfBounds}, {statusReadOnly, nicrt.StatusReadOnly},
		{statusMisaligned, nicrt.StatusMisaligned}, {statusTooLarge, nicrt.StatusTooLarge},
	} {
		if tc.have != int(tc.want) {
			t.Errorf("status %v is %d in nicrt, %d here", tc.want, tc.want, tc.have)
		}
	}
	for _, tc := range []struct{ have, want uint32 }{
		{verbRead, nicrt.HandlerRead}, {verbWrite, nicrt.HandlerWrite}, {verbCAS, nicrt.HandlerCAS}, {verbFetchAdd, nicrt.HandlerFetchAdd},
	} {
		if tc.have != tc.want {
			t.Errorf("verb id %d here, %d in nicrt", tc.have, tc.want)
		}
	}
	if firstHandlerProg > int(nicrt.FirstHandlerID) {
		t.Errorf("verb programs %d overlap handler ids from %d", firstHandlerProg, nicrt.FirstHandlerID)
	}
	if nicrt.DefaultConfig().MaxReply != DefaultMaxReply {
		t.Errorf("MaxReply %d in nicrt, %d here", nicrt.DefaultConfig().MaxReply, DefaultMaxReply)
	}
}
