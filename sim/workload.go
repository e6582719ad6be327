package sim

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/naam-project/naam/bytecode"
	ycsb "github.com/naam-project/naam/internal/bench/workload"
	"github.com/naam-project/naam/nicrt"
)

// workload is what the clients do and what the nodes hold.
type workload interface {
	// object compiles the workload's program.
	object() (*bytecode.Object, error)
	// bind finds the handlers and layouts it uses in the loaded program.
	bind(p *program) error
	// setup draws what the whole run shares (the chase's lists).
	setup(s *sim, r *rand.Rand) error
	// load fills node n's regions on its first message.
	load(s *sim, n int32)
	// next fills o: its target node, handler, payload, check and kind.
	next(s *sim, o *op)
	// check says whether o's reply (s.ops' o.reply, status, code) is
	// what the workload expects.
	check(o *op) bool
	// lost hears of a one-way message that no copy of reached its node.
	lost(payload []byte, handler int32)
	// report adds the workload's own figures.
	report(s *sim, r *Result)
}

func newWorkload(sc Scenario, progs Programs) (workload, error) {
	keys, err := ycsb.DistributionByName(sc.Workload.Keys)
	if err != nil {
		return nil, fmt.Errorf("sim: workload.keys: %w", err)
	}
	switch sc.Workload.Kind {
	case KindKV:
		mix, err := ycsb.MixByName(sc.Workload.Mix)
		if err != nil {
			return nil, fmt.Errorf("sim: workload.mix: %w", err)
		}
		if progs.KV == nil {
			return nil, errors.New("sim: the kv workload needs Programs.KV")
		}
		return &kvLoad{sc: sc, compile: progs.KV, mix: mix, dist: keys}, nil
	case KindChase:
		return &chaseLoad{sc: sc, dist: keys}, nil
	case KindLedger:
		if progs.Ledger == nil {
			return nil, errors.New("sim: the ledger workload needs Programs.Ledger")
		}
		return &ledgerLoad{sc: sc, compile: progs.Ledger}, nil
	case KindShift:
		if progs.Shift == nil {
			return nil, errors.New("sim: the shift workload needs Programs.Shift")
		}
		return &shiftLoad{obj: progs.Shift}, nil
	}
	return nil, fmt.Errorf("sim: workload.kind: %q is not kv, chase, ledger or shift", sc.Workload.Kind)
}

// The key-value store: records sharded by record mod Nodes, each node's
// table sized for its shard at a load of at most 1/4 (examples/kv keeps its tables there) (examples/kv's
// kv.naam with BUCKETS for the shard), loaded by its own put handler.

type kvLoad struct {
	sc            Scenario
	compile       func(buckets, probes, value uint32) (*bytecode.Object, error)
	mix           ycsb.Mix
	dist          ycsb.Distribution
	keys          ycsb.KeyGen
	get, put      int
	valueOff      int
	vlenOff       int
	reads, writes uint64
	key           [16]byte
	value         []byte
}

const kvProbes = 16

func (w *kvLoad) object() (*bytecode.Object, error) {
	shard := (w.sc.Workload.Records + w.sc.Nodes - 1) / w.sc.Nodes
	buckets := uint32(1) << bits.Len(uint(max(4*shard, kvProbes)-1))
	obj, err := w.compile(buckets, kvProbes, uint32(w.sc.Workload.ValueSize))
	if err != nil {
		return nil, fmt.Errorf("sim: kv: %w", err)
	}
	return obj, nil
}

func (w *kvLoad) bind(p *program) (err error) {
	if w.get, err = p.handlerIndex("get"); err != nil {
		return err
	}
	if w.put, err = p.handlerIndex("put"); err != nil {
		return err
	}
	if w.valueOff, _, err = p.handlers[w.get].resultField("value"); err != nil {
		return err
	}
	w.vlenOff, _, err = p.handlers[w.get].resultField("vlen")
	w.value = make([]byte, w.sc.Workload.ValueSize)
	return err
}

func (w *kvLoad) setup(s *sim, _ *rand.Rand) error {
	w.keys = w.dist.New(uint64(w.sc.Workload.Records), s.workRNG)
	return nil
}

// keyOf is record k's key: "user" and k in 12 digits (examples/kv's
// KeyOf).
func (w *kvLoad) keyOf(k uint64) []byte {
	copy(w.key[:], "user")
	for i := 15; i >= 4; i-- {
		w.key[i] = byte('0' + k%10)
		k /= 10
	}
	return w.key[:]
}

