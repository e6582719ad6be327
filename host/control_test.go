package host

import (
	"bytes"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/syncbuf"

	"github.com/naam-project/naam/nicrt"
)

// A tenant manages a node over the control plane: regions registered,
// loaded and dumped, programs installed (twice: their names gain the
// program id), listed, found and uninstalled, by a caller that dialed the
// node by host name.
func TestPeerControl(t *testing.T) {
	a, err := Start(Config{Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx := testCtx(t)
	addr := strings.Replace(a.Addr().String(), "127.0.0.1", "localhost", 1)
	p, err := Dial(ctx, addr, 0, nil, 0)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer p.Close()
	if err := p.Register(ctx, "counters", 4000, RegionOptions{Writable: true}); err != nil {
		t.Fatal(err)
	}
	if err := p.Register(ctx, "table", 64, RegionOptions{NICMem: true}); err != nil {
		t.Fatal(err)
	}
	rs := p.Regions()
	if len(rs) != 2 || rs[0].Name != "counters" || rs[0].Size != 4000 || !rs[0].Writable || rs[1].Name != "table" || !rs[1].NICMem || rs[1].Writable {
		t.Errorf("regions: %+v", rs)
	}

	// Ranges over several READs and WRITEs.
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := p.WriteRange(ctx, "counters", 500, data); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := p.ReadRange(ctx, &got, "counters", 500, 3000); err != nil || !bytes.Equal(got.Bytes(), data) {
		t.Fatalf("read back %d bytes, %v", got.Len(), err)
	}
	for _, tc := range []struct {
		off uint64
		n   int
	}{{1001, 3000}, {4000, 1}, {1 << 40, 0}} {
		if err := p.WriteRange(ctx, "counters", tc.off, make([]byte, tc.n)); !errors.Is(err, ErrRange) {
			t.Errorf("write of %d at %d: %v, want ErrRange", tc.n, tc.off, err)
		}
	}
	if err := p.ReadRange(ctx, &got, "counters", 3999, 2); !errors.Is(err, ErrRange) {
		t.Errorf("read past the end: %v", err)
	}
	if err := p.WriteRange(ctx, "table", 0, []byte{1}); !errors.Is(err, ErrRejected) {
		t.Errorf("write to a read-only region: %v", err)
	}
	if _, err := p.Region(ctx, "nope"); !errors.Is(err, ErrNoRegion) || !strings.Contains(err.Error(), "it has counters, table") {
		t.Errorf("an unknown region: %v", err)
	}

	one, err := p.Install(ctx, demoObject(t))
	if err != nil {
		t.Fatal(err)
	}
	if one.Name != "demo" || one.Source != "demo.naam" || len(one.Handlers) != 3 || one.Handlers[0].String() != "demo.incr" {
		t.Errorf("installed %+v", one)
	}
	two, err := p.Install(ctx, demoObject(t))
	if err != nil {
		t.Fatal(err)
	}
	progs := p.Programs()
	if len(progs) != 2 || progs[0].Name != "demo#"+itoa(one.ID) || progs[1].Name != "demo#"+itoa(two.ID) {
		t.Fatalf("programs: %+v", progs)
	}
	if h := progs[1].Handlers[0]; h.String() != "demo#"+itoa(two.ID)+".incr" || h.ProgramID != two.ID {
		t.Errorf("handler of the second copy: %s (program %d)", h, h.ProgramID)
	}
	var v uint64
	if err := p.Call(ctx, "demo#"+itoa(two.ID)+".incr", struct{ Slot, By uint64 }{1, 5}, &v); err != nil || v != 5 {
		t.Errorf("call by the qualified name: %d %v", v, err)
	}
	if _, err := p.Program(ctx, "demo"); !errors.Is(err, ErrNoProgram) || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("an ambiguous program: %v", err)
	}
	for _, name := range []string{"demo#" + itoa(two.ID), itoa(two.ID)} {
		if pr, err := p.Program(ctx, name); err != nil || pr.ID != two.ID {
			t.Errorf("program %q: %+v %v", name, pr, err)
		}
	}
	if err := p.Uninstall(ctx, one.ID); err != nil {
		t.Fatal(err)
	}
	if pr, err := p.Program(ctx, "demo.naam"); err != nil || pr.ID != two.ID || pr.Name != "demo" {
		t.Errorf("after the uninstall: %+v %v", pr, err)
	}
	if err := p.Uninstall(ctx, one.ID); !errors.Is(err, nicrt.ErrControlFailed) {
		t.Errorf("uninstall twice: %v", err)
	}
	if _, err := p.Program(ctx, "nope"); !errors.Is(err, ErrNoProgram) || !strings.Contains(err.Error(), "it has demo") {
		t.Errorf("an unknown program: %v", err)
	}
	if _, err := Dial(ctx, "localhost", 0, nil, 0); err == nil || !strings.Contains(err.Error(), "want HOST:PORT") {
		t.Errorf("dial without a port: %v", err)
	}
}

// Failed runs are logged with the handler's name and the source
// position, at most failureBurst at once, then failureRate a second; the
// next line counts the ones left out.
func TestFailureLog(t *testing.T) {
	var out syncbuf.Buffer
	n := startDemo(t, Config{Name: "f", Logger: slog.New(slog.NewTextHandler(&out, nil))})
	ctx := testCtx(t)
	p, err := n.Dial(ctx, n.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	err = p.Call(ctx, "incr", struct{ Slot, By uint64 }{99, 1}, nil)
	var he *HandlerError
	if !errors.As(err, &he) || he.Code != 7 || he.Pos != "demo.naam:8:9" {
		t.Fatalf("call: %v, want code 7 at demo.naam:8:9", err)
	}
	const line = `msg="handler failed" node=f handler=demo.incr at=demo.naam:8:9 code=7 error="failed with code 7"`
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(out.String(), line); {
		if time.Now().After(deadline) {
			t.Fatalf("no line %s in the log:\n%s", line, out.String())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// The limit, on a clock of the test's.
	clock := time.Unix(1000, 0)
	log := newFailureLog(n)
	log.now, log.last = func() time.Time { return clock }, clock
	f := nicrt.Failure{Handler: n.NIC().Programs(1)[0].Handlers()[0], Status: nicrt.StatusError, Code: 7}
	out.Reset()
	for range 25 {
		log.failed(f)
	}
	if got := strings.Count(out.String(), "handler failed"); got != failureBurst {
		t.Errorf("%d lines for 25 failures at once, want %d", got, failureBurst)
	}
	out.Reset()
	clock = clock.Add(2 * time.Second)
	log.failed(f)
	log.failed(f)
	log.failed(f)
	if got := out.String(); strings.Count(got, "handler failed") != 2 || !strings.Contains(got, "suppressed=15") {
		t.Errorf("two seconds later: %q, want two lines, the first counting the 15 left out", got)
	}
}

func itoa(id uint64) string { return strconv.FormatUint(id, 10) }
