package call

import (
	"errors"
	"testing"

	"github.com/naam-project/naam/nicrt/caller"
)

func TestErrorsOf(t *testing.T) {
	errA := errors.New("ex: a")
	codes := Errors{1: errA}
	he := &caller.HandlerError{Code: 1}
	if got := codes.Of("ex: h failed", 1, he); got != errA {
		t.Errorf("code 1: %v", got)
	}
	reserved := &caller.HandlerError{Code: 0xffff_ff00}
	got := codes.Of("ex: h failed", reserved.Code, reserved)
	if !errors.Is(got, reserved) || got.Error() != "ex: h failed: "+reserved.Error() {
		t.Errorf("a reserved code: %v", got)
	}
}
