package mica

import (
	_ "embed"
	"errors"
	"fmt"
	"math/bits"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/source"
	"github.com/naam-project/naam/examples/kv"
	"github.com/naam-project/naam/host"
)

//go:embed mica.naam
var sourceText []byte

var prog = source.New("mica", "mica.naam", sourceText)

// RegionName is the store's region in mica.naam; Config.InstallOptions
// binds it to the registered region Config.Region.
const RegionName = "mica"

// Key is a key: 16 bytes, as examples/kv's (kv.KeyOf is record n's key).
type Key = kv.Key

// KeySize is the size of every key.
const KeySize = kv.KeySize

// The store's header: the log's tail, then reserved words to HeaderSize.
const (
	HeaderSize = 64
	StoreTail  = 0 // u64: the next sequence number
)

// A bucket, Config.BucketSize() bytes, Buckets of them from HeaderSize.
const (
	BucketVersion = 0 // u64: the writers' lock, even when free, +2 per write
	BucketSlots   = 8 // [u64; Ways]: tag << 48 | stamp, 0 when empty
)

// A slot's fields.
const (
	SlotTagShift = 48
	StampMask    = 1<<SlotTagShift - 1
)

// A log entry, Config.EntrySize() bytes, Entries of them from
// Config.LogOffset(); sequence number s lives in entry s % Entries with
// the stamp s + 1.
const (
	EntryStamp = 0  // u64: seq + 1
	EntryKey   = 8  // [u8; 16]
	EntryVLen  = 24 // u32
	EntryFlags = 28 // u32: 0
	EntryValue = 32 // [u8; ValueSize], then the trailing stamp (u64)
)

// Fail codes of the handlers (the constants of mica.naam).
const (
	CodeNotFound = 1 // no live entry of the key: never stored, deleted, evicted or displaced
	CodeBusy     = 2 // a writer holds the bucket: retry
	CodeTooLong  = 3 // the request's vlen is larger than ValueSize
)

// Limits of a Config.
const (
	MaxWays      = 15
	MaxValueSize = 1024
)

// Handler names, in the object's order.
const (
	HandlerGet    = "get"
	HandlerPut    = "put"
	HandlerDelete = "delete"
)

// Config is one store's parameters: the constants of mica.naam (whose
// declared values are the defaults) and the region the program binds to.
type Config struct {
	// Region is the registered region (writable) that holds the store:
	// InstallOptions binds the program's region mica to it. Default "mica".
	Region string
	// Buckets is the number of buckets (BUCKETS), a power of two. Default
	// 1024.
	Buckets uint32
	// Ways is the number of slots per bucket (WAYS), 1…MaxWays. Default 7:
	// with the version word a bucket is one 64-byte line.
	Ways uint32
	// Entries is the number of log entries (ENTRIES), a power of two: a
	// key stays until Entries more PUTs have been appended after its own.
	// Default 8192.
	Entries uint32
	// ValueSize is the largest value (VALUE), a multiple of 8 in
	// 8…MaxValueSize. Default 64.
	ValueSize uint32
}

// DefaultConfig is what mica.naam declares.
func DefaultConfig() Config { return Config{}.withDefaults() }

// params ties c's fields to mica.naam's constants.
func (c *Config) params() []source.Param {
	return []source.Param{
		{Const: "BUCKETS", Value: &c.Buckets}, {Const: "WAYS", Value: &c.Ways},
		{Const: "ENTRIES", Value: &c.Entries}, {Const: "VALUE", Value: &c.ValueSize},
	}
}

func (c Config) withDefaults() Config {
	if c.Region == "" {
		c.Region = RegionName
	}
	prog.Defaults(c.params()...)
	return c
}

