// Package retry is the examples' clients' way with an operation that met
// a busy lock (a bucket or a node a writer holds): try again, backing off
// between tries, up to a number of tries.
package retry

import (
	"context"
	"errors"
	"time"

	"github.com/naam-project/naam/examples/call"
)

// Backoff waits before try+1 of an operation: nothing after the first
// try, then 1 µs doubling to 1 ms, so that a writer that lost its CPU (a
// one-sided writer holds its lock across round trips) gets time to finish
// instead of the reader running out of tries in a burst. It returns ctx's
// error if ctx ends first.
func Backoff(ctx context.Context, try int) error {
	if try <= 1 {
		return ctx.Err()
	}
	t := time.NewTimer(Delay(try))
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Delay is the wait after try (≥ 2): 1 µs << (try-2), at most 1,024 µs.
func Delay(try int) time.Duration {
	return time.Microsecond << min(max(try-2, 0), 10)
}

// Do runs op until it returns anything but an error that is busy
// (errors.Is), at most tries times (at least once), backing off between.
func Do(ctx context.Context, tries int, busy error, op func() error) error {
	for try := 1; ; try++ {
		err := op()
		if !errors.Is(err, busy) || try >= max(tries, 1) {
			return err
		}
		if err := Backoff(ctx, try); err != nil {
			return err
		}
	}
}

// Handler is how a service's client calls one handler: the caller, the
// fail code that means busy, the tries, and the service's sentinels for
// its fail codes (what names the service in other handler errors).
type Handler struct {
	Caller call.Caller
	Busy   uint32
	Tries  int
	Codes  call.Errors
	What   string
	// Again is a fail code tried once more at once (0: none): one that an
	// old copy a run at the client kept may cause, and that the failed run
	// dropped (btree's TOO_DEEP, clientrun.Keep.DropOn).
	Again uint32
}

// Call runs handler id with req until it is not busy (and once more after
// a first Again), adding each try to *roundTrips. A handler's fail code comes back as its sentinel (Codes).
func (h Handler) Call(ctx context.Context, id uint32, req []byte, roundTrips *int) ([]byte, error) {
	again := false
	for try := 1; ; try++ {
		*roundTrips++
		out, err := h.Caller.Call(ctx, id, req)
		if err == nil {
			return out, nil
		}
		code, ok := call.Code(err)
		if !ok {
			return nil, err
		}
		if code == h.Again && h.Again != 0 && !again {
			again = true
			continue
		}
		if code != h.Busy || try >= max(h.Tries, 1) {
			return nil, h.Codes.Of(h.What, code, err)
		}
		if err := Backoff(ctx, try); err != nil {
			return nil, err
		}
	}
}
