package rpc

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/call/calltest"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/verifier"
)

const tenant = 5

// fabric is an in-process Outbox joining NICs: a send or forward to node
// N is submitted to N's NIC, to the same program's handler there, with
// the sending node as its source. It stands in for the network side until
// that carries sends and forwards.
type fabric struct {
	mu        sync.Mutex
	nics      map[uint64]*nicrt.NIC
	progs     map[uint64]*nicrt.Program
	nodeOf    map[*nicrt.Program]uint64
	ids       atomic.Uint64
	inflight  sync.WaitGroup
	sends     []nicrt.Reply // replies to sent messages, which nobody reads
	forwarded []nicrt.Reply // answers of forwarded requests, for the caller
}

func newFabric() *fabric {
	return &fabric{nics: map[uint64]*nicrt.NIC{}, progs: map[uint64]*nicrt.Program{}, nodeOf: map[*nicrt.Program]uint64{}}
}

func (f *fabric) deliver(from nicrt.Origin, node uint64, handler uint32, msg *nicrt.Message, fwd bool) error {
	f.mu.Lock()
	nic, prog := f.nics[node], f.progs[node]
	f.mu.Unlock()
	if nic == nil {
		return fmt.Errorf("no node %d", node)
	}
	id, ok := prog.ResolveLocal(handler)
	if !ok {
		return fmt.Errorf("no handler %d on node %d", handler, node)
	}
	msg.Handler = id
	msg.Payload = slices.Clone(msg.Payload)
	f.inflight.Add(1)
	nic.Submit(msg, nicrt.SinkFunc(func(r nicrt.Reply) {
		r.Data = slices.Clone(r.Data)
		f.mu.Lock()
		if fwd {
			f.forwarded = append(f.forwarded, r)
		} else {
			f.sends = append(f.sends, r)
		}
		f.mu.Unlock()
		f.inflight.Done()
	}))
	return nil
}

func (f *fabric) Send(from nicrt.Origin, node uint64, handler uint32, payload []byte) error {
	f.mu.Lock()
	src := f.nodeOf[from.Program]
	f.mu.Unlock()
	return f.deliver(from, node, handler, &nicrt.Message{Tenant: from.Tenant, RequestID: f.ids.Add(1), SrcNode: src, Payload: payload}, false)
}

func (f *fabric) Forward(from nicrt.Origin, req *nicrt.Message, node uint64, handler uint32) error {
	m := *req
	return f.deliver(from, node, handler, &m, true)
}

// ledgerNode is one node running the ledger.
type ledgerNode struct {
	id       uint64
	nic      *nicrt.NIC
	prog     *nicrt.Program
	ids      HandlerIDs
	client   *Client
	caller   *calltest.Local
	accounts []byte
	ledger   []byte
}

func startNode(t *testing.T, f *fabric, cfg Config, id uint64, peers []uint64) *ledgerNode {
	t.Helper()
	nic, err := nicrt.New(nicrt.Config{Outbox: f})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nic.Close() })
	rs, err := Register(nic, tenant, cfg, id, peers)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p, err := nic.Install(tenant, obj)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := IDs(p)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.nics[id], f.progs[id], f.nodeOf[p] = nic, p, id
	f.mu.Unlock()
	caller := &calltest.Local{NIC: nic, Tenant: tenant, Src: 1000 + id}
	n := &ledgerNode{id: id, nic: nic, prog: p, ids: ids, client: NewClient(caller, ids), caller: caller}
	n.accounts, n.ledger = rs.Accounts.Bytes(), rs.Ledger.Bytes()
	return n
}

func (n *ledgerNode) supply() uint64 { return binary.LittleEndian.Uint64(n.ledger[LedgerSupply:]) }

func (n *ledgerNode) sum() uint64 {
	s := uint64(0)
	for i := 0; i < len(n.accounts); i += AccountSize {
		s += binary.LittleEndian.Uint64(n.accounts[i:])
	}
	return s
}

