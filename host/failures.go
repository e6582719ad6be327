package host

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt"
)

// Failed runs are logged at warn level with the handler's name and the
// source position, as many as failureBurst at once and failureRate a
// second after that; the others are counted and the next line says how
// many it stands for, so that a flood of failing requests cannot flood
// the log.
const (
	failureBurst = 10
	failureRate  = 1.0 // lines a second once the burst is spent
)

// failureLog is a node's rate-limited log of failed runs. failed runs on
// the NIC's cores: it never waits for another core (a core that finds the
// log busy counts its failure as suppressed).
type failureLog struct {
	n          *Node
	suppressed atomic.Uint64

	now    func() time.Time
	mu     sync.Mutex
	tokens float64
	last   time.Time
}

func newFailureLog(n *Node) *failureLog {
	return &failureLog{n: n, now: time.Now, tokens: failureBurst, last: time.Now()}
}

func (f *failureLog) failed(fl nicrt.Failure) {
	if !f.mu.TryLock() {
		f.suppressed.Add(1)
		return
	}
	now := f.now()
	f.tokens = min(failureBurst, f.tokens+now.Sub(f.last).Seconds()*failureRate)
	f.last = now
	if f.tokens < 1 {
		f.mu.Unlock()
		f.suppressed.Add(1)
		return
	}
	f.tokens--
	f.mu.Unlock()
	attrs := []any{"handler", f.n.handlerName(fl.Handler)}
	if fl.Pos.Line > 0 {
		attrs = append(attrs, "at", fl.Pos.String())
	}
	if n := f.suppressed.Swap(0); n > 0 {
		attrs = append(attrs, "suppressed", n)
	}
	if fl.Status == nicrt.StatusFault {
		f.n.log.Warn("handler faulted", append(attrs, "fault", fl.Err)...)
		return
	}
	f.n.log.Warn("handler failed", append(attrs, "code", fl.Code, "error", bytecode.FailText(int64(fl.Code)))...)
}

// handlerName is what counters, metrics and callers call h:
// "PROGRAM.HANDLER" with the program's name among its tenant's
// (bytecode.ProgramLabels).
func (n *Node) handlerName(h nicrt.HandlerInfo) string {
	progs := n.nic.Programs(h.Tenant)
	ids := make([]uint64, len(progs))
	sources := make([]string, len(progs))
	for i, p := range progs {
		ids[i], sources[i] = p.ID, p.Source
	}
	for i, l := range bytecode.ProgramLabels(ids, sources) {
		if ids[i] == h.Program {
			return l + "." + h.Name
		}
	}
	return bytecode.ProgramName(h.Source) + "." + h.Name // uninstalled since
}
