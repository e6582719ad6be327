//go:build !linux

package transport

import "syscall"

// msgTrunc is MSG_TRUNC where x/net reports it; unknown here.
const msgTrunc = 0

func newMmsgBatcher(syscall.RawConn, bool, bool, *udpCounters) batcher { return nil }

func controlReusePort(syscall.RawConn) error { return errUnsupported }

func socketBufferSizes(syscall.RawConn) (int, int, error) { return 0, 0, errUnsupported }
