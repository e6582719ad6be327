//go:build linux

package xdp

import "golang.org/x/sys/unix"

// mmapShared maps n bytes of the map behind fd into the process, shared
// with the kernel.
func mmapShared(fd, n int) ([]byte, error) {
	return unix.Mmap(fd, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
}

func munmap(b []byte) error { return unix.Munmap(b) }

func pageSize() int { return unix.Getpagesize() }

// monotonicNanos reads CLOCK_MONOTONIC, the clock of bpf_ktime_get_ns.
func monotonicNanos() uint64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return uint64(ts.Nano())
}
