package vm

import (
	"os"

	"golang.org/x/sys/unix"
)

// newMemFile makes a memfd of size bytes, rounded up to whole pages, and
// maps it shared.
func newMemFile(size uint64) (*memFile, error) {
	page := uint64(os.Getpagesize())
	n := (size + page - 1) &^ (page - 1)
	fd, err := unix.MemfdCreate("naam-memory", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	if err := unix.Ftruncate(fd, int64(n)); err != nil {
		unix.Close(fd)
		return nil, err
	}
	b, err := unix.Mmap(fd, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return &memFile{fd: fd, mapping: b}, nil
}

func (f *memFile) unmap() {
	unix.Munmap(f.mapping)
	unix.Close(f.fd)
}
