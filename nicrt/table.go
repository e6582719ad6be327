package nicrt

import "sync/atomic"

// table maps uint32 ids to entries for the data path: get is two loads and
// an index, without locks, so dispatch costs the same however many entries
// there are. Writers (set) must be serialised by the caller; readers may
// run concurrently with them.
//
// Entries live in chunks of chunkSize slots; the directory of chunks is
// replaced (copy-on-write) only when it grows, which happens once per
// chunkSize ids.
type table[T any] struct {
	dir atomic.Pointer[[]*chunk[T]]
}

const (
	chunkBits = 10
	chunkSize = 1 << chunkBits
)

type chunk[T any] [chunkSize]atomic.Pointer[T]

// get returns the entry for id, or nil.
func (t *table[T]) get(id uint32) *T {
	d := t.dir.Load()
	if d == nil {
		return nil
	}
	c := id >> chunkBits
	if c >= uint32(len(*d)) {
		return nil
	}
	return (*d)[c][id&(chunkSize-1)].Load()
}

// set stores v (nil deletes) under id, growing the directory as needed.
func (t *table[T]) set(id uint32, v *T) {
	c := int(id >> chunkBits)
	d := t.dir.Load()
	if d == nil || c >= len(*d) {
		if v == nil {
			return
		}
		var old []*chunk[T]
		if d != nil {
			old = *d
		}
		grown := make([]*chunk[T], c+1)
		copy(grown, old)
		for i := len(old); i <= c; i++ {
			grown[i] = new(chunk[T])
		}
		t.dir.Store(&grown)
		d = &grown
	}
	(*d)[c][id&(chunkSize-1)].Store(v)
}

// each calls f for every entry, in id order. Entries set concurrently may
// or may not be seen.
func (t *table[T]) each(f func(id uint32, v *T)) {
	d := t.dir.Load()
	if d == nil {
		return
	}
	for ci, c := range *d {
		for i := range c {
			if v := c[i].Load(); v != nil {
				f(uint32(ci)<<chunkBits|uint32(i), v)
			}
		}
	}
}
