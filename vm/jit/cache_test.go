//go:build cgo

package jit_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// TestCache: concurrent Gets of one key compile once; a failure is cached
// and counted; Forget drops the entry.
func TestCache(t *testing.T) {
	var c jit.Cache
	calls := 0
	var mu sync.Mutex
	src := func() (asm.Instructions, []int, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		insns, err := bytecode.Assemble("mov %r0, 1\nexit\nmov %r0, 2\nexit")
		return insns, []int{2}, err
	}
	var wg sync.WaitGroup
	codes := make([]*jit.Code, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, err := c.Get("p", false, src)
			if err != nil {
				t.Error(err)
			}
			codes[i] = code
		}()
	}
	wg.Wait()
	m := vm.NewMachine(vm.Options{})
	if res, err := m.Invoke(codes[0], &vm.Invocation{Entry: 2, Reply: make([]byte, 8)}); err != nil || res.R0 != 2 {
		t.Fatalf("entry 2: r0 = %d, err %v; want 2 (the entries load returned)", res.R0, err)
	}
	for _, code := range codes[1:] {
		if code != codes[0] {
			t.Fatal("two codes for one key")
		}
	}
	if calls != 1 {
		t.Errorf("insns called %d times, want 1", calls)
	}
	if _, err := c.Get("p", true, src); err != nil {
		t.Fatal(err)
	}
	bad := errors.New("no program")
	for range 2 {
		if _, err := c.Get("q", false, func() (asm.Instructions, []int, error) { return nil, nil, bad }); !errors.Is(err, bad) {
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

// TestCacheReady: Ready does not wait; it starts one compilation and
// returns the code once it is done.
func TestCacheReady(t *testing.T) {
	var c jit.Cache
	release := make(chan struct{})
	load := func() (asm.Instructions, []int, error) {
		<-release
		insns, err := bytecode.Assemble("mov %r0, 3\nexit")
		return insns, nil, err
	}
	for range 3 {
		if code, err := c.Ready("k", false, load); code != nil || err != nil {
			t.Fatalf("Ready before the compilation ended: %v, %v", code, err)
		}
	}
	close(release)
	code, err := c.Get("k", false, load) // waits for the one compilation
	if err != nil || code == nil {
		t.Fatalf("Get: %v, %v", code, err)
	}
	if got, err := c.Ready("k", false, load); got != code || err != nil {
		t.Fatalf("Ready after: %v, %v", got, err)
	}
	if st := c.Stats(); st.Compiles != 1 {
		t.Errorf("%d compiles, want 1", st.Compiles)
	}
}
