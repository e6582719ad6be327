package retry

import (
	"context"
	"errors"
	"testing"
	"time"
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
