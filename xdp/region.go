package xdp

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"

	"github.com/naam-project/naam/nicrt/wire"
)

// regionSlack is what a region's map holds past the region: the verbs
// copy up to a payload or a reply at an offset the kernel knows only to
// be at most the region's size, so the map must hold that much more for
// the kernel to accept the copy. Nothing but the tier's own bounds checks
// stands between a handler and those bytes, and the region's own checks
// (the project's verifier, the verbs' bounds) keep every access inside the
// region.
const regionSlack = wire.MaxJumboPayload + 8

// bpfFMmapable is BPF_F_MMAPABLE (include/uapi/linux/bpf.h).
const bpfFMmapable = 1 << 10

// Region is memory that the host process and the kernel share: the single
// value of a BPF_F_MMAPABLE array map, mapped into the process. Bytes is
// the region as the host library, the user-space cores, the built-in verbs
// and the XDP programs all see it: a store by any of them is a load away
// from the others, with no copy.
type Region struct {
	m    *ebpf.Map
	mem  []byte // the whole mapping
	size uint64
}

// NewRegion creates a zeroed region of size bytes, 1 … MaxRegionSize, page
// aligned (so 8-byte aligned, as nicrt's regions are).
func NewRegion(size uint64) (*Region, error) {
	if size < 1 || size > MaxRegionSize {
		return nil, fmt.Errorf("xdp: region of %d bytes, XDP regions hold 1…%d", size, MaxRegionSize)
	}
	value := size + regionSlack
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name: "naam_region", Type: ebpf.Array, KeySize: 4, ValueSize: uint32(value), MaxEntries: 1,
		Flags: bpfFMmapable,
	})
	if err != nil {
		return nil, fmt.Errorf("xdp: region of %d bytes: %w", size, err)
	}
	page := uint64(pageSize())
	mem, err := mmapShared(m.FD(), int((value+page-1)/page*page))
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("xdp: map region of %d bytes: %w", size, err)
	}
	return &Region{m: m, mem: mem, size: size}, nil
}

// Bytes returns the region's memory. It stays valid until Close.
func (r *Region) Bytes() []byte { return r.mem[:r.size:r.size] }

// Size returns the region's size.
func (r *Region) Size() uint64 { return r.size }

// FD returns the file descriptor of the region's map: mapping it
// (mmap, MAP_SHARED) gives the same memory to whoever holds it.
func (r *Region) FD() int { return r.m.FD() }

// Close unmaps the region and releases the process's reference to its
// map; programs that use it keep the memory until they are unloaded.
func (r *Region) Close() error {
	err := munmap(r.mem)
	r.mem = nil
	return errors.Join(err, r.m.Close())
}
