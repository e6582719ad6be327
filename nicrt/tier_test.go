package nicrt

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/naam-project/naam/bytecode"
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
// say where each run went: every eligible run in the JIT (jit), only
// after JITHotRuns runs and the background compilation that the next run
// starts (auto), handlers that write a region always in
// the interpreter, counted as JIT fallbacks; one compilation per program.
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
			reads := install(t, n, 1, object(t, []bytecode.Region{{Name: "c", Size: 8}}, src{"value", hotLoop + valueAsm(5)}))
			writes := install(t, n, 1, object(t, []bytecode.Region{{Name: "v", Size: 8, Writable: true}}, src{"incr", hotLoop + incrAsm}))
			for _, p := range []*Program{reads, writes} {
				if h := p.Handlers()[0]; !h.Placement.OnHost() {
					t.Fatalf("%s placed %s, want a host core", h.Name, h.Placement)
				}
			}
			for i := range calls {
				if tier == TierAuto && i == JITHotRuns+1 {
					waitCompiled(t, n) // the run before started it in the background
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
				TierJIT:    {calls, calls, 1},
				TierAuto:   {calls - JITHotRuns - 1, calls - JITHotRuns, 1},
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
			if err := n.Uninstall(reads); err != nil {
				t.Fatal(err)
			}
			if codes := n.Stats().JIT.Codes; codes != 0 {
				t.Errorf("%d compiled programs held after the only one compiled was uninstalled", codes)
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

// waitCompiled waits until the node's JIT cache has finished a
// compilation, successful or not.
func waitCompiled(t *testing.T, n *NIC) {
	t.Helper()
	if jit.Available() != nil {
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for s := n.Stats().JIT; s.Compiles+s.Failures == 0; s = n.Stats().JIT {
		if time.Now().After(deadline) {
			t.Fatal("no compilation finished within 10 s")
		}
		time.Sleep(time.Millisecond)
	}
}