// valueOf is record k's value at version v: k, then v, then zeros.
func (w *kvLoad) valueOf(k, v uint64) []byte {
	clear(w.value)
	binary.LittleEndian.PutUint64(w.value, k)
	if len(w.value) >= 16 {
		binary.LittleEndian.PutUint64(w.value[8:], v)
	}
	return w.value
}

func (w *kvLoad) load(s *sim, n int32) {
	var buf []byte
	for k := uint64(n); k < uint64(w.sc.Workload.Records); k += uint64(w.sc.Nodes) {
		req := s.prog.request(w.put, buf).bytes(0, w.keyOf(k)).u(1, uint64(len(w.value))).bytes(2, w.valueOf(k, 0))
		buf = req.buf
		if _, err := s.loadRun(n, w.put, req.buf); err != nil && s.st.err == nil {
			s.st.err = err
		}
	}
}

const (
	opRead uint8 = iota
	opUpdate
)

func (w *kvLoad) next(s *sim, o *op) {
	k := w.keys.Next()
	o.target, o.check = int32(k%uint64(w.sc.Nodes)), k
	if w.mix.Next(s.workRNG) == ycsb.OpRead {
		o.kind, o.handler = opRead, int32(w.get)
		o.payload = s.prog.request(w.get, o.payload).bytes(0, w.keyOf(k)).buf
		w.reads++
		return
	}
	o.kind, o.handler = opUpdate, int32(w.put)
	o.payload = s.prog.request(w.put, o.payload).bytes(0, w.keyOf(k)).u(1, uint64(len(w.value))).bytes(2, w.valueOf(k, uint64(s.issued))).buf
	w.writes++
}

func (w *kvLoad) check(o *op) bool {
	if o.status != nicrt.StatusOK {
		return false
	}
	if o.kind == opUpdate {
		return true
	}
	r := o.reply
	return len(r) >= w.valueOff+8 && binary.LittleEndian.Uint32(r[w.vlenOff:]) == uint32(len(w.value)) &&
		binary.LittleEndian.Uint64(r[w.valueOff:]) == o.check
}

func (w *kvLoad) lost([]byte, int32) {}

func (w *kvLoad) report(s *sim, r *Result) {
	r.KV = &KVResult{Records: w.sc.Workload.Records, Mix: w.mix.Name, Keys: w.dist.Name, Reads: w.reads, Updates: w.writes,
		Buckets: int(s.prog.regions[0].Size / (32 + 8 + uint64(w.sc.Workload.ValueSize)))}
}

// The chase: Lists lists of Hops elements, each on Hops distinct nodes
// drawn at setup; a walk is one call to the list's first node, whose
// handler forwards it along (chain.naam). List j's elements sit in slot
// j mod slots of their nodes' links regions, slots being a few times the
// elements a node holds on average (at least 8, at most the lists' power
// of two); setup draws each list's nodes among those whose slot is free,
// so that a node's region is a few hundred bytes whatever the lists.

type chaseLoad struct {
	sc    Scenario
	dist  ycsb.Distribution
	keys  ycsb.KeyGen
	slots int
	paths []int32 // list j's nodes: paths[j*hops : (j+1)*hops]
	// at lists every element by node: (node, list, position), sorted.
	at       []chaseElem
	hop, set int
}

type chaseElem struct{ node, list, pos int32 }

func (w *chaseLoad) object() (*bytecode.Object, error) {
	k, lists, nodes := w.sc.Workload.Hops, w.sc.Workload.Lists, w.sc.Nodes
	perNode := (lists*k + nodes - 1) / nodes
	w.slots = max(8, min(1<<bits.Len(uint(4*perNode-1)), 1<<bits.Len(uint(lists-1))))
	return compileChain(w.slots)
}

func (w *chaseLoad) bind(p *program) (err error) {
	if w.hop, err = p.handlerIndex("hop"); err != nil {
		return err
	}
	w.set, err = p.handlerIndex("set")
	return err
}

