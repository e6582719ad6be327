package nicrt

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/cputime"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/vm"
)

// TestPacerCharge follows a core's virtual clock through runs: it sleeps
// only when ahead by more than paceSlack, makes good an oversleep with the
// messages that arrived meanwhile, and restarts at a late arrival.
func TestPacerCharge(t *testing.T) {
	us := func(n int64) int64 { return n * 1000 }
	type step struct {
		arrival, now int64   // µs
		d            float64 // ns
		wantSleep    time.Duration
		wantClock    int64 // µs
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"short runs batch their sleep", []step{
			{0, 0, 100e3, 0, 100},
			{0, 1, 100e3, 0, 200},
			{1, 2, 100e3, 298 * time.Microsecond, 300},
		}},
		{"oversleep is made good", []step{
			{0, 0, 500e3, 500 * time.Microsecond, 500},
			// Woke 900 µs later than asked, to messages that arrived while
			// it slept: they run at once until the clock is ahead again.
			{300, 1400, 500e3, 0, 1000},
			{400, 1400, 500e3, 0, 1500},
			{500, 1400, 500e3, 600 * time.Microsecond, 2000},
		}},
		{"a late arrival restarts the clock", []step{
			{0, 0, 10e3, 0, 10},
			{5000, 5000, 300e3, 300 * time.Microsecond, 5300},
		}},
		{"credit is bounded", []step{
			{0, 0, 10e3, 0, 10},
			{100, 9000, 10e3, 0, 4010},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p pacer
			for i, s := range tc.steps {
				got := p.charge(us(s.arrival), us(s.now), s.d)
				if got != s.wantSleep || p.clock != us(s.wantClock) {
					t.Errorf("step %d: sleep %v clock %d µs, want %v and %d µs", i, got, p.clock/1000, s.wantSleep, s.wantClock)
				}
			}
		})
	}
}

// pacedWorkload is a handler with its setup, for the paced tests and
// benchmarks: null, the KV GET and a 64-hop chase.
type pacedWorkload struct {
	name    string
	msg     Message
	nicCore bool // placed on a NIC core
}

func pacedWorkloads(t testing.TB, n *NIC) []pacedWorkload {
	t.Helper()
	null := install(t, n, 1, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))

	kv, err := testprog.KVGetHandObject()
	if err != nil {
		t.Fatal(err)
	}
	table := register(t, n, 1, "table", testprog.KVGetTableSize, RegionOptions{})
	kvp := install(t, n, 1, kv)
	key := []byte("0123456789abcdef")
	b := table.Bytes()[(vm.FNV1a(key)%testprog.KVGetBuckets)*testprog.KVGetBucketSize:]
	copy(b, key)
	b[16] = 1
	binary.LittleEndian.PutUint32(b[20:], 5)

	src, err := os.ReadFile("../examples/chase/chase.naam")
	if err != nil {
		t.Fatal(err)
	}
	chase, err := compiler.Compile(lang.NewFileSet(), "chase.naam", src)
	if err != nil {
		t.Fatal(err)
	}
	const nodes, nodeSize = 4096, 24
	list := register(t, n, 1, "chase", nodes*nodeSize, RegionOptions{})
	for i := range nodes {
		binary.LittleEndian.PutUint32(list.Bytes()[i*nodeSize+16:], uint32((i+1)%nodes))
	}
	cp := install(t, n, 1, chase)
	walk := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, 0), 64)
	return []pacedWorkload{
		{"null", Message{Tenant: 1, Handler: id(t, null, "null"), SrcNode: 1}, true},
		{"kv-get", Message{Tenant: 1, Handler: id(t, kvp, "get"), SrcNode: 1, Payload: key}, true},
		{"chase-64", Message{Tenant: 1, Handler: id(t, cp, "walk"), SrcNode: 1, Payload: walk}, true},
	}
}

