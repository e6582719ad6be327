package nicrt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// hotLoop is a 100-iteration loop that keeps r1, so that the handlers
// below go past a NICBudget of 100 and run on host cores.
const hotLoop = `
mov %r0, 0
mov %r2, 0
hot:
add %r0, 1
add %r2, 1
jlt %r2, 100, hot
`

// TestTier runs host-placed handlers under each Config.Tier: the replies
// and the region's counter are the same in every tier, and the counters
// say where each run went: every run in the JIT (jit), only after
// JITHotRuns runs and the background compilation that the next run
// starts (auto), a handler that writes a region as well as one that reads
// it; one compilation per program, dropped when it is uninstalled.
func TestTier(t *testing.T) {
	const calls = JITHotRuns + 36
	for _, tier := range []Tier{TierInterp, TierJIT, TierAuto} {
		t.Run(tier.String(), func(t *testing.T) {
			n, err := New(Config{NICBudget: 100, Tier: tier})
			if tier == TierJIT && jit.Available() != nil {
				if err == nil || !strings.Contains(err.Error(), "built without cgo") {
					t.Fatalf("New with Tier jit and no cgo: err %v", err)
				}
				t.Skip(jit.Available())
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { n.Close() })
			c := register(t, n, 1, "c", 8, RegionOptions{})
			binary.LittleEndian.PutUint64(c.Bytes(), 1000)
			v := register(t, n, 1, "v", 8, RegionOptions{Writable: true})
			reads := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "c", Size: 8}}, testprog.Src{Name: "value", Asm: hotLoop + testprog.ValueAsm(5)}))
			writes := install(t, n, 1, testprog.Object(t, []bytecode.Region{{Name: "v", Size: 8, Writable: true}}, testprog.Src{Name: "incr", Asm: hotLoop + testprog.IncrAsm}))
			for _, p := range []*Program{reads, writes} {
				if h := p.Handlers()[0]; !h.Placement.OnHost() {
					t.Fatalf("%s placed %s, want a host core", h.Name, h.Placement)
				}
			}
			for i := range calls {
				if tier == TierAuto && i == JITHotRuns+1 {
					waitCompiled(t, n, 2) // the runs before started them in the background
				}
				rep := n.Call(&Message{Tenant: 1, Handler: id(t, reads, "value")})
				if rep.Status != StatusOK || len(rep.Data) != 8 || u64(rep.Data) != 1005 {
					t.Fatalf("value: %+v", rep)
				}
				if rep := n.Call(&Message{Tenant: 1, Handler: id(t, writes, "incr")}); rep.Status != StatusOK {
					t.Fatalf("incr: %+v", rep)
				}
			}
			if got := u64(v.Bytes()); got != calls {
				t.Errorf("counter %d after %d increments", got, calls)
			}
			s := n.Stats()
			want := map[Tier][3]uint64{ // JIT runs, fallbacks, compiles
				TierInterp: {0, 0, 0},
				TierJIT:    {2 * calls, 0, 2},
				TierAuto:   {2 * (calls - JITHotRuns - 1), 0, 2},
			}[tier]
			if tier == TierAuto && jit.Available() != nil {
				want = [3]uint64{0, 2 * (calls - JITHotRuns), 0}
			}
			if s.Host.JITRuns != want[0] || s.Host.JITFallbacks != want[1] || s.JIT.Compiles != want[2] || s.NIC.JITRuns != 0 {
				t.Errorf("host jit runs %d, fallbacks %d, compiles %d (nic jit runs %d); want %v",
					s.Host.JITRuns, s.Host.JITFallbacks, s.JIT.Compiles, s.NIC.JITRuns, want)
			}
			if want[2] > 0 && s.JIT.CompileTime <= 0 {
				t.Error("no compile time recorded")
			}
			named := map[string]uint64{}
			for _, ctr := range s.Counters() {
				named[ctr.Name] = ctr.Value
			}
			if named["host.jit_runs"] != want[0] || named["host.jit_fallbacks"] != want[1] {
				t.Errorf("named counters: host.jit_runs %d, host.jit_fallbacks %d", named["host.jit_runs"], named["host.jit_fallbacks"])
			}
			// Uninstall drops the compiled code.
			for _, p := range []*Program{reads, writes} {
				if err := n.Uninstall(p); err != nil {
					t.Fatal(err)
				}
			}
			if codes := n.Stats().JIT.Codes; codes != 0 {
				t.Errorf("%d compiled programs held after both were uninstalled", codes)
			}
		})
	}
}

