//go:build !linux

package transport

import (
	"syscall"
	"time"
)

// msgTrunc is MSG_TRUNC where x/net reports it; unknown here.
const msgTrunc = 0

func newMmsgBatcher(syscall.RawConn, bool, bool, time.Duration, *udpCounters) batcher { return nil }

func controlReusePort(syscall.RawConn) error { return errUnsupported }

func socketBufferSizes(syscall.RawConn) (int, int, error) { return 0, 0, errUnsupported }
