package tests

import (
	"context"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/lang"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/transport/transporttest"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestSteerExactlyOnce: FETCH-ADD-like calls over a link that loses 10%
// of the datagrams, duplicates 5% and reorders 5% both ways, while the
// node's placement flips every millisecond between steering at host load
// 0 and 0.95, forcing the host and forcing the NIC: the retransmissions
// and duplicates of a request the policy would now place elsewhere never
// run again (the window and reply cache decide before placement), so the
// counter ends at exactly the number of calls and every old value is seen
// once.
func TestSteerExactlyOnce(t *testing.T) {
	n := 3000
	if testing.Short() {
		n = 600
	}
	const tenant = 1
	nic, err := nicrt.New(nicrt.Config{Paced: true, Placement: nicrt.PolicySteer, Steering: nicrt.SteerRequest})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	reg, err := nic.Register(tenant, "counter", 8, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	obj, err := compiler.Compile(lang.NewFileSet(), "steer.naam", []byte(testprog.SteerAddSource))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := nic.Install(tenant, obj)
	if err != nil {
		t.Fatal(err)
	}
	add := prog.Handlers()[0].ID

	secret := make([]byte, 32)
	for i := range secret {
		secret[i] = byte(i + 1)
	}
	key, err := wire.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	keys := wire.KeyMap{tenant: key}
	network := transporttest.NewNetwork(transporttest.MemConfig{})
	sconn, err := network.Listen(transport.Addr{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Serve(nic, []transport.Conn{sconn}, server.ServerConfig{Keys: keys, Node: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	faults := transporttest.Faults{Drop: 0.10, Duplicate: 0.05, Reorder: 0.05}
	const clients, inFlight = 4, 8
	var cls []*caller.Client
	for i := range clients {
		conn, err := network.Listen(transport.Addr{})
		if err != nil {
			t.Fatal(err)
		}
		lossy, err := transporttest.NewLossy(conn, transporttest.LossyConfig{Seed: uint64(i + 1), Send: faults, Recv: faults})
		if err != nil {
			t.Fatal(err)
		}
		cl, err := caller.Dial(lossy, sconn.LocalAddr(), caller.ClientConfig{Keys: keys, Node: uint32(i + 1), Server: 100,
			MaxTries: 30, Timeout: time.Millisecond, MinTimeout: 200 * time.Microsecond, MaxTimeout: 10 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		cls = append(cls, cl)
	}

	// The flipper: steer unloaded, steer with the host congested, host, nic.
	stop := make(chan struct{})
	flipped := make(chan int)
	go func() {
		flips := 0
		defer func() { flipped <- flips }()
		settings := []struct {
			p nicrt.PlacementPolicy
			l float64
		}{{nicrt.PolicySteer, 0}, {nicrt.PolicySteer, 0.95}, {nicrt.PolicyHost, 0}, {nicrt.PolicySteer, 0}, {nicrt.PolicyNIC, 0}}
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			s := settings[flips%len(settings)]
			if err := nic.SetHostLoad(s.l); err != nil {
				t.Error(err)
			}
			if err := nic.SetPlacement(s.p); err != nil {
				t.Error(err)
			}
			flips++
		}
	}()

	seen := make([]atomic.Bool, n)
	var next, ok atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, cl := range cls {
		for range inFlight {
			wg.Go(func() {
				for i := next.Add(1); i <= int64(n); i = next.Add(1) {
					out, err := cl.Call(ctx, tenant, add, binary.LittleEndian.AppendUint64(nil, uint64(i)))
					switch {
					case err == nil && len(out) == 8 && binary.LittleEndian.Uint64(out) < uint64(n) && !seen[binary.LittleEndian.Uint64(out)].Swap(true):
						ok.Add(1)
					case err == nil:
						t.Errorf("call %d replied %x: an old value twice or out of range", i, out)
					case errors.Is(err, caller.ErrTimeout):
						t.Errorf("call %d: %v", i, err)
					default:
						t.Errorf("call %d: %v", i, err)
					}
				}
			})
		}
	}
	wg.Wait()
	close(stop)
	flips := <-flipped

	counter := binary.LittleEndian.Uint64(reg.Bytes())
	if int(ok.Load()) != n || counter != uint64(n) {
		t.Fatalf("%d calls answered, counter %d; want %d each", ok.Load(), counter, n)
	}
	hs, _ := nic.HandlerStats(add)
	if hs.Runs != uint64(n) {
		t.Errorf("the handler ran %d times, want %d", hs.Runs, n)
	}
	ss := srv.Stats()
	var retx uint64
	for _, cl := range cls {
		retx += cl.Stats().Retransmits
	}
	// The run is only a test of moves if the placements did move.
	if hs.Placed[nicrt.PlaceNIC] == 0 || hs.Placed[nicrt.PlaceHostSteer] == 0 || hs.Placed[nicrt.PlaceHostForced] == 0 || retx == 0 {
		t.Errorf("placements %v, %d retransmissions: the run did not move requests between classes under retransmission", hs.Placed, retx)
	}
	t.Logf("%d calls, %d policy flips, placed %v, steer %+v; %d retransmissions, %d answered from the reply cache, %d duplicates of running requests dropped",
		n, flips, hs.Placed, hs.Steer, retx, ss.CacheHits, ss.DuplicatesRunning)
}