func (w *chaseLoad) setup(s *sim, r *rand.Rand) error {
	k, lists, nodes := w.sc.Workload.Hops, w.sc.Workload.Lists, w.sc.Nodes
	used := make([]uint64, (nodes*w.slots+63)/64) // node n's slot i: bit n*slots+i
	w.paths = make([]int32, 0, lists*k)
	for j := range lists {
		slot := j % w.slots
		start := len(w.paths)
		for tries := 0; len(w.paths)-start < k; tries++ {
			if tries > 64*nodes {
				return fmt.Errorf("sim: workload.lists: no room for list %d on %d nodes of %d slots", j, nodes, w.slots)
			}
			n := int32(r.IntN(nodes))
			bit := int(n)*w.slots + slot
			if used[bit/64]&(1<<(bit%64)) != 0 || slices.Contains(w.paths[start:], n) {
				continue
			}
			used[bit/64] |= 1 << (bit % 64)
			w.paths = append(w.paths, n)
		}
		for i, n := range w.paths[start:] {
			w.at = append(w.at, chaseElem{n, int32(j), int32(i)})
		}
	}
	slices.SortFunc(w.at, func(a, b chaseElem) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.list, b.list))
	})
	w.keys = w.dist.New(uint64(lists), s.workRNG)
	return nil
}

func chaseValue(list, pos int32) uint64 { return uint64(list)<<8 | uint64(pos) }

func (w *chaseLoad) load(s *sim, n int32) {
	k := w.sc.Workload.Hops
	i, _ := slices.BinarySearchFunc(w.at, n, func(e chaseElem, n int32) int { return cmp.Compare(e.node, n) })
	var buf []byte
	for ; i < len(w.at) && w.at[i].node == n; i++ {
		e := w.at[i]
		next := uint64(0)
		if int(e.pos)+1 < k {
			next = uint64(w.paths[int(e.list)*k+int(e.pos)+1]) + 1
		}
		req := s.prog.request(w.set, buf).u(0, uint64(e.list)).u(1, next).u(2, chaseValue(e.list, e.pos)).u(3, uint64(e.pos)+1)
		buf = req.buf
		if _, err := s.loadRun(n, w.set, req.buf); err != nil && s.st.err == nil {
			s.st.err = err
		}
	}
}

func (w *chaseLoad) next(s *sim, o *op) {
	j := int32(w.keys.Next())
	k := w.sc.Workload.Hops
	o.target, o.handler, o.check = w.paths[int(j)*k], int32(w.hop), chaseValue(j, int32(k-1))
	o.payload = s.prog.request(w.hop, o.payload).u(0, uint64(j)).buf
}

func (w *chaseLoad) check(o *op) bool {
	return o.status == nicrt.StatusOK && len(o.reply) >= 16 && binary.LittleEndian.Uint64(o.reply) == o.check &&
		binary.LittleEndian.Uint64(o.reply[8:]) == uint64(w.sc.Workload.Hops)
}

func (w *chaseLoad) lost([]byte, int32) {}

func (w *chaseLoad) report(s *sim, r *Result) {
	r.Chase = &ChaseResult{Lists: w.sc.Workload.Lists, Hops: w.sc.Workload.Hops, Slots: w.slots, Reply: w.sc.Network.Reply}
}

// The ledger: every node holds Accounts accounts of Balance; a transfer
// is transfer_out at node a, which debits there and sends credit_in to a
// neighbour b (a ± 1 … 4), which trusts a as a peer (examples/rpc's
// ledger.naam; its node region, which the host fills, names them).

type ledgerLoad struct {
	sc                                        Scenario
	compile                                   func(accounts, history uint32) (*bytecode.Object, error)
	out, deposit, credit, refund              int
	accounts, node                            int // region indices
	lostAmount, transfers, insufficient, sent uint64
}

// ledgerHistory is the history ring's entries per node: small, the
// simulation does not read it.
const ledgerHistory = 16

func (w *ledgerLoad) object() (*bytecode.Object, error) {
	obj, err := w.compile(uint32(w.sc.Workload.Accounts), ledgerHistory)
	if err != nil {
		return nil, fmt.Errorf("sim: ledger: %w", err)
	}
	return obj, nil
}

func (w *ledgerLoad) bind(p *program) (err error) {
	for _, b := range []struct {
		name string
		to   *int
	}{{"transfer_out", &w.out}, {"deposit", &w.deposit}, {"credit_in", &w.credit}, {"refund_in", &w.refund}} {
		if *b.to, err = p.handlerIndex(b.name); err != nil {
			return err
		}
	}
	w.accounts, w.node = -1, -1
	for i, r := range p.regions {
		switch r.Name {
		case "accounts":
			w.accounts = i
		case "node":
			w.node = i
		}
	}
	if w.accounts < 0 || w.node < 0 || p.regions[w.node].Size < 8+8*ledgerPeers {
		return errors.New("sim: ledger: the program lacks its accounts or node region")
	}
	return nil
}

