package kv

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"math/bits"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/nicrt/wire"
)

//go:embed kv.naam
var sourceText []byte

// SourceFile is the name of the table's handler program, whose text
// Source returns; examples/kv/kvnode compiles it.
const SourceFile = "kv.naam"

// Source returns kv.naam as written.
func Source() []byte { return bytes.Clone(sourceText) }

// declared are kv.naam's constants as it declares them, Config's
// defaults: the client needs them without the language's checker, and
// kvnode's TestDeclared checks them against the source.
var declared = map[string]uint32{"BUCKETS": 1024, "PROBES": 16, "VALUE": 256}

// RegionName is the table's region in kv.naam; Config.InstallOptions binds
// it to the registered region Config.Region.
const RegionName = "kv"

// KeySize is the size of every key.
const KeySize = 16

// The bucket header, BucketSize bytes, Buckets of them from offset 0.
const (
	BucketSize    = 32
	BucketVersion = 0  // u64: sequence lock, even when stable, +2 per write
	BucketKey     = 8  // [u8; 16]
	BucketVLen    = 24 // u32: bytes of the value in use
	BucketState   = 28 // u32: StateEmpty, StateUsed or StateDeleted
)

// Bucket states.
const (
	StateEmpty   = 0
	StateUsed    = 1
	StateDeleted = 2 // a tombstone: probes go past it, PUT reuses it
)

// A value slot, Config.SlotSize() bytes, from Config.SlotsOffset(); the
// value of bucket i is slot i.
const (
	SlotVersion = 0 // u64: the bucket's version when this value was written
	SlotData    = 8 // [u8; ValueSize]
)

// Fail codes of the handlers (the constants of kv.naam).
const (
	CodeNotFound = 1 // no such key within the probe window
	CodeBusy     = 2 // a writer holds the bucket, or it changed during a GET: retry
	CodeFull     = 3 // PUT: no free bucket within the probe window
	CodeTooLong  = 4 // the request's vlen is larger than ValueSize
)

// Limits of a Config.
const (
	MaxValueSize = 256
	MaxProbes    = 32
)

// Handler names, in the object's order (object ids 0…3).
const (
	HandlerGet    = "get"
	HandlerPut    = "put"
	HandlerDelete = "delete"
	HandlerCAS    = "cas"
)

// Config is one table's parameters: the constants of kv.naam (whose
// declared values are the defaults) and the region the program binds to.
type Config struct {
	// Region is the registered region (writable) that holds the table:
	// InstallOptions binds the program's region kv to it. Default "kv".
	Region string
	// Buckets is the number of buckets (BUCKETS), a power of two ≥ Probes.
	// Default 1024.
	Buckets uint32
	// Probes is the longest probe sequence (PROBES), 1…MaxProbes.
	// Default 16: the GET stays well within the NIC budget (about 450
	// instructions at most, verified), an RDMA client reads the window in
	// one READ of 512 bytes, and linear probing at a load of 1/4 rarely
	// needs more (a million keys in 2^22 buckets: at most 9–14 buckets
	// from home over several hash functions; 100,000 keys in 2^18
	// buckets, a load of 0.38: up to 22, so keep the load at or under 1/4).
	Probes uint32
	// ValueSize is the largest value (VALUE), a multiple of 8 in
	// 8…MaxValueSize. Default 256.
	ValueSize uint32
}

// DefaultConfig is what kv.naam declares: a 1024-bucket table of values up
// to 256 bytes, probed 16 buckets deep, in region "kv".
func DefaultConfig() Config { return Config{}.withDefaults() }

// params ties c's fields to kv.naam's constants.
func (c *Config) params() map[string]*uint32 {
	return map[string]*uint32{"BUCKETS": &c.Buckets, "PROBES": &c.Probes, "VALUE": &c.ValueSize}
}

// withDefaults fills zero fields.
func (c Config) withDefaults() Config {
	if c.Region == "" {
		c.Region = RegionName
	}
	for name, v := range c.params() {
		if *v == 0 {
			*v = declared[name]
		}
	}
	return c
}

// Constants are c's parameters, after defaults, as the values of
// kv.naam's constants: what naamc build -D sets, and what kvnode.Compile
// compiles the source with.
func (c Config) Constants() map[string]uint32 {
	c = c.withDefaults()
	out := map[string]uint32{}
	for name, v := range c.params() {
		out[name] = *v
	}
	return out
}

