//go:build !linux

package xdp

import "errors"

var errNoMmap = errors.New("xdp: shared BPF maps need Linux")

func mmapShared(fd, n int) ([]byte, error) { return nil, errNoMmap }

func munmap(b []byte) error { return nil }

func pageSize() int { return 4096 }

func monotonicNanos() uint64 { return 0 }
