// Package retry is the examples' backoff between the tries of an
// operation that met a busy lock (a bucket or a node a writer holds).
package retry

import (
	"context"
	"time"
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
