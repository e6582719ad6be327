//go:build linux

package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

var seq atomic.Int32

// New creates a pair: two namespaces, a veth between them with an
// address at each end, both ends and loopback up. Close removes it.
func New() (p *Pair, err error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: network namespaces need root", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("%w: the ip tool is not installed", ErrUnavailable)
	}
	n := seq.Add(1)
	id := fmt.Sprintf("%d-%d", os.Getpid()%100_000, n)
	p = &Pair{
		NS:   [2]string{"naamx-a-" + id, "naamx-b-" + id},
		Dev:  [2]string{fmt.Sprintf("nxa%d_%d", os.Getpid()%10_000, n), fmt.Sprintf("nxb%d_%d", os.Getpid()%10_000, n)},
		Addr: [2]netip.Addr{netip.AddrFrom4([4]byte{198, 18, byte(n), 1}), netip.AddrFrom4([4]byte{198, 18, byte(n), 2})},
	}
	if out, err := exec.Command("ip", "netns", "add", p.NS[0]).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: ip netns: %v: %s", ErrUnavailable, err, strings.TrimSpace(string(out)))
	}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	steps := [][]string{{"ip", "netns", "add", p.NS[1]}, {"ip", "link", "add", p.Dev[0], "type", "veth", "peer", "name", p.Dev[1]}}
	for i := range 2 {
		steps = append(steps,
			[]string{"ip", "link", "set", p.Dev[i], "netns", p.NS[i]},
			[]string{"ip", "-n", p.NS[i], "addr", "add", p.Addr[i].String() + "/30", "dev", p.Dev[i]},
			[]string{"ip", "-n", p.NS[i], "link", "set", p.Dev[i], "up"},
			[]string{"ip", "-n", p.NS[i], "link", "set", "lo", "up"})
	}
	for _, args := range steps {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("netns: %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	for i := range 2 {
		if err := p.Run(i, func() error {
			ifc, err := net.InterfaceByName(p.Dev[i])
			if err != nil {
				return err
			}
			p.MAC[i] = ifc.HardwareAddr
			return nil
		}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Close removes both namespaces, and the veth with them.
func (p *Pair) Close() error {
	var errs []error
	for _, ns := range p.NS {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such file") {
			errs = append(errs, fmt.Errorf("netns: ip netns del %s: %v: %s", ns, err, out))
		}
	}
	return errors.Join(errs...)
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
