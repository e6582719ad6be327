package server

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/nicrt/transport"
	"github.com/naam-project/naam/nicrt/wire"
)

// lateConn wraps a client's Conn and changes what it receives: act, for
// each datagram, says whether to deliver it, drop it, or hold it until
// the next one comes (then both arrive together, in the order act chose).
type lateConn struct {
	transport.Conn
	act func(pkt *wire.Packet) lateAction

	mu        sync.Mutex
	held      []byte
	heldFirst bool // the held datagram goes before the next one
}

type lateAction uint8

const (
	deliver    lateAction = iota
	drop                  // never arrives: lost
	hold                  // arrives with the next datagram, after it
	holdBefore            // arrives with the next datagram, before it
)

// ReadBatch reads one datagram at a time (ps needs room for two).
func (l *lateConn) ReadBatch(ps []transport.Packet) (int, error) {
	for {
		n, err := l.Conn.ReadBatch(ps[:1])
		if err != nil || n == 0 {
			return n, err
		}
		cur := append([]byte(nil), ps[0].Buf[:ps[0].N]...)
		pkt, perr := wire.Parse(cur, 0)
		if perr != nil {
			return 1, nil
		}
		l.mu.Lock()
		a := l.act(&pkt)
		if a == drop {
			l.mu.Unlock()
			continue
		}
		if (a == hold || a == holdBefore) && l.held == nil {
			l.held, l.heldFirst = cur, a == holdBefore
			l.mu.Unlock()
			continue
		}
		held, heldFirst := l.held, l.heldFirst
		l.held = nil
		l.mu.Unlock()
		if held == nil {
			return 1, nil
		}
		a0, a1 := cur, held
		if heldFirst {
			a0, a1 = held, cur
		}
		ps[0].N = copy(ps[0].Buf, a0)
		ps[1].Addr, ps[1].N = ps[0].Addr, copy(ps[1].Buf, a1)
		return 2, nil
	}
}

// TestNetSpuriousRetransmit: a first try's reply that comes late, after
// the call was sent again, marks the retransmission spurious whichever
// reply comes first, and raises the timeout's floor to twice that round
// trip, so that the next call as late is not retransmitted. A lost reply
// (a needed retransmission) does not; nor does a spurious one among
// mostly needed ones (a lossy link).
func TestNetSpuriousRetransmit(t *testing.T) {
	const minTimeout = 2 * time.Millisecond
	cfg := caller.ClientConfig{Timeout: minTimeout, MinTimeout: minTimeout, MaxTimeout: 400 * time.Millisecond, MaxTries: 10}
	for _, tc := range []struct {
		name string
		// first: what becomes of the first reply of each call in turn
		// (the repeats, from the reply cache, are delivered).
		first    []lateAction
		spurious uint64
		raised   bool
	}{
		{"late, after the repeat", []lateAction{hold}, 1, true},
		{"late, before the repeat", []lateAction{holdBefore}, 1, true},
		{"lost", []lateAction{drop}, 0, false},
		{"late among lost", []lateAction{drop, drop, drop, hold}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tn := newTestNet(t, nicrt.Config{}, ServerConfig{})
			reg := register(t, tn.nic, tenantA, "c", 8, nicrt.RegionOptions{Writable: true})
			call := -1
			cl := tn.client(t, cfg, func(c transport.Conn) transport.Conn {
				return &lateConn{Conn: c, act: func(pkt *wire.Packet) lateAction {
					if pkt.Flags&wire.FlagRetransmit != 0 {
						return deliver
					}
					if call++; call < len(tc.first) {
						return tc.first[call]
					}
					return deliver
				}}
			})
			ctx := context.Background()
			for i := range tc.first {
				if old, err := cl.FetchAdd(ctx, tenantA, reg.Ref(), 0, 1); err != nil || old != uint64(i) {
					t.Fatalf("call %d: %d %v", i, old, err)
				}
			}
			waitFor(t, "the late replies", func() bool { return cl.Stats().Stale >= tc.spurious })
			st := cl.Stats()
			if st.Spurious != tc.spurious || st.Retransmits < uint64(len(tc.first)) {
				t.Errorf("%d retransmissions, %d spurious; want at least %d, and %d", st.Retransmits, st.Spurious, len(tc.first), tc.spurious)
			}
			if raised := st.Floor > minTimeout; raised != tc.raised || raised && st.Floor < 2*minTimeout {
				t.Errorf("floor %v (MinTimeout %v); raised: want %v, at least twice the late round trip", st.Floor, minTimeout, tc.raised)
			}
			if counter(reg) != uint64(len(tc.first)) {
				t.Errorf("counter %d after %d FETCH-ADDs", counter(reg), len(tc.first))
			}
		})
	}
}
