package nicrt

import (
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// How host cores run a program under a JIT tier (Config.Tier): chosen
// once per program, compiled by the node's shared jit.Cache, and the
// instances of uninstalled programs freed on each core.

// hostExec is how host cores run a program under a JIT tier, chosen once
// for the program: its compiled code, or the interpreter where the JIT
// cannot take it (why says why), whose runs count as JIT fallbacks.
type hostExec struct {
	x   vm.Executable
	jit bool
	why error
}

// executable returns what runs h on this core: the interpreter on NIC
// cores and under TierInterp; on the host cores of a JIT tier, the
// program's hostExec once chosen (chooseHost), the interpreter before.
func (c *core) executable(h *handler) vm.Executable {
	p := h.prog
	if c.jit == nil {
		return p.vm
	}
	e := p.host.Load()
	if e == nil {
		if e = c.chooseHost(h); e == nil {
			return p.vm
		}
	}
	if e.jit {
		c.ctr.jitRuns.Add(1)
	} else {
		c.ctr.jitFallbacks.Add(1)
	}
	return e.x
}

// chooseHost makes the program's choice for host cores, or returns nil
// while there is none yet: TierJIT compiles on the program's first host
// run, which waits; TierAuto, once the handler has run JITHotRuns times,
// starts the compilation in the background and interprets (uncounted)
// until the code is ready. A program the JIT cannot take (jitRefusal), or
// whose compilation failed, stays with the interpreter.
func (c *core) chooseHost(h *handler) *hostExec {
	p := h.prog
	auto := c.n.cfg.Tier == TierAuto
	if auto && h.ctr.runs.Load() < JITHotRuns {
		return nil
	}
	e := &hostExec{x: p.vm}
	if e.why = p.jitRefusal(); e.why == nil {
		get := c.jit.Get
		if auto {
			get = c.jit.Ready // interpret while it compiles
		}
		code, err := get(p, c.n.cfg.HostUnchecked, p.jitLoad)
		switch {
		case err != nil:
			e.why = err
		case code == nil:
			return nil
		default:
			e.x, e.jit = code, true
		}
	}
	p.host.CompareAndSwap(nil, e)
	return p.host.Load()
}

// jitRefusal says why the JIT cannot run p, or nil: the tier is
// unavailable (no cgo), p writes a region the JIT could only copy per run
// (a Memory without a file: its writes and atomics would not be shared
// with other cores during the run), or p's regions do not fit in one
// linear memory.
func (p *Program) jitRefusal() error {
	if err := jit.Available(); err != nil {
		return err
	}
	for _, i := range p.Report.RegionsWritten {
		if !jit.InPlace(p.regions[i].backing) {
			return fmt.Errorf("nicrt: region %q cannot be mapped in place, and the program writes it", p.regions[i].Name)
		}
	}
	var mapped uint64 // in place (whole pages), or copied in for each run
	for _, r := range p.regions {
		if _, size := r.backing.FD(); jit.InPlace(r.backing) {
			mapped += uint64(size)
		} else {
			mapped += r.Size()
		}
	}
	if mapped > jit.MaxMapped {
		return fmt.Errorf("nicrt: the program's regions take %d bytes, more than one linear memory maps (%d)", mapped, uint64(jit.MaxMapped))
	}
	return nil
}

// retire has the core's machine free its instance of x, an uninstalled
// program's executable: now if the core is idle, else before its next run.
func (c *core) retire(x vm.Executable) {
	if c.busy.TryLock() {
		c.m.Forget(x)
		c.busy.Unlock()
		return
	}
	c.retiredMu.Lock()
	c.retired = append(c.retired, x)
	c.retiredMu.Unlock()
	c.hasRetired.Store(true)
}

// forgetRetired frees the instances of the executables retire queued;
// c.busy is held.
func (c *core) forgetRetired() {
	c.retiredMu.Lock()
	list := c.retired
	c.retired = nil
	c.hasRetired.Store(false)
	c.retiredMu.Unlock()
	for _, x := range list {
		c.m.Forget(x)
	}
}

// jitLoad is what the JIT cache compiles for p: its instructions and
// every handler's entry.
func (p *Program) jitLoad() (asm.Instructions, []int, error) {
	entries := make([]int, len(p.handlers))
	for i, h := range p.handlers {
		entries[i] = h.entry
	}
	return p.vm.Insns(), entries, nil
}
