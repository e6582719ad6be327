package tests

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/naam-project/naam/compiler"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/lang"
)

// clusterSource is the program the cluster test installs over the wire.
const clusterSource = `
region counters: [u64; 16] rw

handler add(slot: u64, by: u64) -> u64 {
    if slot >= 16 {
        fail(3)
    }
    counters[slot] += by
    return counters[slot]
}
`

// naamBinary builds cmd/naam once per test binary.
var naamBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "naam-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "naam")
	out, err := exec.Command("go", "build", "-o", bin, "../cmd/naam").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("go build ./cmd/naam: %v\n%s", err, out)
	}
	return bin, nil
})

// nodeProc is a `naam node` process.
type nodeProc struct {
	name, addr, gossip string
	cmd                *exec.Cmd
	stderr             *strings.Builder
	done               chan error
}

var readyLine = regexp.MustCompile(`^node (\S+) listening on (\S+) id=\d+ gossip=(\S+) metrics=\S+$`)

func startNodeProc(t *testing.T, bin, name string, args ...string) *nodeProc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"node", "--name", name, "--listen", "127.0.0.1:0", "--gossip", "127.0.0.1:0",
		"--region", "counters:128", "--log-level", "debug"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &nodeProc{name: name, cmd: cmd, stderr: &strings.Builder{}, done: make(chan error, 1)}
	cmd.Stderr = &lockedWriter{b: p.stderr}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", name, p.stderr)
		}
	})
	select {
	case l := <-lines:
		m := readyLine.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("%s printed %q", name, l)
		}
		p.addr, p.gossip = m[2], m[3]
	case err := <-p.done:
		t.Fatalf("%s exited before it was ready: %v\n%s", name, err, p.stderr)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s not ready after 30 s", name)
	}
	return p
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// TestCluster, the multi-process test: three `naam node`
// processes join through a seed; this process joins as a fourth node,
// installs a program on each over the wire, and runs calls and RDMA-style
// verbs against all three. One node is killed mid-run: calls to it end
// with errors within their deadline while the others keep serving; it is
// restarted under its name and called again. A SIGTERM shuts a node down
// gracefully.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes and waits for failure detection")
	}
	bin, err := naamBinary()
	if err != nil {
		t.Fatal(err)
	}
	seed := startNodeProc(t, bin, "p1")
	p2 := startNodeProc(t, bin, "p2", "--join", seed.gossip)
	p3 := startNodeProc(t, bin, "p3", "--join", seed.gossip)
	me, err := host.Start(host.Config{Name: "tester", Join: []string{seed.gossip}})
	if err != nil {
		t.Fatal(err)
	}
	defer me.Close()
	waitMembers(t, me, []string{"p1", "p2", "p3", "tester"})

	obj, err := compiler.Compile(lang.NewFileSet(), "cluster.naam", []byte(clusterSource))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	peers := map[string]*host.Peer{}
	for _, name := range []string{"p1", "p2", "p3"} {
		p, err := me.Peer(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Install(ctx, obj); err != nil {
			t.Fatal(err)
		}
		peers[name] = p
	}
	// The programs show in the gossip.
	waitFor(t, "programs in the member list", func() bool {
		for _, m := range me.Members() {
			if m.Name != "tester" && !slices.Equal(m.Programs, []string{"cluster"}) {
				return false
			}
		}
		return true
	})

	// Every node: calls and verbs, on the same counters.
	for name, p := range peers {
		var v uint64
		for i := range 50 {
			if err := p.Call(ctx, "add", struct{ Slot, By uint64 }{1, 2}, &v); err != nil || v != uint64(2*(i+1)) {
				t.Fatalf("%s add: %d %v", name, v, err)
			}
		}
		if old, err := p.FetchAdd(ctx, "counters", 8, 1); err != nil || old != 100 {
			t.Fatalf("%s fetch-add: %d %v", name, old, err)
		}
		if old, ok, err := p.CompareAndSwap(ctx, "counters", 8, 101, 7); err != nil || !ok || old != 101 {
			t.Fatalf("%s cas: %d %v %v", name, old, ok, err)
		}
		if b, err := p.Read(ctx, "counters", 8, 8); err != nil || b[0] != 7 {
			t.Fatalf("%s read: %x %v", name, b, err)
		}
		var he *host.HandlerError
		if err := p.Call(ctx, "add", struct{ Slot, By uint64 }{99, 1}, &v); !errors.As(err, &he) || he.Code != 3 {
			t.Fatalf("%s bad slot: %v", name, err)
		}
	}

	// Kill p3 while calls to everyone run; calls to p3 end with errors
	// within their deadline, the others keep answering.
	const deadline = 400 * time.Millisecond
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	okAfter := map[string]int{}
	var failures []string
	for name, p := range peers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, ccancel := context.WithTimeout(ctx, deadline)
				start := time.Now()
				var v uint64
				err := p.Call(cctx, "add", struct{ Slot, By uint64 }{2, 1}, &v)
				took := time.Since(start)
				ccancel()
				mu.Lock()
				switch {
				case err == nil:
					okAfter[name]++
				case took > deadline+time.Second: // a hang, not scheduling noise
					failures = append(failures, fmt.Sprintf("%s: %v after %v", name, err, took))
				case name != "p3":
					failures = append(failures, fmt.Sprintf("%s (alive): %v", name, err))
				}
				mu.Unlock()
				if err != nil {
					time.Sleep(20 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(100 * time.Millisecond)
	p3.cmd.Process.Kill()
	<-p3.done
	mu.Lock()
	okAfter = map[string]int{}
	mu.Unlock()
	waitFor(t, "p3 to be declared dead", func() bool { return !slices.Contains(memberNames(me), "p3") })
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d bad call endings, first: %s", len(failures), failures[0])
	}
	if okAfter["p1"] == 0 || okAfter["p2"] == 0 {
		t.Errorf("after the kill: %v calls answered", okAfter)
	}
	var v uint64
	if err := peers["p3"].Call(ctx, "add", struct{ Slot, By uint64 }{2, 1}, &v); !errors.Is(err, host.ErrPeerDown) {
		t.Errorf("call to the dead node: %v", err)
	}

	// p3 comes back under its name: a new process, new ports, no program.
	time.Sleep(300 * time.Millisecond)
	p3b := startNodeProc(t, bin, "p3", "--join", seed.gossip)
	waitFor(t, "p3 back in the member list", func() bool {
		for _, m := range me.Members() {
			if m.Name == "p3" && m.Addr.String() == p3b.addr {
				return true
			}
		}
		return false
	})
	np3, err := me.Peer(ctx, "p3")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := np3.Install(ctx, obj); err != nil {
		t.Fatal(err)
	}
	if err := np3.Call(ctx, "add", struct{ Slot, By uint64 }{1, 5}, &v); err != nil || v != 5 {
		t.Errorf("the restarted node: %d %v", v, err)
	}

	// SIGTERM: a graceful exit, and the others see p2 leave.
	p2.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p2.done:
		if err != nil {
			t.Errorf("p2 after SIGTERM: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("p2 did not exit after SIGTERM")
	}
	if !strings.Contains(p2.stderr.String(), "node stopped") {
		t.Errorf("p2's log lacks the shutdown:\n%s", p2.stderr)
	}
	waitFor(t, "p2 to leave", func() bool { return !slices.Contains(memberNames(me), "p2") })
	if err := peers["p1"].Call(ctx, "add", struct{ Slot, By uint64 }{1, 0}, &v); err != nil {
		t.Errorf("p1 after the others left: %v", err)
	}
}

func memberNames(n *host.Node) []string {
	var names []string
	for _, m := range n.Members() {
		names = append(names, m.Name)
	}
	return names
}

func waitMembers(t *testing.T, n *host.Node, want []string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("members %v", want), func() bool { return slices.Equal(memberNames(n), want) })
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