func TestObject(t *testing.T) {
	obj, err := Compile(Config{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := verifier.VerifyObject(obj, verifier.Config{})
	if err != nil {
		t.Fatalf("%+v", err)
	}
	for i, h := range obj.Handlers {
		if h.Name != Handlers[i] {
			t.Errorf("handler %d is %s, want %s", i, h.Name, Handlers[i])
		}
	}
	for _, e := range rep.Entries {
		if e.MaxInsns > nicrt.DefaultConfig().NICBudget {
			t.Errorf("%s: bound %d over the NIC budget", e.Name, e.MaxInsns)
		}
	}
	c := Config{}.withDefaults()
	want := []struct {
		name     string
		size     uint64
		writable bool
	}{{RegionAccounts, c.AccountsSize(), true}, {RegionLedger, c.LedgerSize(), true}, {RegionNode, NodeInfoSize, false}}
	for i, w := range want {
		r := obj.Regions[i]
		if r.Name != w.name || r.Size != w.size || r.Writable != w.writable {
			t.Errorf("region %d = %+v, want %+v", i, r, w)
		}
	}
	// The entry reply is the Entry layout.
	if e := obj.Handlers[3]; e.Results[0].Size != EntrySize {
		t.Errorf("entry reply %+v", e.Results)
	}
	if _, err := Compile(Config{History: 100}); err == nil {
		t.Error("a history of 100 entries compiled")
	}
}

// TestLedgerAgainstMap runs random operations on one node and compares
// balances, error codes and the history with a Go model.
func TestLedgerAgainstMap(t *testing.T) {
	cfg := Config{Accounts: 16, History: 4096}
	n := startNode(t, newFabric(), cfg, 1, nil)
	ctx := context.Background()
	bal := map[uint32]uint64{}
	var hist []Entry
	r := rand.New(rand.NewPCG(1, 1))
	counts := map[string]int{}
	for op := range 3000 {
		a, b := uint32(r.IntN(18)), uint32(r.IntN(18)) // 16, 17: no such account
		amount := uint64(r.IntN(200))
		switch r.IntN(3) {
		case 0:
			got, seq, err := n.client.Deposit(ctx, a, amount)
			var want error
			switch {
			case a >= 16:
				want = ErrNoAccount
			case amount == 0:
				want = ErrZeroAmount
			}
			if !errors.Is(err, want) || err == nil && (got != bal[a]+amount || seq != uint64(len(hist))) {
				t.Fatalf("op %d: deposit %d to %d = %d seq %d, %v; want %v, balance %d", op, amount, a, got, seq, err, want, bal[a]+amount)
			}
			if err == nil {
				bal[a] += amount
				hist = append(hist, Entry{Seq: seq, Kind: KindDeposit, From: a, To: a, Amount: amount})
				counts["deposit"]++
			} else {
				counts[err.Error()]++
			}
		case 1, 2:
			got, seq, err := n.client.Transfer(ctx, a, b, amount)
			var want error
			switch {
			case a >= 16 || b >= 16:
				want = ErrNoAccount
			case a == b:
				want = ErrSameAccount
			case amount == 0:
				want = ErrZeroAmount
			case bal[a] < amount:
				want = ErrInsufficient
			}
			if !errors.Is(err, want) || err == nil && (got != bal[a]-amount || seq != uint64(len(hist))) {
				t.Fatalf("op %d: transfer %d from %d (%d) to %d = %d seq %d, %v; want %v", op, amount, a, bal[a], b, got, seq, err, want)
			}
			if err == nil {
				bal[a] -= amount
				bal[b] += amount
				hist = append(hist, Entry{Seq: seq, Kind: KindTransfer, From: a, To: b, Amount: amount})
				counts["transfer"]++
			} else {
				counts[err.Error()]++
			}
		}
	}
	t.Logf("%v", counts)
	if len(counts) < 6 {
		t.Errorf("not every outcome was seen: %v", counts)
	}
	total := uint64(0)
	for a := range uint32(16) {
		got, ops, err := n.client.Balance(ctx, a)
		if err != nil || got != bal[a] || AccountBalanceOf(n.accounts, a) != bal[a] {
			t.Errorf("account %d: %d (%d ops), %v; want %d", a, got, ops, err, bal[a])
		}
		total += bal[a]
	}
	if n.supply() != total || n.sum() != total {
		t.Errorf("supply %d, balances sum %d, want %d", n.supply(), n.sum(), total)
	}
	for _, seq := range []int{0, 1, len(hist) / 2, len(hist) - 1} {
		e, err := n.client.Entry(ctx, uint64(seq))
		if err != nil || e != hist[seq] {
			t.Errorf("entry %d = %+v %v, want %+v", seq, e, err, hist[seq])
		}
	}
	if _, err := n.client.Entry(ctx, uint64(len(hist))); !errors.Is(err, ErrNotYet) {
		t.Errorf("the next entry: %v", err)
	}
	if _, _, err := n.client.Balance(ctx, 16); !errors.Is(err, ErrNoAccount) {
		t.Errorf("balance of account 16: %v", err)
	}
	if _, _, err := n.client.Deposit(ctx, 0, MaxSupply); !errors.Is(err, ErrOverSupply) {
		t.Errorf("a deposit over the supply bound: %v", err)
	}
}

func TestHistoryRing(t *testing.T) {
	n := startNode(t, newFabric(), Config{Accounts: 4, History: 16}, 1, nil)
	ctx := context.Background()
	for i := range 40 {
		if _, seq, err := n.client.Deposit(ctx, 1, uint64(i+1)); err != nil || seq != uint64(i) {
			t.Fatalf("deposit %d: seq %d, %v", i, seq, err)
		}
	}
	if _, err := n.client.Entry(ctx, 23); !errors.Is(err, ErrGone) {
		t.Errorf("entry 23 of 40 in a ring of 16: %v", err)
	}
	for seq := uint64(24); seq < 40; seq++ {
		e, err := n.client.Entry(ctx, seq)
		if err != nil || e.Seq != seq || e.Amount != seq+1 || e.Kind != KindDeposit {
			t.Errorf("entry %d = %+v, %v", seq, e, err)
		}
	}
	if _, err := n.client.Entry(ctx, 40); !errors.Is(err, ErrNotYet) {
		t.Errorf("entry 40: %v", err)
	}
}

// TestConcurrentTransfers: clients on several cores move money around
// with CAS; nothing is created or lost and no balance goes negative.
func TestConcurrentTransfers(t *testing.T) {
	if raceEnabled {
		t.Skip("handlers on several cores read words other cores write with plain loads (the VM's memory model); the race detector reports each")
	}
	n := startNode(t, newFabric(), Config{Accounts: 8, History: 1024}, 1, nil)
	ctx := context.Background()
	for a := range uint32(8) {
		if _, _, err := n.client.Deposit(ctx, a, 1000); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var ok, insufficient, contended atomic.Int64
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := NewClient(&calltest.Local{NIC: n.nic, Tenant: tenant, Src: uint64(50 + w)}, n.ids)
			r := rand.New(rand.NewPCG(uint64(w), 9))
			for range 500 {
				a, b := uint32(r.IntN(8)), uint32(r.IntN(8))
				if a == b {
					continue
				}
				_, _, err := c.Transfer(ctx, a, b, uint64(r.IntN(300)+1))
				switch {
				case err == nil:
					ok.Add(1)
				case errors.Is(err, ErrInsufficient):
					insufficient.Add(1)
				case errors.Is(err, ErrContended):
					contended.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d transfers, %d insufficient, %d contended", ok.Load(), insufficient.Load(), contended.Load())
	if n.sum() != 8000 || n.supply() != 8000 {
		t.Errorf("balances sum to %d, supply %d; 8000 were deposited", n.sum(), n.supply())
	}
	for a := range uint32(8) {
		if b := AccountBalanceOf(n.accounts, a); b > 8000 {
			t.Errorf("account %d holds %d (wrapped below zero)", a, b)
		}
	}
}

// TestTwoNodes: transfer_out sends the credit to the other node, a
// refused credit comes back as a refund, strangers cannot call the
// receiving handlers, a failed send undoes the debit, and balance_at is
// forwarded to the node that answers.
func TestTwoNodes(t *testing.T) {
	f := newFabric()
	cfg := Config{Accounts: 8, History: 64}
	a := startNode(t, f, cfg, 1, []uint64{2})
	b := startNode(t, f, cfg, 2, []uint64{1})
	ctx := context.Background()
	if _, _, err := a.client.Deposit(ctx, 0, 500); err != nil {
		t.Fatal(err)
	}
	bal, seq, err := a.client.TransferOut(ctx, 0, 3, 120, 2)
	if err != nil || bal != 380 {
		t.Fatalf("transfer_out: %d, %v", bal, err)
	}
	f.inflight.Wait()
	if got, _, _ := b.client.Balance(ctx, 3); got != 120 {
		t.Errorf("node 2 account 3 holds %d after the credit, want 120", got)
	}
	if e, _ := a.client.Entry(ctx, seq); e.Kind != KindOut || e.Node != 2 || e.Amount != 120 {
		t.Errorf("node 1's entry %+v", e)
	}
	if e, err := b.client.Entry(ctx, 0); err != nil || e.Kind != KindIn || e.Node != 1 || e.To != 3 {
		t.Errorf("node 2's entry %+v %v", e, err)
	}
	if a.supply() != 380 || b.supply() != 120 {
		t.Errorf("supplies %d, %d", a.supply(), b.supply())
	}

	// A credit to an account node 2 does not have bounces back.
	if _, _, err := a.client.TransferOut(ctx, 0, 99, 80, 2); err != nil {
		t.Fatal(err)
	}
	f.inflight.Wait()
	if got, _, _ := a.client.Balance(ctx, 0); got != 380 {
		t.Errorf("after the bounce node 1 account 0 holds %d, want 380", got)
	}
	if e, _ := b.client.Entry(ctx, 1); e.Kind != KindBounced || e.To != 99 {
		t.Errorf("node 2's bounce entry %+v", e)
	}
	if e, _ := a.client.Entry(ctx, 3); e.Kind != KindRefund || e.Node != 2 {
		t.Errorf("node 1's refund entry %+v", e)
	}

	// A client is not a peer: calling credit_in directly mints nothing.
	m := binary.LittleEndian.AppendUint32(nil, 0)
	m = binary.LittleEndian.AppendUint32(m, 3)
	m = binary.LittleEndian.AppendUint64(m, 1_000_000)
	m = binary.LittleEndian.AppendUint64(m, 0)
	if _, err := b.caller.Call(ctx, b.ids["credit_in"], m); !isCode(err, CodeNotPeer) {
		t.Errorf("a client's credit_in: %v", err)
	}
	if _, err := b.caller.Call(ctx, b.ids["refund_in"], m); !isCode(err, CodeNotPeer) {
		t.Errorf("a client's refund_in: %v", err)
	}

	// A send to a node the fabric does not know fails; the debit is undone.
	if _, _, err := a.client.TransferOut(ctx, 0, 1, 10, 77); !errors.Is(err, ErrSendFailed) {
		t.Errorf("transfer_out to node 77: %v", err)
	}
	if got, _, _ := a.client.Balance(ctx, 0); got != 380 || a.supply() != 380 {
		t.Errorf("after a failed send: balance %d, supply %d; want 380", got, a.supply())
	}
	if _, _, err := a.client.TransferOut(ctx, 0, 1, 1000, 2); !errors.Is(err, ErrInsufficient) {
		t.Errorf("transfer_out of more than the balance: %v", err)
	}

	// balance_at: node 1 forwards a read of node 2's account.
	if got, _, err := a.client.BalanceAt(ctx, 1, 0); err != nil || got != 380 {
		t.Errorf("balance_at here: %d %v", got, err)
	}
	req := binary.LittleEndian.AppendUint64(nil, 2)
	req = binary.LittleEndian.AppendUint32(req, 3)
	req = append(req, 0, 0, 0, 0)
	rep := a.nic.Call(&nicrt.Message{Tenant: tenant, Handler: a.ids["balance_at"], SrcNode: 1001, RequestID: 1, Payload: req})
	if rep.Status != nicrt.StatusForwarded || rep.Forward == nil || rep.Forward.Node != 2 {
		t.Fatalf("balance_at of node 2 on node 1: %v %+v %v", rep.Status, rep.Forward, rep.Err)
	}
	f.inflight.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.forwarded) != 1 || f.forwarded[0].Status != nicrt.StatusOK || binary.LittleEndian.Uint64(f.forwarded[0].Data) != 120 {
		t.Errorf("node 2's answer to the forwarded read: %+v", f.forwarded)
	}
	for _, r := range f.sends {
		if r.Status != nicrt.StatusOK && !(r.Status == nicrt.StatusError && r.Code == CodeNoAccount) {
			t.Errorf("a sent message ended %v %d %v", r.Status, r.Code, r.Err)
		}
	}
}

func isCode(err error, code uint32) bool {
	c, ok := call.Code(err)
	return ok && c == code
}
