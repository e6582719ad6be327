package netns

import (
	"errors"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// DropUDP makes side's nftables drop 10% of the UDP datagrams at each of
// hooks ("output", "input"), counting what they drop (Dropped). It skips
// t without nft.
func (p *Pair) DropUDP(t testing.TB, side int, hooks ...string) {
	t.Helper()
	if _, err := exec.LookPath("nft"); err != nil {
		t.Skip("nft is not installed")
	}
	rules := [][]string{{"add", "table", "inet", "naam"}}
	for _, hook := range hooks {
		chain := strings.TrimSuffix(hook, "put") // "out", "in"
		rules = append(rules,
			[]string{"add", "chain", "inet", "naam", chain, "{ type filter hook " + hook + " priority 0; }"},
			[]string{"add", "rule", "inet", "naam", chain, "meta", "l4proto", "udp", "numgen", "random", "mod", "100", "<", "10", "counter", "drop"})
	}
	for _, rule := range rules {
		if out, err := p.Exec(side, append([]string{"nft"}, rule...)...); err != nil {
			t.Fatalf("nft %v: %v: %s", rule, err, out)
		}
	}
}

var nftCounter = regexp.MustCompile(`counter packets (\d+)`)

// Dropped is the number of datagrams DropUDP's rules dropped on side.
func (p *Pair) Dropped(t testing.TB, side int) int {
	t.Helper()
	out, err := p.Exec(side, "nft", "list", "table", "inet", "naam")
	if err != nil {
		t.Fatalf("nft list: %v: %s", err, out)
	}
	dropped := 0
	for _, m := range nftCounter.FindAllSubmatch(out, -1) {
		k, _ := strconv.Atoi(string(m[1]))
		dropped += k
	}
	return dropped
}

// CountExact makes count calls of a FETCH-ADD by 1 of one counter from 0,
// inFlight at once through each of adds, and checks that every old value
// 0 … count-1 comes back once: what a caller must see across a lossy link.
// A call that fails with timeout (errors.Is) is counted; any other error,
// or an old value seen twice or out of range, fails t. It fails t if the
// calls still run after 5 minutes, and returns the replies, the timeouts
// and the time the calls took.
func CountExact(t testing.TB, count, inFlight int, adds []func() (uint64, error), timeout error) (ok, timeouts int64, took time.Duration) {
	t.Helper()
	seen := make([]atomic.Bool, count)
	var okN, timeoutN, next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for _, add := range adds {
		for range inFlight {
			wg.Go(func() {
				for next.Add(1) <= int64(count) {
					old, err := add()
					switch {
					case err == nil && old < uint64(count) && !seen[old].Swap(true):
						okN.Add(1)
					case err == nil:
						t.Errorf("FETCH-ADD returned %d twice or out of range", old)
					case errors.Is(err, timeout):
						timeoutN.Add(1)
					default:
						t.Errorf("FETCH-ADD: %v", err)
					}
				}
			})
		}
	}
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Minute):
		t.Fatal("calls still running after 5 minutes")
	}
	return okN.Load(), timeoutN.Load(), time.Since(start)
}
