package vm

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// Memory is memory that engines can map in place instead of copying it:
// regions, and raw mode's memory. On Linux it is a memfd (a file in
// memory) mapped shared into the process, so that an engine can map the
// same file into memory of its own (vm/jit: into each instance's linear
// memory) and every view sees every write, atomics included. Where a file
// is unavailable it is plain Go memory, which engines copy per run.
//
// Bytes is the host's view: 8-byte aligned, Len bytes. The mapping is
// outside the Go heap: it lives until Close, or until the Memory is
// unreachable, so a slice of Bytes must not outlive the Memory.
type Memory struct {
	data []byte
	file *memFile // nil for Go memory
}

// memFile is a Memory's file and host mapping, released once by Close or
// by the cleanup that runs when the Memory is collected.
type memFile struct {
	fd      int
	mapping []byte // the whole host mapping, page-rounded
	once    sync.Once
}

// NewMemory returns size zeroed bytes (at most MaxSegmentSize, one
// segment's worth) backed by a file where the platform has one.
func NewMemory(size uint64) (*Memory, error) {
	if size > MaxSegmentSize {
		return nil, fmt.Errorf("vm: memory of %d bytes, at most %d (one segment)", size, uint64(MaxSegmentSize))
	}
	if size == 0 {
		return &Memory{}, nil
	}
	f, err := newMemFile(size)
	if err != nil || f == nil {
		// No file (another platform, or memfd refused): Go memory, which
		// engines copy.
		return HeapMemory(size), nil
	}
	m := &Memory{data: f.mapping[:size:size], file: f}
	runtime.AddCleanup(m, func(f *memFile) { f.release() }, f)
	return m, nil
}

// HeapMemory returns size zeroed bytes of Go memory as a Memory without a
// file: engines copy it.
func HeapMemory(size uint64) *Memory {
	words := make([]uint64, (size+7)/8)
	return &Memory{data: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), size)}
}

// ExternalMemory returns data, memory the caller keeps mapped (such as
// a BPF map's value, shared with the kernel), as a Memory without a file:
// engines copy it per run, as Go memory. The caller must keep data valid
// while the Memory is reachable.
func ExternalMemory(data []byte) *Memory { return &Memory{data: data} }

// Bytes returns the host's view of the memory.
func (m *Memory) Bytes() []byte { return m.data }

// Len returns the memory's size in bytes.
func (m *Memory) Len() int { return len(m.data) }

// FD returns the file descriptor engines map, and the length of the file
// to map (Len rounded up to whole pages); -1 when the memory has no file.
func (m *Memory) FD() (fd int, size int) {
	if m.file == nil {
		return -1, 0
	}
	return m.file.fd, len(m.file.mapping)
}

// Close unmaps the host's view and closes the file now, instead of when
// the Memory is collected. Mappings an engine made of the file stay valid
// until the engine drops them. Nothing may use Bytes afterwards.
func (m *Memory) Close() error {
	if m.file != nil {
		m.file.release()
	}
	m.data = nil
	return nil
}

func (f *memFile) release() { f.once.Do(f.unmap) }
