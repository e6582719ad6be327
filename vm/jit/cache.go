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
	once sync.Once
	code *Code
	err  error
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
	})
	return e.code, e.err
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
