//go:build !linux

package vm

// newMemFile has no file to offer here: Memory is Go memory.
func newMemFile(uint64) (*memFile, error) { return nil, nil }

func (f *memFile) unmap() {}
