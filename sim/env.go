package sim

import (
	"errors"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/vm"
)

// simEnv is the node as the ABI helpers see it during a run: the virtual
// clock, the helpers' random stream, and send and forward into the
// simulated network. The bulk helpers (hash, copy, send) are accounted
// as a core accounts them (spec/nic.md, Cost model: bulk helpers).
type simEnv struct {
	s       *sim
	node    int32
	handler int
	host    bool
	at      int64
	bulk    float64
	fwdNode int32
	fwdH    int32
	// hop is the run's place in its request's chain; −1 for a one-way
	// message, which is never forwarded.
	hop   int
	sends []int32 // one-way records made by the run
}

var errRefused = errors.New("sim: refused")

func (e *simEnv) begin(n int32, h int, host bool) {
	e.node, e.handler, e.host, e.at, e.bulk, e.fwdNode = n, h, host, e.s.now, 0, -1
	e.sends = e.sends[:0]
}

// end returns the bulk helpers' cost of the run.
func (e *simEnv) end() float64 { return e.bulk }

// flushSends schedules the run's one-way messages for the run's end.
func (e *simEnv) flushSends(at int64, epoch uint32) {
	for _, i := range e.sends {
		e.s.heap.push(event{at: at, kind: evSend, op: i, epoch: epoch})
	}
	e.sends = e.sends[:0]
}

func (e *simEnv) Now() uint64    { return uint64(e.at) }
func (e *simEnv) Random() uint64 { return e.s.helperRNG.Uint64() }
func (e *simEnv) Trace([]byte)   { e.s.st.traces++ }

// target maps a node id (1 … Nodes) and an object handler id to a node
// index and a handler, or refuses.
func (e *simEnv) target(node uint64, handler uint32) (int32, int32, error) {
	if node == 0 || node > uint64(len(e.s.nodes)) {
		return 0, 0, errRefused
	}
	h, ok := e.s.prog.byObjectID(handler)
	if !ok {
		return 0, 0, errRefused
	}
	return int32(node - 1), int32(h), nil
}

func (e *simEnv) Send(node uint64, handler uint32, payload []byte) error {
	n, h, err := e.target(node, handler)
	if err != nil {
		e.s.st.sends.Refused++
		return err
	}
	i := e.s.newOneway()
	w := &e.s.ow[i]
	w.src, w.dst, w.handler = e.node, n, h
	w.payload = append(w.payload[:0], payload...)
	e.sends = append(e.sends, i)
	e.s.st.sends.Sent++
	return nil
}

func (e *simEnv) Forward(node uint64, handler uint32) error {
	n, h, err := e.target(node, handler)
	if err == nil && (e.hop < 0 || e.hop+1 >= maxHops) {
		err = errRefused
	}
	if err != nil {
		e.s.st.sends.Refused++
		return err
	}
	e.fwdNode, e.fwdH = n, h
	return nil
}

// account adds n bytes a bulk helper moved at addr, if addr is in a
// region.
func (e *simEnv) account(addr, n uint64, write bool) {
	idx := int(addr>>32) - int(vm.RegionSegment(0))
	if n == 0 || idx < 0 || idx >= len(e.s.prog.nicmem) {
		return
	}
	e.bulk += e.s.model.Bulk(n, write, e.host, e.s.prog.nicmem[idx])
}

// helpers is vm.ABIHelpers over the env, with the bulk helpers
// accounted after they succeed.
func (e *simEnv) helpers() vm.HelperTable {
	t := vm.ABIHelpers(e)
	wrap := func(id int, f func(r1, r2, r3 uint64)) {
		inner := t[id]
		t[id] = func(m *vm.Machine, r1, r2, r3, r4, r5 uint64) (uint64, error) {
			v, err := inner(m, r1, r2, r3, r4, r5)
			if err == nil {
				f(r1, r2, r3)
			}
			return v, err
		}
	}
	wrap(bytecode.HelperHash, func(ptr, n, _ uint64) { e.account(ptr, n, false) })
	wrap(bytecode.HelperCopy, func(dst, src, n uint64) { e.account(src, n, false); e.account(dst, n, true) })
	send := t[bytecode.HelperSend]
	t[bytecode.HelperSend] = func(m *vm.Machine, node, h, ptr, n, r5 uint64) (uint64, error) {
		v, err := send(m, node, h, ptr, n, r5)
		if err == nil && v == 0 {
			e.account(ptr, n, false)
		}
		return v, err
	}
	return t
}
