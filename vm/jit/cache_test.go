//go:build cgo

package jit_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm/jit"
)

// TestCache: concurrent Gets of one key compile once; a failure is cached
// and counted; Forget drops the entry.
func TestCache(t *testing.T) {
	var c jit.Cache
	calls := 0
	var mu sync.Mutex
	src := func() (asm.Instructions, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return bytecode.Assemble("mov %r0, 1\nexit")
	}
	var wg sync.WaitGroup
	codes := make([]*jit.Code, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := c.Get("p", jit.Options{}, src)
			if err != nil {
				t.Error(err)
			}
			codes[i] = code
		}()
	}
	wg.Wait()
	for _, code := range codes[1:] {
		if code != codes[0] {
			t.Fatal("two codes for one key")
		}
	}
	if calls != 1 {
		t.Errorf("insns called %d times, want 1", calls)
	}
	if _, err := c.Get("p", jit.Options{Unchecked: true}, src); err != nil {
		t.Fatal(err)
	}
	bad := errors.New("no program")
	for range 2 {
		if _, err := c.Get("q", jit.Options{}, func() (asm.Instructions, error) { return nil, bad }); !errors.Is(err, bad) {
			t.Fatalf("err = %v, want %v", err, bad)
		}
	}
	st := c.Stats()
	if st.Compiles != 2 || st.Failures != 1 || st.Hits != 8 || st.Codes != 3 || st.CompileTime <= 0 {
		t.Errorf("stats %+v, want 2 compiles, 1 failure, 8 hits, 3 codes, some time", st)
	}
	c.Forget("p")
	if st := c.Stats(); st.Codes != 1 {
		t.Errorf("%d codes after Forget, want 1", st.Codes)
	}
}
