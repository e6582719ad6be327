package jit

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cilium/ebpf/asm"
)

// Cache holds the compiled code of installed programs, one Code per key
// and mode, compiled at most once even when many cores ask at the same
// time. Keys are the caller's program identities (a node's installed
// program). It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	codes map[cacheKey]*cacheEntry

	compiles, failures, hits atomic.Uint64
	compileNanos             atomic.Uint64
}

type cacheKey struct {
	key       any
	unchecked bool
}

type cacheEntry struct {
	once    sync.Once
	done    atomic.Bool // once has finished: code and err are set
	started bool        // Ready has started the compilation (under Cache.mu)
	code    *Code
	err     error
}

// CacheStats count what a Cache did.
type CacheStats struct {
	Compiles    uint64        // successful compilations
	Failures    uint64        // compilations that failed (the error is cached too)
	Hits        uint64        // Gets answered from the cache
	CompileTime time.Duration // total time of the compilations
	Codes       int           // entries held now
}

// Get returns the code of key, checked or unchecked, compiling what load
// returns (the instructions and the entry slots; load is called only on a
// miss) the first time.
func (c *Cache) Get(key any, unchecked bool, load func() (asm.Instructions, []int, error)) (*Code, error) {
	e := c.entry(key, unchecked)
	c.compile(e, unchecked, load)
	return e.code, e.err
}

// Ready is Get without waiting: it returns the code, or the compile error,
// once the compilation has finished; before that it returns nil, nil, and
// the first call starts the compilation in a goroutine of its own, so that
// the caller (a core serving requests) can go on interpreting meanwhile.
func (c *Cache) Ready(key any, unchecked bool, load func() (asm.Instructions, []int, error)) (*Code, error) {
	e := c.entry(key, unchecked)
	if e.done.Load() {
		return e.code, e.err
	}
	c.mu.Lock()
	start := !e.started
	e.started = true
	c.mu.Unlock()
	if start {
		go c.compile(e, unchecked, load)
	}
	return nil, nil
}

// entry returns key's entry, made on the first call.
func (c *Cache) entry(key any, unchecked bool) *cacheEntry {
	k := cacheKey{key, unchecked}
	c.mu.Lock()
	if c.codes == nil {
		c.codes = map[cacheKey]*cacheEntry{}
	}
	e := c.codes[k]
	hit := e != nil
	if !hit {
		e = &cacheEntry{}
		c.codes[k] = e
	}
	c.mu.Unlock()
	if hit {
		c.hits.Add(1)
	}
	return e
}

// compile compiles e once; every caller returns after it has finished.
func (c *Cache) compile(e *cacheEntry, unchecked bool, load func() (asm.Instructions, []int, error)) {
	e.once.Do(func() {
		start := time.Now()
		insns, entries, err := load()
		if e.err = err; err == nil {
			e.code, e.err = Compile(insns, Options{Unchecked: unchecked, Entries: entries})
		}
		c.compileNanos.Add(uint64(time.Since(start).Nanoseconds()))
		if e.err != nil {
			c.failures.Add(1)
		} else {
			c.compiles.Add(1)
		}
		e.done.Store(true)
	})
}

// Forget drops key's code in both modes (a program was uninstalled).
// Machines that ran it keep their instance of it until they are dropped.
func (c *Cache) Forget(key any) {
	c.mu.Lock()
	delete(c.codes, cacheKey{key, false})
	delete(c.codes, cacheKey{key, true})
	c.mu.Unlock()
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	n := len(c.codes)
	c.mu.Unlock()
	return CacheStats{
		Compiles: c.compiles.Load(), Failures: c.failures.Load(), Hits: c.hits.Load(),
		CompileTime: time.Duration(c.compileNanos.Load()), Codes: n,
	}
}