// drive keeps window messages outstanding until count have completed and
// returns the wall time it took.
func drive(t testing.TB, n *NIC, msg Message, count, window int) time.Duration {
	sem := make(chan struct{}, window)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed error
	done := SinkFunc(func(r Reply) {
		if r.Status != StatusOK {
			mu.Lock()
			failed = fmt.Errorf("%s: %v", r.Status, r.Err)
			mu.Unlock()
		}
		<-sem
		wg.Done()
	})
	start := time.Now()
	for i := range count {
		sem <- struct{}{}
		wg.Add(1)
		msg.RequestID = uint64(i)
		n.Submit(&msg, done)
	}
	wg.Wait()
	if failed != nil {
		t.Fatal(failed)
	}
	return time.Since(start)
}

// TestPacedNeverFaster: a paced NIC core never completes its runs faster
// than their modelled service time allows (less the slack it may run
// ahead), and a verb costs it nothing. The upper side, the throughput
// reaching the model, is BenchmarkPaced's to measure.
func TestPacedNeverFaster(t *testing.T) {
	n := newNIC(t, Config{Paced: true, NICCores: 1, HostCores: -1})
	ws := pacedWorkloads(t, n)
	for _, w := range ws[1:] {
		t.Run(w.name, func(t *testing.T) {
			before := n.Stats().NIC
			const count = 2000
			wall := drive(t, n, w.msg, count, 32)
			after := n.Stats().NIC
			model := time.Duration(after.ModelNanos - before.ModelNanos)
			if after.Runs-before.Runs != count {
				t.Fatalf("%d runs", after.Runs-before.Runs)
			}
			if wall < model-paceCredit-paceSlack {
				t.Errorf("%d runs in %v, modelled %v: faster than the model", count, wall, model)
			}
			t.Logf("%d runs in %v, modelled %v", count, wall, model)
		})
	}
	r := register(t, n, 1, "c", 8, RegionOptions{Writable: true})
	fa := Message{Tenant: 1, Handler: HandlerFetchAdd, Payload: appendFetchAdd(r.Ref())}
	if rep := n.Call(&fa); rep.Status != StatusOK {
		t.Fatalf("fetch-add: %+v", rep)
	}
	if l := n.Load(); l.NIC.ServiceNanos >= n.nic[0].load.serviceNanos()+1 {
		t.Errorf("service EWMA %v", l.NIC.ServiceNanos)
	}
}

// BenchmarkPaced measures a paced NIC core's throughput on the null, KV
// GET and chase handlers against 1 / their modelled service time, with 32
// and 1,000 messages outstanding; it also reports the CPU this process
// used per message (a core that spun would use a CPU's worth). Run it
// long: go test ./nicrt -run '^$' -bench Paced -benchtime 40000x.
func BenchmarkPaced(b *testing.B) {
	n := newNIC(b, Config{Paced: true, NICCores: 1, HostCores: -1})
	ws := pacedWorkloads(b, n)
	for _, window := range []int{32, 1000} {
		for _, w := range ws {
			b.Run(fmt.Sprintf("%s/window=%d", w.name, window), func(b *testing.B) {
				before := n.Stats().NIC
				cpu0 := cputime.Process()
				b.ResetTimer()
				wall := drive(b, n, w.msg, b.N, window)
				b.StopTimer()
				cpu := cputime.Process() - cpu0
				after := n.Stats().NIC
				runs := float64(after.Runs - before.Runs)
				modelPer := float64(after.ModelNanos-before.ModelNanos) / runs
				got := runs / wall.Seconds()
				want := 1e9 / modelPer
				b.ReportMetric(got, "msgs/s")
				b.ReportMetric(want, "model_msgs/s")
				b.ReportMetric(got/want, "ratio")
				b.ReportMetric(modelPer, "model_ns/msg")
				b.ReportMetric(float64(cpu)/runs, "cpu_ns/msg")
			})
		}
	}
}

func appendFetchAdd(ref RegionRef) []byte {
	b := binary.LittleEndian.AppendUint64(nil, ref.Key)
	b = binary.LittleEndian.AppendUint32(b, ref.ID)
	b = binary.LittleEndian.AppendUint32(b, 8)
	b = binary.LittleEndian.AppendUint64(b, 0)
	return binary.LittleEndian.AppendUint64(b, 1)
}