// Validate reports what is wrong with c (after defaults).
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case bits.OnesCount32(c.Buckets) != 1:
		return fmt.Errorf("mica: %d buckets is not a power of two", c.Buckets)
	case c.Ways < 1 || c.Ways > MaxWays:
		return fmt.Errorf("mica: %d ways, want 1…%d", c.Ways, MaxWays)
	case bits.OnesCount32(c.Entries) != 1:
		return fmt.Errorf("mica: %d log entries is not a power of two", c.Entries)
	case c.ValueSize%8 != 0 || c.ValueSize > MaxValueSize:
		return fmt.Errorf("mica: value size %d is not a multiple of 8 in 8…%d", c.ValueSize, MaxValueSize)
	case c.RegionSize() > bytecode.MaxRegionSize:
		return fmt.Errorf("mica: the store needs %d bytes, a region holds at most %d", c.RegionSize(), uint64(bytecode.MaxRegionSize))
	}
	return nil
}

// BucketSize is the size of one bucket: the version and the slots.
func (c Config) BucketSize() uint64 { return 8 + 8*uint64(c.withDefaults().Ways) }

// EntrySize is the size of one log entry.
func (c Config) EntrySize() uint64 { return EntryValue + uint64(c.withDefaults().ValueSize) + 8 }

// EntryStampEnd is the offset of an entry's trailing stamp.
func (c Config) EntryStampEnd() uint64 { return c.EntrySize() - 8 }

// BucketOffset is where bucket i starts in the region.
func (c Config) BucketOffset(i uint32) uint64 { return HeaderSize + uint64(i)*c.BucketSize() }

// LogOffset is where the log starts in the region.
func (c Config) LogOffset() uint64 {
	return HeaderSize + uint64(c.withDefaults().Buckets)*c.BucketSize()
}

// EntryOffset is where the entry of sequence number seq lives.
func (c Config) EntryOffset(seq uint64) uint64 {
	return c.LogOffset() + seq%uint64(c.withDefaults().Entries)*c.EntrySize()
}

// RegionSize is the size of the store's region.
func (c Config) RegionSize() uint64 {
	c = c.withDefaults()
	return c.LogOffset() + uint64(c.Entries)*c.EntrySize()
}

// Compile compiles mica.naam with c's parameters. The node verifies the
// object at install; install it with c.InstallOptions().
func Compile(c Config) (*bytecode.Object, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return prog.Compile(c.params()...)
}

// InstallOptions binds the program's region to c.Region (for
// host.Node.InstallWith and host.Peer.InstallWith).
func (c Config) InstallOptions() host.InstallOptions {
	return host.InstallOptions{Regions: map[string]string{RegionName: c.withDefaults().Region}}
}

// Bucket is key's bucket, as the handlers compute it: FNV-1a (kv.Hash)
// with the high half folded into the low, modulo Buckets.
func (c Config) Bucket(key Key) uint32 {
	h := kv.Hash(key)
	return uint32((h ^ h>>32) & uint64(c.withDefaults().Buckets-1))
}

// Tag is key's tag in its slot: the top 16 bits of its hash.
func Tag(key Key) uint64 { return kv.Hash(key) >> SlotTagShift }

// Live says whether the entry of stamp st survives the log's wrap at
// tail.
func (c Config) Live(st, tail uint64) bool {
	return st != 0 && st+uint64(c.withDefaults().Entries) > tail
}

// Errors of the clients and of Store, one per fail code.
var (
	ErrNotFound = errors.New("mica: not found")
	ErrBusy     = errors.New("mica: busy (a writer holds the bucket)")
	ErrTooLong  = errors.New("mica: value too long")
)

var codeErrors = call.Errors{CodeNotFound: ErrNotFound, CodeBusy: ErrBusy, CodeTooLong: ErrTooLong}

// ConfigFor is a store for records keys of values up to valueSize bytes:
// a bucket per key (7 ways: a load of 1/7, so that a bucket rarely
// overflows and displaces a key) and a log of twice the records, so that
// loading them evicts none and a run may append as many again.
func ConfigFor(records uint64, valueSize int) Config {
	n := uint64(1024)
	for n < records {
		n *= 2
	}
	c := DefaultConfig()
	c.Buckets = uint32(min(n, 1<<30))
	c.Entries = uint32(min(2*n, 1<<31))
	c.ValueSize = uint32((valueSize + 7) / 8 * 8)
	return c
}