// TestTierConfig: an unknown tier is refused.
func TestTierConfig(t *testing.T) {
	if _, err := New(Config{Tier: 7}); err == nil || !strings.Contains(err.Error(), "unknown tier") {
		t.Errorf("New(Tier 7): %v", err)
	}
	if errors.Is(jit.Available(), jit.ErrUnavailable) {
		if _, err := New(Config{Tier: TierAuto}); err != nil {
			t.Errorf("TierAuto without cgo: %v (it falls back)", err)
		}
	}
}

// waitCompiled waits until the node's JIT cache has finished count
// compilations, successful or not.
func waitCompiled(t *testing.T, n *NIC, count uint64) {
	t.Helper()
	if jit.Available() != nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := n.Stats().JIT; s.Compiles+s.Failures < count; s = n.Stats().JIT {
		if time.Now().After(deadline) {
			t.Fatalf("%d compilations not finished within 10 s", count)
		}
		time.Sleep(time.Millisecond)
	}
}

// fetchAddAsm adds 1 to the u64 at region 0 and 2 to the u32 at region
// 0 + 8, atomically, and replies with the u64's old value (8 bytes).
const fetchAddAsm = `
ldxdw %r2, [%r1+16]
ldxdw %r3, [%r1+24]
mov %r4, %r2
add %r4, 8
jgt %r4, %r3, short
lddw %r5, region[0]
mov %r6, 1
lock fetch add [%r5+0], %r6
mov %r7, 2
lock add32 [%r5+8], %r7
stxdw [%r2+0], %r6
mov %r0, 8
exit
short:
mov %r0, -1
exit`

// TestTierSharedRegion: handlers that write one region run at the same
// time on NIC cores (interpreted) and on host cores (compiled, under
// TierJIT, with the region mapped into the JIT's linear memory): every
// fetch-add from every core returns a distinct old value, the counters
// end at the number of runs, the host sees them, and no host run fell
// back to the interpreter. TierInterp is the reference.
func TestTierSharedRegion(t *testing.T) {
	for _, tier := range []Tier{TierInterp, TierJIT} {
		t.Run(tier.String(), func(t *testing.T) {
			if tier == TierJIT && jit.Available() != nil {
				t.Skip(jit.Available())
			}
			n := newNIC(t, Config{NICBudget: 100, NICCores: 2, HostCores: 2, Tier: tier})
			ctr := register(t, n, 1, "ctr", 16, RegionOptions{Writable: true})
			region := []bytecode.Region{{Name: "ctr", Size: 16, Writable: true}}
			nic := install(t, n, 1, testprog.Object(t, region, testprog.Src{Name: "add", Asm: fetchAddAsm}))
			host := install(t, n, 1, testprog.Object(t, region, testprog.Src{Name: "add", Asm: hotLoop + fetchAddAsm}))
			if p := nic.Handlers()[0].Placement; p != PlaceNIC {
				t.Fatalf("the short handler is placed %s", p)
			}
			if p := host.Handlers()[0].Placement; !p.OnHost() {
				t.Fatalf("the looping handler is placed %s", p)
			}
			const workers, perWorker = 4, 300
			olds := make([][]uint64, workers)
			var wg sync.WaitGroup
			for w := range workers {
				p := []*Program{nic, host}[w%2]
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range perWorker {
						rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, "add"), SrcNode: uint64(w)})
						if rep.Status != StatusOK || len(rep.Data) != 8 {
							t.Errorf("worker %d: %+v", w, rep)
							return
						}
						olds[w] = append(olds[w], u64(rep.Data))
					}
				}()
			}
			wg.Wait()
			const runs = workers * perWorker
			seen := map[uint64]bool{}
			for _, list := range olds {
				for _, v := range list {
					if seen[v] || v >= runs {
						t.Fatalf("old value %d returned twice or out of range", v)
					}
					seen[v] = true
				}
			}
			if got := u64(ctr.Bytes()); got != runs || len(seen) != runs {
				t.Errorf("counter %d, %d distinct old values, after %d runs", got, len(seen), runs)
			}
			if got := binary.LittleEndian.Uint32(ctr.Bytes()[8:]); got != 2*runs {
				t.Errorf("32-bit counter %d, want %d", got, 2*runs)
			}
			s := n.Stats()
			if s.NIC.Runs == 0 || s.Host.Runs == 0 {
				t.Fatalf("runs: %d on NIC cores, %d on host cores; want both", s.NIC.Runs, s.Host.Runs)
			}
			wantJIT := uint64(0)
			if tier == TierJIT {
				wantJIT = s.Host.Runs
			}
			if s.Host.JITRuns != wantJIT || s.Host.JITFallbacks != 0 {
				t.Errorf("host: %d runs, %d in the JIT, %d fallbacks; want %d in the JIT", s.Host.Runs, s.Host.JITRuns, s.Host.JITFallbacks, wantJIT)
			}
		})
	}
}