// Validate reports what is wrong with c (after defaults).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case bits.OnesCount32(c.Buckets) != 1:
		return fmt.Errorf("kv: %d buckets is not a power of two", c.Buckets)
	case c.Probes > MaxProbes:
		return fmt.Errorf("kv: %d probes, at most %d", c.Probes, MaxProbes)
	case c.Buckets < c.Probes:
		return fmt.Errorf("kv: %d buckets, fewer than the %d probes", c.Buckets, c.Probes)
	case c.ValueSize%8 != 0 || c.ValueSize > MaxValueSize:
		return fmt.Errorf("kv: value size %d is not a multiple of 8 in 8…%d", c.ValueSize, MaxValueSize)
	case c.RegionSize() > bytecode.MaxRegionSize:
		return fmt.Errorf("kv: the table needs %d bytes, a region holds at most %d", c.RegionSize(), uint64(bytecode.MaxRegionSize))
	}
	return nil
}

// SlotSize is the size of one value slot.
func (c Config) SlotSize() uint64 { return 8 + uint64(c.withDefaults().ValueSize) }

// SlotsOffset is where the value slots start in the region.
func (c Config) SlotsOffset() uint64 { return uint64(c.withDefaults().Buckets) * BucketSize }

// RegionSize is the size of the table's region.
func (c Config) RegionSize() uint64 {
	c = c.withDefaults()
	return uint64(c.Buckets) * (BucketSize + c.SlotSize())
}

// InstallOptions binds the program's region to c.Region (for
// nicrt.NIC.InstallWith, host.Node.InstallWith, host.Peer.InstallWith).
func (c Config) InstallOptions() wire.InstallOptions {
	return wire.InstallOptions{Regions: map[string]string{RegionName: c.withDefaults().Region}}
}

// Hash is the language's hash helper over a key: FNV-1a 64, as the NIC
// computes it, so host and NIC agree on home buckets.
func Hash(key Key) uint64 {
	h := uint64(0xcbf29ce484222325)
	for _, b := range key {
		h ^= uint64(b)
		h *= 0x100000001b3
	}
	return h
}

// Home is key's home bucket: the hash with its high half folded into
// its low half (FNV-1a's low bits mix poorly for keys that differ in a few
// bytes), modulo Buckets, as the handlers compute it.
func (c Config) Home(key Key) uint32 {
	h := Hash(key)
	return uint32((h ^ h>>32) & uint64(c.withDefaults().Buckets-1))
}

// Key is a key: exactly KeySize bytes.
type Key [KeySize]byte

// StringKey makes a key of s, zero-padded; s may have at most 16 bytes.
func StringKey(s string) (Key, error) {
	var k Key
	if len(s) > KeySize {
		return k, fmt.Errorf("kv: key %q has %d bytes, at most %d", s, len(s), KeySize)
	}
	copy(k[:], s)
	return k, nil
}

// KeyOf is the key of record n of a benchmark: "user" and n in 12 decimal
// digits (YCSB's keys are "user" and a number too), so n < 10^12.
func KeyOf(n uint64) Key {
	var k Key
	copy(k[:], "user")
	for i := KeySize - 1; i >= 4; i-- {
		k[i] = byte('0' + n%10)
		n /= 10
	}
	return k
}

// Errors of the clients and of Table, one per fail code.
var (
	ErrNotFound = errors.New("kv: not found")
	ErrBusy     = errors.New("kv: busy (a writer holds the bucket)")
	ErrFull     = errors.New("kv: no free bucket within the probe window")
	ErrTooLong  = errors.New("kv: value too long")
)

// codeErrors are the sentinels of the handlers' fail codes.
var codeErrors = call.Errors{CodeNotFound: ErrNotFound, CodeBusy: ErrBusy, CodeFull: ErrFull, CodeTooLong: ErrTooLong}

// BucketsFor is the number of buckets for records keys at a load of at
// most 1/4: the next power of two ≥ 4 × records, at least 1024.
func BucketsFor(records uint64) uint32 {
	n := uint64(1024)
	for n < 4*records {
		n *= 2
	}
	return uint32(min(n, 1<<31))
}
