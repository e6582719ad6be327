//go:build linux

package netns

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

// Pair is two namespaces, side 0 and side 1, and the veth between them.
type Pair struct {
	NS   [2]string     // namespace names
	Dev  [2]string     // the veth end in each
	Addr [2]netip.Addr // 198.18.N.1 and 198.18.N.2
	MAC  [2]net.HardwareAddr
}

var seq atomic.Int32

// New creates a pair for t, or skips t with the reason it cannot.
func New(t testing.TB) *Pair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("network namespaces need root")
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("the ip tool is not installed")
	}
	n := seq.Add(1)
	id := fmt.Sprintf("%d-%d", os.Getpid()%100_000, n)
	p := &Pair{
		NS:   [2]string{"naamx-a-" + id, "naamx-b-" + id},
		Dev:  [2]string{fmt.Sprintf("nxa%d_%d", os.Getpid()%10_000, n), fmt.Sprintf("nxb%d_%d", os.Getpid()%10_000, n)},
		Addr: [2]netip.Addr{netip.AddrFrom4([4]byte{198, 18, byte(n), 1}), netip.AddrFrom4([4]byte{198, 18, byte(n), 2})},
	}
	if out, err := exec.Command("ip", "netns", "add", p.NS[0]).CombinedOutput(); err != nil {
		t.Skipf("ip netns unavailable: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { exec.Command("ip", "netns", "del", p.NS[0]).Run() })
	p.must(t, "ip", "netns", "add", p.NS[1])
	t.Cleanup(func() { exec.Command("ip", "netns", "del", p.NS[1]).Run() })
	p.must(t, "ip", "link", "add", p.Dev[0], "type", "veth", "peer", "name", p.Dev[1])
	for i := range 2 {
		p.must(t, "ip", "link", "set", p.Dev[i], "netns", p.NS[i])
		p.must(t, "ip", "-n", p.NS[i], "addr", "add", p.Addr[i].String()+"/30", "dev", p.Dev[i])
		p.must(t, "ip", "-n", p.NS[i], "link", "set", p.Dev[i], "up")
		p.must(t, "ip", "-n", p.NS[i], "link", "set", "lo", "up")
		if err := p.Run(i, func() error {
			ifc, err := net.InterfaceByName(p.Dev[i])
			if err != nil {
				return err
			}
			p.MAC[i] = ifc.HardwareAddr
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func (p *Pair) must(t testing.TB, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v: %s", strings.Join(args, " "), err, out)
	}
}

// Exec runs a command inside side's namespace (ip netns exec).
func (p *Pair) Exec(side int, args ...string) ([]byte, error) {
	return exec.Command("ip", append([]string{"netns", "exec", p.NS[side]}, args...)...).CombinedOutput()
}

// Ifindex returns the index of side's veth end, in its namespace.
func (p *Pair) Ifindex(side int) (int, error) {
	var idx int
	err := p.Run(side, func() error {
		ifc, err := net.InterfaceByName(p.Dev[side])
		if err == nil {
			idx = ifc.Index
		}
		return err
	})
	return idx, err
}

// Run runs f on a thread moved into side's namespace, so that the
// sockets it opens and the links it attaches live there, and moves the
// thread back.
func (p *Pair) Run(side int, f func() error) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		return err
	}
	defer self.Close()
	target, err := os.Open("/var/run/netns/" + p.NS[side])
	if err != nil {
		return err
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("setns %s: %w", p.NS[side], err)
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