// TestTierRefusal: under TierJIT, the programs the JIT cannot take stay
// with the interpreter, each of its host runs a JIT fallback: one that
// writes a region only copies of which the JIT could make (Go memory, as
// where memfd is refused), and one whose regions are larger than a linear
// memory. A region of Go memory that is only read is copied in per run,
// compiled.
func TestTierRefusal(t *testing.T) {
	if jit.Available() != nil {
		t.Skip(jit.Available())
	}
	tests := []struct {
		name    string
		sizes   []uint64 // the regions, each "r<i>"
		heap    bool     // their memory replaced by Go memory
		handler string
		jit     bool
		why     string
	}{
		{"writes a memfd region", []uint64{8}, false, testprog.IncrAsm, true, ""},
		{"writes a Go-memory region", []uint64{8}, true, testprog.IncrAsm, false, `region "r0" cannot be mapped in place, and the program writes it`},
		{"reads a Go-memory region", []uint64{8}, true, testprog.ValueAsm(1), true, ""},
		{"regions larger than linear memory", []uint64{3 << 30, 3 << 30}, false, testprog.ValueAsm(1), false, "more than one linear memory maps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNIC(t, Config{NICBudget: 100, Tier: TierJIT})
			var regions []bytecode.Region
			for i, size := range tt.sizes {
				name := fmt.Sprintf("r%d", i)
				r := register(t, n, 1, name, size, RegionOptions{Writable: true})
				if tt.heap {
					r.backing = vm.HeapMemory(size)
					r.mem = r.backing.Bytes()
				}
				regions = append(regions, bytecode.Region{Name: name, Size: size, Writable: tt.handler == testprog.IncrAsm})
			}
			p := install(t, n, 1, testprog.Object(t, regions, testprog.Src{Name: "h", Asm: hotLoop + tt.handler}))
			for range 3 {
				if rep := n.Call(&Message{Tenant: 1, Handler: id(t, p, "h")}); rep.Status != StatusOK {
					t.Fatalf("%+v", rep)
				}
			}
			s := n.Stats()
			if tt.jit && (s.Host.JITRuns != 3 || s.Host.JITFallbacks != 0) || !tt.jit && (s.Host.JITRuns != 0 || s.Host.JITFallbacks != 3) {
				t.Errorf("jit runs %d, fallbacks %d; want all 3 runs in the JIT: %v", s.Host.JITRuns, s.Host.JITFallbacks, tt.jit)
			}
			e := p.host.Load()
			if e == nil || e.jit != tt.jit || tt.why == "" && e.why != nil || tt.why != "" && (e.why == nil || !strings.Contains(e.why.Error(), tt.why)) {
				t.Errorf("choice %+v, want jit %v, why %q", e, tt.jit, tt.why)
			}
		})
	}
}
