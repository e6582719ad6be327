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
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

var seq atomic.Int32

// New creates a pair: two namespaces, a veth between them with an
// address at each end, both ends and loopback up. Close removes it.
func New() (_ *Pair, err error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: network namespaces need root", ErrUnavailable)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		return nil, fmt.Errorf("%w: the ip tool is not installed", ErrUnavailable)
	}
	n := seq.Add(1)
	id := fmt.Sprintf("%d-%d", os.Getpid()%100_000, n)
	p := &Pair{
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
	p.Queues = min(runtime.NumCPU(), maxQueues)
	q := strconv.Itoa(p.Queues)
	for _, args := range [][]string{{"ip", "netns", "add", p.NS[1]},
		{"ip", "link", "add", p.Dev[0], "numtxqueues", q, "numrxqueues", q, "type", "veth", "peer", "name", p.Dev[1], "numtxqueues", q, "numrxqueues", q}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			return nil, fmt.Errorf("netns: %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	if err := p.steerQueues(); err != nil {
		return nil, err
	}
	var steps [][]string
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

// maxQueues bounds the queues of each veth end (one per CPU).
const maxQueues = 64

// steerQueues gives each CPU its own queue at both ends (XPS: CPU i
// transmits on queue i), while the ends are still in this namespace,
// whose sysfs shows them: a frame a CPU sends lands in the receive queue
// of that number at the other end (veth_xmit), whose NAPI the same CPU
// runs in its softirq, so each CPU carries its own frames through the
// link and neither waits on the other's poll. An XDP_TX reply goes to
// the peer's queue of the CPU that sends it (veth_xdp_xmit) in any case.
func (p *Pair) steerQueues() error {
	if p.Queues < 2 {
		return nil // a device of one queue has no XPS
	}
	for _, dev := range p.Dev {
		for q := range p.Queues {
			f := fmt.Sprintf("/sys/class/net/%s/queues/tx-%d/xps_cpus", dev, q)
			if err := os.WriteFile(f, []byte(strconv.FormatUint(1<<q, 16)), 0); err != nil {
				return fmt.Errorf("netns: steer queue %d of %s to CPU %d: %w", q, dev, q, err)
			}
		}
	}
	return nil
}

// Close removes both namespaces, and the veth with them.
func (p *Pair) Close() error {
	var errs []error
	for _, ns := range p.NS {
		if out, err := exec.Command("ip", "netns", "del", ns).CombinedOutput(); err != nil && !strings.Contains(string(out), "No such file") {
			errs = append(errs, fmt.Errorf("netns: ip netns del %s: %v: %s", ns, err, out))
		}
	}
	// A pair that failed before its ends moved into the namespaces left
	// them here.
	if _, err := net.InterfaceByName(p.Dev[0]); err == nil {
		if out, err := exec.Command("ip", "link", "del", p.Dev[0]).CombinedOutput(); err != nil {
			errs = append(errs, fmt.Errorf("netns: ip link del %s: %v: %s", p.Dev[0], err, out))
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
