package mica

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Store is host-side access to a store's region bytes (host.Region.Bytes
// on the node that serves it): loading before the handlers run, and
// lookups for checks. It runs the handlers' algorithm with the same
// atomics (the bucket lock, the tail's fetch-and-add, the stamps), so it
// may run beside them.
type Store struct {
	cfg Config
	mem []byte
}

// NewStore wraps mem, which must hold at least cfg.RegionSize() bytes and
// start on an 8-byte boundary (regions do).
func NewStore(cfg Config, mem []byte) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if uint64(len(mem)) < cfg.RegionSize() {
		return nil, fmt.Errorf("mica: region of %d bytes, the store needs %d", len(mem), cfg.RegionSize())
	}
	if len(mem) > 0 && uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, fmt.Errorf("mica: region bytes not 8-byte aligned")
	}
	return &Store{cfg: cfg, mem: mem[:cfg.RegionSize()]}, nil
}

// Config is the store's configuration, defaults filled in.
func (s *Store) Config() Config { return s.cfg }

func (s *Store) word(off uint64) *uint64 { return (*uint64)(unsafe.Pointer(&s.mem[off])) }

// Tail is the next sequence number: the PUTs appended so far.
func (s *Store) Tail() uint64 { return atomic.LoadUint64(s.word(StoreTail)) }

func (s *Store) slot(b uint32, w uint32) *uint64 {
	return s.word(s.cfg.BucketOffset(b) + BucketSlots + 8*uint64(w))
}

// holds says whether the entry of stamp st holds key and is not being
// overwritten, as the handlers' holds.
func (s *Store) holds(st uint64, key Key) bool {
	off := s.cfg.EntryOffset(st - 1)
	if atomic.LoadUint64(s.word(off+EntryStamp)) != st || Key(s.mem[off+EntryKey:off+EntryKey+KeySize]) != key {
		return false
	}
	return atomic.LoadUint64(s.word(off+s.cfg.EntryStampEnd())) == st
}

func (s *Store) lock(b uint32) error {
	v := s.word(s.cfg.BucketOffset(b) + BucketVersion)
	old := atomic.LoadUint64(v)
	if old&1 == 1 || !atomic.CompareAndSwapUint64(v, old, old+1) {
		return ErrBusy
	}
	return nil
}

func (s *Store) unlock(b uint32) { atomic.AddUint64(s.word(s.cfg.BucketOffset(b)+BucketVersion), 1) }

// Put appends value under key and points key's slot at it, as the put
// handler does; it returns the entry's sequence number.
func (s *Store) Put(key Key, value []byte) (uint64, error) {
	cfg := s.cfg
	if len(value) > int(cfg.ValueSize) {
		return 0, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(value), cfg.ValueSize)
	}
	b, tag := cfg.Bucket(key), Tag(key)
	if err := s.lock(b); err != nil {
		return 0, err
	}
	defer s.unlock(b)
	seq := atomic.AddUint64(s.word(StoreTail), 1) - 1
	stamp := seq + 1
	off := cfg.EntryOffset(seq)
	atomic.StoreUint64(s.word(off+cfg.EntryStampEnd()), stamp)
	atomic.StoreUint64(s.word(off+EntryStamp), stamp)
	e := s.mem[off : off+cfg.EntrySize()]
	copy(e[EntryKey:], key[:])
	binary.LittleEndian.PutUint32(e[EntryVLen:], uint32(len(value)))
	binary.LittleEndian.PutUint32(e[EntryFlags:], 0)
	n := copy(e[EntryValue:EntryValue+cfg.ValueSize], value)
	clear(e[EntryValue+n : EntryValue+cfg.ValueSize])

	tail := s.Tail()
	target, free, oldest, oldestStamp := cfg.Ways, cfg.Ways, uint32(0), uint64(StampMask+1)
	for w := range cfg.Ways {
		sl := atomic.LoadUint64(s.slot(b, w))
		st := sl & StampMask
		switch {
		case !cfg.Live(st, tail):
			if free == cfg.Ways {
				free = w
			}
			continue
		case sl>>SlotTagShift == tag && s.holds(st, key):
			target = w
		case st < oldestStamp:
			oldestStamp, oldest = st, w
		}
		if target != cfg.Ways {
			break
		}
	}
	if target == cfg.Ways {
		target = free
	}
	if target == cfg.Ways {
		target = oldest
	}
	atomic.StoreUint64(s.slot(b, target), tag<<SlotTagShift|stamp)
	return seq, nil
}

// Get looks key up as the get handler does: a copy of the value and the
// entry's sequence number.
func (s *Store) Get(key Key) ([]byte, uint64, error) {
	cfg := s.cfg
	b, tag := cfg.Bucket(key), Tag(key)
	for w := range cfg.Ways {
		sl := atomic.LoadUint64(s.slot(b, w))
		st := sl & StampMask
		if st == 0 || sl>>SlotTagShift != tag {
			continue
		}
		off := cfg.EntryOffset(st - 1)
		e := s.mem[off : off+cfg.EntrySize()]
		if atomic.LoadUint64(s.word(off+EntryStamp)) != st || Key(e[EntryKey:EntryKey+KeySize]) != key {
			continue
		}
		vlen := binary.LittleEndian.Uint32(e[EntryVLen:])
		if vlen > cfg.ValueSize {
			continue
		}
		val := append([]byte(nil), e[EntryValue:EntryValue+vlen]...)
		if atomic.LoadUint64(s.word(off+cfg.EntryStampEnd())) == st {
			return val, st - 1, nil
		}
	}
	return nil, 0, ErrNotFound
}

// Delete empties key's slot as the delete handler does and returns the
// sequence number of the entry it pointed at.
func (s *Store) Delete(key Key) (uint64, error) {
	cfg := s.cfg
	b, tag := cfg.Bucket(key), Tag(key)
	if err := s.lock(b); err != nil {
		return 0, err
	}
	defer s.unlock(b)
	tail := s.Tail()
	for w := range cfg.Ways {
		sl := atomic.LoadUint64(s.slot(b, w))
		st := sl & StampMask
		if cfg.Live(st, tail) && sl>>SlotTagShift == tag && s.holds(st, key) {
			atomic.StoreUint64(s.slot(b, w), 0)
			return st - 1, nil
		}
	}
	return 0, ErrNotFound
}

// Len counts the keys the index holds: slots of live entries.
func (s *Store) Len() int {
	tail, n := s.Tail(), 0
	for b := range s.cfg.Buckets {
		for w := range s.cfg.Ways {
			if s.cfg.Live(atomic.LoadUint64(s.slot(b, w))&StampMask, tail) {
				n++
			}
		}
	}
	return n
}
