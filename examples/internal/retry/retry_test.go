package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/host"
)

func TestDelay(t *testing.T) {
	for _, tc := range []struct {
		try  int
		want time.Duration
	}{{2, time.Microsecond}, {3, 2 * time.Microsecond}, {12, 1024 * time.Microsecond}, {40, 1024 * time.Microsecond}} {
		if have := Delay(tc.try); have != tc.want {
			t.Errorf("Delay(%d) = %v, want %v", tc.try, have, tc.want)
		}
	}
}

func TestBackoffEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := Backoff(ctx, 1); err != nil {
		t.Errorf("first try: %v", err)
	}
	if err := Backoff(ctx, 3); err != nil {
		t.Errorf("third try: %v", err)
	}
	cancel()
	if err := Backoff(ctx, 12); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestDo(t *testing.T) {
	busy, other := errors.New("busy"), errors.New("other")
	ctx := context.Background()
	for _, tc := range []struct {
		tries, busyFor int
		want           error
		wantRuns       int
	}{
		{tries: 5, busyFor: 2, want: nil, wantRuns: 3},
		{tries: 3, busyFor: 10, want: busy, wantRuns: 3},
		{tries: 0, busyFor: 10, want: busy, wantRuns: 1},
		{tries: 5, busyFor: -1, want: other, wantRuns: 1},
	} {
		runs := 0
		err := Do(ctx, tc.tries, busy, func() error {
			runs++
			switch {
			case tc.busyFor < 0:
				return other
			case runs <= tc.busyFor:
				return fmt.Errorf("wrapped: %w", busy)
			}
			return nil
		})
		if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) || runs != tc.wantRuns {
			t.Errorf("%+v: %v after %d runs", tc, err, runs)
		}
	}
}

// callerFunc is a call.Caller of a function.
type callerFunc func(ctx context.Context, id uint32, req []byte) ([]byte, error)

func (f callerFunc) Call(ctx context.Context, id uint32, req []byte) ([]byte, error) {
	return f(ctx, id, req)
}

func TestHandlerCall(t *testing.T) {
	errBusy, errGone := errors.New("ex: busy"), errors.New("ex: gone")
	calls := 0
	h := Handler{
		Caller: callerFunc(func(_ context.Context, id uint32, req []byte) ([]byte, error) {
			calls++
			switch {
			case id == 1 && calls < 3:
				return nil, &host.HandlerError{Code: 2}
			case id == 1:
				return []byte("ok"), nil
			case id == 2:
				return nil, &host.HandlerError{Code: 9}
			}
			return nil, errors.New("no such handler")
		}),
		Busy: 2, Tries: 4, Codes: call.Errors{2: errBusy, 9: errGone}, What: "ex: handler failed",
	}
	ctx := context.Background()
	rts := 0
	if out, err := h.Call(ctx, 1, nil, &rts); err != nil || string(out) != "ok" || rts != 3 {
		t.Errorf("busy twice: %q, %v, %d round trips", out, err, rts)
	}
	rts = 0
	if _, err := h.Call(ctx, 2, nil, &rts); err != errGone || rts != 1 {
		t.Errorf("a fail code: %v, %d round trips", err, rts)
	}
	rts, calls = 0, -10
	h.Tries = 2
	if _, err := h.Call(ctx, 1, nil, &rts); err != errBusy || rts != 2 {
		t.Errorf("busy past the tries: %v, %d round trips", err, rts)
	}
	if _, err := h.Call(ctx, 3, nil, &rts); err == nil || err.Error() != "no such handler" {
		t.Errorf("another error: %v", err)
	}
	// Again: code 9 is tried once more, and only once.
	h.Again = 9
	rts = 0
	if _, err := h.Call(ctx, 2, nil, &rts); err != errGone || rts != 2 {
		t.Errorf("again: %v, %d round trips, want 2", err, rts)
	}
}
