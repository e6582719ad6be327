package rpc

import (
	"context"
	"testing"
	"time"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/host"
)

// netNode is a ledger on a host node, with a client from another.
type netNode struct {
	node   *host.Node
	client *Client
	regs   Regions
}

func startNetNode(t *testing.T, name string, cfg Config, join []string) *host.Node {
	t.Helper()
	hc := host.Config{Name: name, Join: join}
	if join == nil {
		hc.Gossip = "127.0.0.1:0"
	}
	n, err := host.Start(hc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// ledgerOn registers and installs the ledger on n, peers being the other
// nodes' ids, and dials it from caller.
func ledgerOn(t *testing.T, ctx context.Context, n, caller *host.Node, cfg Config, peers []uint64) *netNode {
	t.Helper()
	regs, err := Register(n.NIC(), uint64(n.Tenant()), cfg, uint64(n.ID()), peers)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := Compile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := n.Install(obj); err != nil {
		t.Fatal(err)
	}
	p, err := caller.Dial(ctx, n.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ids, err := PeerIDs(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	return &netNode{node: n, client: NewClient(call.Peer{P: p}, ids), regs: regs}
}

// TestTwoNodesOverNetwork is the two-node ledger over loopback UDP: node
// ids and addresses from membership, transfer_out's credit sent to the
// other node, a bounce refunded, balance_at forwarded and answered by the
// other node.
func TestTwoNodesOverNetwork(t *testing.T) {
	if testing.Short() {
		t.Skip("membership")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg := Config{Accounts: 8, History: 64}
	na := startNetNode(t, "ledger-a", cfg, nil)
	nb := startNetNode(t, "ledger-b", cfg, []string{na.GossipAddr()})
	caller := startNetNode(t, "teller", cfg, []string{na.GossipAddr()})
	deadline := time.Now().Add(10 * time.Second)
	for len(na.Members()) < 3 || len(nb.Members()) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("the nodes did not find each other")
		}
		time.Sleep(10 * time.Millisecond)
	}
	a := ledgerOn(t, ctx, na, caller, cfg, []uint64{uint64(nb.ID())})
	b := ledgerOn(t, ctx, nb, caller, cfg, []uint64{uint64(na.ID())})
	if _, _, err := a.client.Deposit(ctx, 0, 500); err != nil {
		t.Fatal(err)
	}
	bal, _, err := a.client.TransferOut(ctx, 0, 3, 120, uint64(nb.ID()))
	if err != nil || bal != 380 {
		t.Fatalf("transfer_out: %d %v", bal, err)
	}
	waitBalance := func(c *Client, acct uint32, want uint64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, _, err := c.Balance(ctx, acct)
			if err == nil && got == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("account %d holds %d (%v), want %d", acct, got, err, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	waitBalance(b.client, 3, 120)
	// A credit to an account b lacks bounces back and is refunded.
	if _, _, err := a.client.TransferOut(ctx, 0, 99, 80, uint64(nb.ID())); err != nil {
		t.Fatal(err)
	}
	waitBalance(a.client, 0, 380)
	// balance_at: a forwards the read to b, which answers the teller.
	if got, _, err := a.client.BalanceAt(ctx, uint64(nb.ID()), 3); err != nil || got != 120 {
		t.Errorf("balance_at of b's account 3 through a: %d %v", got, err)
	}
	if got, _, err := a.client.BalanceAt(ctx, uint64(na.ID()), 0); err != nil || got != 380 {
		t.Errorf("balance_at of a's own account: %d %v", got, err)
	}
}
