package wire

import (
	"cmp"
	"slices"
)

// RegionOptions are a region's rights and placement, as a node's host
// registers it and as a caller asks for it over the control plane
// (Register).
type RegionOptions struct {
	// Writable lets handlers and the built-in verbs write the region.
	Writable bool
	// NICMem places the region in NIC memory: NIC cores reach it without a
	// PCIe round trip, host cores through one (the cost model's view; the
	// bytes are in the node's process either way).
	NICMem bool
}

// Placement is the placement of a register body for o.
func (o RegionOptions) Placement() Placement {
	if o.NICMem {
		return PlacementNICMem
	}
	return PlacementHost
}

// InstallOptions are the choices of one install, as a node's host makes
// it and as a caller uploads it (Install); the zero value links every
// region of the object to the tenant's registered region of the same name.
type InstallOptions struct {
	// Regions binds regions of the object to registered regions of other
	// names: the object's region name → the name the tenant registered.
	// An object region it does not name links by its own name. Every key
	// must be a region of the object, and no two object regions may link
	// to one registered region.
	Regions map[string]string
}

// Bindings are o.Regions as an install body carries them, sorted by the
// object's region.
func (o InstallOptions) Bindings() []RegionBinding {
	var out []RegionBinding
	for obj, reg := range o.Regions {
		out = append(out, RegionBinding{Object: obj, Region: reg})
	}
	slices.SortFunc(out, func(a, b RegionBinding) int { return cmp.Compare(a.Object, b.Object) })
	return out
}

// InstallOptionsOf are the options of an install body's bindings.
func InstallOptionsOf(bs []RegionBinding) InstallOptions {
	if len(bs) == 0 {
		return InstallOptions{}
	}
	opts := InstallOptions{Regions: make(map[string]string, len(bs))}
	for _, b := range bs {
		opts.Regions[b.Object] = b.Region
	}
	return opts
}
