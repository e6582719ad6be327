package kv

import (
	"encoding/binary"
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Table is host-side access to a table's region bytes (nicrt.Region.Bytes
// on the node that serves it): loading before the handlers run, and
// lookups for checks. It takes bucket locks as the handlers do, with
// atomics on the version words, so it may run beside them.
type Table struct {
	cfg Config
	mem []byte
}

// NewTable wraps mem, which must hold at least cfg.RegionSize() bytes and
// start on an 8-byte boundary (nicrt regions do).
func NewTable(cfg Config, mem []byte) (*Table, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if uint64(len(mem)) < cfg.RegionSize() {
		return nil, fmt.Errorf("kv: region of %d bytes, the table needs %d", len(mem), cfg.RegionSize())
	}
	if len(mem) > 0 && uintptr(unsafe.Pointer(&mem[0]))%8 != 0 {
		return nil, fmt.Errorf("kv: region bytes not 8-byte aligned")
	}
	return &Table{cfg: cfg, mem: mem[:cfg.RegionSize()]}, nil
}

// Config is the table's configuration, defaults filled in.
func (t *Table) Config() Config { return t.cfg }

func (t *Table) bucket(i uint32) []byte {
	off := uint64(i) * BucketSize
	return t.mem[off : off+BucketSize]
}

func (t *Table) slot(i uint32) []byte {
	off := t.cfg.SlotsOffset() + uint64(i)*t.cfg.SlotSize()
	return t.mem[off : off+t.cfg.SlotSize()]
}

func (t *Table) version(i uint32) *uint64 {
	return (*uint64)(unsafe.Pointer(&t.mem[uint64(i)*BucketSize+BucketVersion]))
}

// find walks key's probe window as GET does: the bucket holding key, or
// the first free bucket (empty or deleted) if the key is absent, with the
// version seen. found says which; ok is false when neither exists.
func (t *Table) find(key Key) (i uint32, v uint64, found, ok bool, err error) {
	home := t.cfg.Home(key)
	free, freev, haveFree := uint32(0), uint64(0), false
	for p := uint32(0); p < t.cfg.Probes; p++ {
		j := (home + p) & (t.cfg.Buckets - 1)
		b := t.bucket(j)
		v := atomic.LoadUint64(t.version(j))
		if v&1 == 1 {
			return 0, 0, false, false, ErrBusy
		}
		switch binary.LittleEndian.Uint32(b[BucketState:]) {
		case StateUsed:
			if Key(b[BucketKey:BucketKey+KeySize]) == key {
				return j, v, true, true, nil
			}
		default:
			if !haveFree {
				free, freev, haveFree = j, v, true
			}
			if binary.LittleEndian.Uint32(b[BucketState:]) == StateEmpty {
				return free, freev, false, true, nil
			}
		}
	}
	return free, freev, false, haveFree, nil
}

// Put stores value under key as the put handler does and returns the new
// version.
func (t *Table) Put(key Key, value []byte) (uint64, error) {
	if len(value) > int(t.cfg.ValueSize) {
		return 0, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(value), t.cfg.ValueSize)
	}
	i, v, _, ok, err := t.find(key)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ErrFull
	}
	return t.store(i, v, key, value)
}

func (t *Table) store(i uint32, v uint64, key Key, value []byte) (uint64, error) {
	if !atomic.CompareAndSwapUint64(t.version(i), v, v+1) {
		return 0, ErrBusy
	}
	b, s := t.bucket(i), t.slot(i)
	copy(b[BucketKey:], key[:])
	binary.LittleEndian.PutUint32(b[BucketVLen:], uint32(len(value)))
	binary.LittleEndian.PutUint32(b[BucketState:], StateUsed)
	binary.LittleEndian.PutUint64(s[SlotVersion:], v+2)
	n := copy(s[SlotData:], value)
	clear(s[SlotData+n:])
	atomic.AddUint64(t.version(i), 1)
	return v + 2, nil
}

// Get looks key up as the get handler does: a copy of the value and its
// version.
func (t *Table) Get(key Key) ([]byte, uint64, error) {
	i, v, found, _, err := t.find(key)
	if err != nil {
		return nil, 0, err
	}
	if !found {
		return nil, 0, ErrNotFound
	}
	vlen := binary.LittleEndian.Uint32(t.bucket(i)[BucketVLen:])
	val := append([]byte(nil), t.slot(i)[SlotData:SlotData+vlen]...)
	if atomic.LoadUint64(t.version(i)) != v {
		return nil, 0, ErrBusy
	}
	return val, v, nil
}

// Delete removes key as the delete handler does and returns the bucket's
// new version.
func (t *Table) Delete(key Key) (uint64, error) {
	i, v, found, _, err := t.find(key)
	if err != nil {
		return 0, err
	}
	if !found {
		return 0, ErrNotFound
	}
	if !atomic.CompareAndSwapUint64(t.version(i), v, v+1) {
		return 0, ErrBusy
	}
	b := t.bucket(i)
	binary.LittleEndian.PutUint32(b[BucketState:], StateDeleted)
	binary.LittleEndian.PutUint32(b[BucketVLen:], 0)
	atomic.AddUint64(t.version(i), 1)
	return v + 2, nil
}

// Len counts the keys in the table (a scan of every bucket).
func (t *Table) Len() int {
	n := 0
	for i := uint32(0); i < t.cfg.Buckets; i++ {
		if binary.LittleEndian.Uint32(t.bucket(i)[BucketState:]) == StateUsed {
			n++
		}
	}
	return n
}