func (w *ledgerLoad) setup(*sim, *rand.Rand) error { return nil }

// ledgerPeers is how many neighbours each side trusts (ledger.naam's
// PEERS).
const ledgerPeers = 8

func (w *ledgerLoad) neighbour(a int32, d int) int32 {
	n := int32(w.sc.Nodes)
	return ((a+int32(d))%n + n) % n
}

func (w *ledgerLoad) load(s *sim, n int32) {
	info := s.nodes[n].regions[w.node].Data
	binary.LittleEndian.PutUint64(info, uint64(n)+1)
	for i, d := range []int{-4, -3, -2, -1, 1, 2, 3, 4} {
		binary.LittleEndian.PutUint64(info[8+8*i:], uint64(w.neighbour(n, d))+1)
	}
	var buf []byte
	for a := range w.sc.Workload.Accounts {
		req := s.prog.request(w.deposit, buf).u(0, uint64(a)).u(1, w.sc.Workload.Balance)
		buf = req.buf
		if _, err := s.loadRun(n, w.deposit, req.buf); err != nil && s.st.err == nil {
			s.st.err = err
		}
	}
}

func (w *ledgerLoad) next(s *sim, o *op) {
	r := s.workRNG
	a := int32(r.IntN(w.sc.Nodes))
	d := 1 + r.IntN(4)
	if r.IntN(2) == 0 {
		d = -d
	}
	b := w.neighbour(a, d)
	if b == a {
		b = w.neighbour(a, 1)
	}
	accts := uint64(w.sc.Workload.Accounts)
	o.target, o.handler = a, int32(w.out)
	o.payload = s.prog.request(w.out, o.payload).u(0, r.Uint64N(accts)).u(1, r.Uint64N(accts)).u(2, 1+r.Uint64N(100)).u(3, uint64(b)+1).buf
	w.transfers++
}

func (w *ledgerLoad) check(o *op) bool {
	if o.status == nicrt.StatusError && o.code == 2 { // INSUFFICIENT: a correct refusal
		w.insufficient++
		return true
	}
	return o.status == nicrt.StatusOK
}

func (w *ledgerLoad) lost(payload []byte, h int32) {
	if (int(h) == w.credit || int(h) == w.refund) && len(payload) >= 16 {
		w.lostAmount += binary.LittleEndian.Uint64(payload[8:])
	}
}

func (w *ledgerLoad) report(s *sim, r *Result) {
	per := uint64(w.sc.Workload.Accounts) * w.sc.Workload.Balance
	var total uint64
	for i := range s.nodes {
		nd := &s.nodes[i]
		if nd.regions == nil {
			if !nd.down {
				total += per // never touched: as loaded
			}
			continue
		}
		acc := nd.regions[w.accounts].Data
		for a := range w.sc.Workload.Accounts {
			total += binary.LittleEndian.Uint64(acc[16*a:])
		}
	}
	want := uint64(w.sc.Nodes) * per
	r.Ledger = &LedgerResult{Transfers: w.transfers, Insufficient: w.insufficient, Expected: want, Balances: total,
		LostInFlight: w.lostAmount, Conserved: total+w.lostAmount == want}
}

// The shift experiment's handler: naam bench shift's add, called on
// every node alike; the host load events (Scenario.Events) congest some.

type shiftLoad struct {
	obj *bytecode.Object
	add int
}

func (w *shiftLoad) object() (*bytecode.Object, error) { return w.obj, nil }

func (w *shiftLoad) bind(p *program) (err error) {
	w.add, err = p.handlerIndex("add")
	return err
}

func (w *shiftLoad) setup(*sim, *rand.Rand) error { return nil }
func (w *shiftLoad) load(*sim, int32)             {}

func (w *shiftLoad) next(s *sim, o *op) {
	o.target, o.handler = int32(s.workRNG.IntN(len(s.nodes))), int32(w.add)
	o.payload = s.prog.request(w.add, o.payload).u(0, uint64(s.issued)).buf
}

func (w *shiftLoad) check(o *op) bool     { return o.status == nicrt.StatusOK }
func (w *shiftLoad) lost([]byte, int32)   {}
func (w *shiftLoad) report(*sim, *Result) {}
