package tests

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"
	"github.com/naam-project/naam/nicrt/server"
	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// TestNICRTNetns is issue 5's namespace test: a responder and 4 callers
// in two network namespaces joined by a veth pair (198.18.0.1 and
// 198.18.0.2, the benchmarking range of RFC 2544), with an nftables rule in
// each namespace that drops 10% of the outgoing UDP datagrams. The
// FETCH-ADD count stays exact. Both nodes are sockets of this process,
// each opened inside its namespace (setns on a locked thread), so the
// datagrams cross two network stacks and the veth. NAAM_NETNS_N sets the
// number of FETCH-ADDs (default 20,000).
func TestNICRTNetns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	for _, tool := range []string{"ip", "nft"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	n := 20_000
	if s := os.Getenv("NAAM_NETNS_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1 {
			t.Fatalf("NAAM_NETNS_N=%q", s)
		}
	}
	id := os.Getpid() % 100_000
	nsA, nsB := fmt.Sprintf("naam-a-%d", id), fmt.Sprintf("naam-b-%d", id)
	vethA, vethB := fmt.Sprintf("naama%d", id), fmt.Sprintf("naamb%d", id)
	if out, err := exec.Command("ip", "netns", "add", nsA).CombinedOutput(); err != nil {
		t.Skipf("ip netns unavailable: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", nsA).Run() })
	must := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	must("ip", "netns", "add", nsB)
	t.Cleanup(func() { exec.Command("ip", "netns", "del", nsB).Run() })
	must("ip", "link", "add", vethA, "type", "veth", "peer", "name", vethB)
	must("ip", "link", "set", vethA, "netns", nsA)
	must("ip", "link", "set", vethB, "netns", nsB)
	for _, side := range []struct{ ns, dev, addr string }{{nsA, vethA, "198.18.0.1/30"}, {nsB, vethB, "198.18.0.2/30"}} {
		must("ip", "-n", side.ns, "addr", "add", side.addr, "dev", side.dev)
		must("ip", "-n", side.ns, "link", "set", side.dev, "up")
		must("ip", "-n", side.ns, "link", "set", "lo", "up")
		must("ip", "netns", "exec", side.ns, "nft", "add", "table", "inet", "naam")
		must("ip", "netns", "exec", side.ns, "nft", "add", "chain", "inet", "naam", "out", "{ type filter hook output priority 0; }")
		must("ip", "netns", "exec", side.ns, "nft", "add", "rule", "inet", "naam", "out",
			"meta", "l4proto", "udp", "numgen", "random", "mod", "100", "<", "10", "counter", "drop")
	}

	keys := wire.KeyMap{}
	key, err := wire.NewKey([]byte("naam netns test key, 32 bytes!!"))
	if err != nil {
		t.Fatal(err)
	}
	keys[1] = key
	nic, err := nicrt.New(nicrt.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer nic.Close()
	reg, err := nic.Register(1, "counter", 8, nicrt.RegionOptions{Writable: true})
	if err != nil {
		t.Fatal(err)
	}
	udp := func(ns, addr string) *transport.UDPConn {
		t.Helper()
		var c *transport.UDPConn
		err := nicrtInNetns(ns, func() error {
			var err error
			c, err = transport.ListenUDP(transport.UDPConfig{Addr: netip.MustParseAddrPort(addr), ReadBuffer: 1 << 20, WriteBuffer: 1 << 20})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	srvConn := udp(nsA, "198.18.0.1:0")
	srv, err := server.Serve(nic, []transport.Conn{srvConn}, server.ServerConfig{Node: 100, Keys: keys})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	const clients, inFlight = 4, 8
	seen := make([]atomic.Bool, n)
	var ok, timeouts, next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		cl, err := caller.Dial(udp(nsB, "198.18.0.2:0"), srvConn.LocalAddr(), caller.ClientConfig{
			Node: uint32(i + 1), Server: 100, Keys: keys, MaxTries: 30, MaxTimeout: 10 * time.Millisecond,
			// A lossy link: recover losses sooner than the defaults,
			// which suit a lossless one.
			Timeout: time.Millisecond, MinTimeout: 200 * time.Microsecond})
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for range inFlight {
			wg.Go(func() {
				for next.Add(1) <= int64(n) {
					old, err := cl.FetchAdd(context.Background(), 1, reg.Ref(), 0, 1)
					switch {
					case err == nil && old < uint64(n) && !seen[old].Swap(true):
						ok.Add(1)
					case err == nil:
						t.Errorf("FETCH-ADD returned %d twice or out of range", old)
					case errors.Is(err, caller.ErrTimeout):
						timeouts.Add(1)
					default:
						t.Errorf("FETCH-ADD: %v", err)
					}
				}
			})
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Minute):
		t.Fatal("calls still running after 5 minutes")
	}
	took := time.Since(start)
	counter := atomic.LoadUint64((*uint64)(unsafe.Pointer(&reg.Bytes()[0])))
	if counter != uint64(n) || ok.Load() != int64(n) {
		t.Errorf("counter %d after %d FETCH-ADDs (%d replies, %d timeouts)", counter, n, ok.Load(), timeouts.Load())
	}
	dropped := 0
	for _, ns := range []string{nsA, nsB} {
		out, err := exec.Command("ip", "netns", "exec", ns, "nft", "list", "chain", "inet", "naam", "out").CombinedOutput()
		if err != nil {
			t.Fatalf("nft list: %v: %s", err, out)
		}
		if m := regexp.MustCompile(`counter packets (\d+)`).FindSubmatch(out); m != nil {
			k, _ := strconv.Atoi(string(m[1]))
			dropped += k
		}
	}
	if dropped == 0 {
		t.Error("the nftables rules dropped nothing")
	}
	s := srv.Stats()
	t.Logf("%d FETCH-ADDs across the veth in %v; nftables dropped %d datagrams; the server answered %d retransmissions from its cache and dropped %d duplicates of running requests",
		n, took.Round(time.Millisecond), dropped, s.CacheHits, s.DuplicatesRunning)
}

// nicrtInNetns runs f on a thread moved into the named network namespace, so
// that the sockets f opens live there, and moves the thread back.
func nicrtInNetns(name string, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return err
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + name)
	if err != nil {
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", name, err)
	}
	ferr := f()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread is in the wrong namespace: leave it locked, so that
		// it dies with this goroutine rather than serve others.
		runtime.LockOSThread()
		return fmt.Errorf("setns back: %w", err)
	}
	return ferr
}
