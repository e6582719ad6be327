package nicrt

import (
	"cmp"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// RegionOptions are a region's rights and placement (wire.RegionOptions:
// a caller asks for the same over the control plane).
type RegionOptions = wire.RegionOptions

// Region is memory a tenant registered. The host reads and writes it
// directly through Bytes; handlers reach it through the regions of their
// objects, linked by name at Install, and built-in verbs by (ID, Key).
// As with RDMA, concurrent access by the host and by handlers is the
// application's to coordinate; the VM's atomics (interpreted or compiled)
// and the CAS and FETCH-ADD verbs are real 8-byte atomics on this memory.
//
// On a node whose host cores may run the JIT tier (Config.Tier jit or
// auto, on Linux), the memory is a vm.Memory with a file: the JIT maps
// the same pages into its linear memory, so that every core sees every
// write at once. That memory lives outside the Go heap until the Region
// is unreachable: a slice of Bytes must not outlive its Region.
type Region struct {
	ID       uint32 // node-wide, never reused
	Key      uint64 // random, from crypto/rand
	Tenant   uint64
	Name     string
	Writable bool
	NICMem   bool

	backing *vm.Memory // 8-byte aligned; a file where the JIT may map it
	mem     []byte     // backing's bytes, exactly the registered size
	links   int        // installed programs linked to it (under NIC.mu)
	gone    bool       // unregistered (under NIC.mu)
}

// Bytes returns the region's memory: 8-byte aligned, Size bytes.
func (r *Region) Bytes() []byte { return r.mem }

// Size returns the region's size in bytes.
func (r *Region) Size() uint64 { return uint64(len(r.mem)) }

// Errors of Register and Unregister.
var (
	ErrRegionExists  = errors.New("nicrt: the tenant already has a region of that name")
	ErrRegionSize    = errors.New("nicrt: region size out of range")
	ErrNICMemFull    = errors.New("nicrt: not enough NIC memory")
	ErrRegionInUse   = errors.New("nicrt: region linked by an installed program")
	ErrNotRegistered = errors.New("nicrt: region not registered here")
)

// Regions returns tenant's registered regions in id order.
func (n *NIC) Regions(tenant uint64) []*Region {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*Region
	if t := n.tenants[tenant]; t != nil {
		for _, r := range t.regions {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *Region) int { return cmp.Compare(a.ID, b.ID) })
	return out
}

// Region returns the registered region with id, if there is one.
func (n *NIC) Region(id uint32) (*Region, bool) {
	r := n.regions.get(id)
	return r, r != nil
}

// Register allocates a region of size bytes (1 … 2^32-1, zeroed, 8-byte
// aligned) for tenant under name, with a fresh random key. Names are per
// tenant: two tenants may both have a "table".
func (n *NIC) Register(tenant uint64, name string, size uint64, opts RegionOptions) (*Region, error) {
	if name == "" {
		return nil, errors.New("nicrt: region name is empty")
	}
	if size == 0 || size > bytecode.MaxRegionSize {
		return nil, fmt.Errorf("%w: %d bytes (1 … %d)", ErrRegionSize, size, uint64(bytecode.MaxRegionSize))
	}
	var kb [8]byte
	if _, err := rand.Read(kb[:]); err != nil {
		return nil, fmt.Errorf("nicrt: region key: %w", err)
	}
	// Allocated before the lock: it may be large. Where the JIT can run,
	// a file it maps in place (NewMemory still falls back to Go memory
	// where memfd is refused; the JIT then keeps writers interpreted).
	var backing *vm.Memory
	switch {
	case n.cfg.Memory != nil:
		var err error
		if backing, err = n.cfg.Memory(size); err != nil {
			return nil, fmt.Errorf("nicrt: region %q: %w", name, err)
		}
		if uint64(backing.Len()) != size {
			return nil, fmt.Errorf("nicrt: region %q: Config.Memory gave %d bytes, not %d", name, backing.Len(), size)
		}
	case n.cfg.Tier != TierInterp && jit.Available() == nil:
		var err error
		if backing, err = vm.NewMemory(size); err != nil {
			return nil, fmt.Errorf("nicrt: region %q: %w", name, err)
		}
	default:
		backing = vm.HeapMemory(size)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed.Load() {
		return nil, ErrClosed
	}
	t := n.tenant(tenant)
	if _, ok := t.regions[name]; ok {
		return nil, fmt.Errorf("%w: tenant %d, %q", ErrRegionExists, tenant, name)
	}
	if opts.NICMem {
		if size > n.cfg.NICMemBytes-n.nicmemUsed {
			return nil, fmt.Errorf("%w: %d bytes asked, %d of %d free", ErrNICMemFull, size, n.cfg.NICMemBytes-n.nicmemUsed, n.cfg.NICMemBytes)
		}
		n.nicmemUsed += size
	}
	r := &Region{
		ID:       n.nextRegion,
		Key:      binary.LittleEndian.Uint64(kb[:]),
		Tenant:   tenant,
		Name:     name,
		Writable: opts.Writable,
		NICMem:   opts.NICMem,
		backing:  backing,
		mem:      backing.Bytes(),
	}
	n.nextRegion++
	t.regions[name] = r
	n.regions.set(r.ID, r)
	return r, nil
}

// Unregister removes a region: built-in verbs no longer reach it and
// programs can no longer link it. A region that an installed program links
// is refused (ErrRegionInUse); uninstall the program first. A verb already
// running may still finish on the memory.
func (n *NIC) Unregister(r *Region) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if r == nil || r.gone || n.regions.get(r.ID) != r {
		return ErrNotRegistered
	}
	if r.links > 0 {
		return fmt.Errorf("%w: %q is linked by %d program(s)", ErrRegionInUse, r.Name, r.links)
	}
	r.gone = true
	delete(n.tenants[r.Tenant].regions, r.Name)
	n.regions.set(r.ID, nil)
	if r.NICMem {
		n.nicmemUsed -= r.Size()
	}
	return nil
}
