package server

import (
	"context"
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/naam-project/naam/internal/testing/testprog"
	"github.com/naam-project/naam/nicrt"
	"github.com/naam-project/naam/nicrt/caller"

	"github.com/naam-project/naam/nicrt/transport"
)

// TestNetReadersSoak hands the reading of client conns between callers
// and receivers for NAAM_SOAK_SECONDS (skipped when unset): 3 UDP clients,
// 6 goroutines mixing Call (which reads its own reply) and Go, with a 20 µs
// timeout floor so that retransmissions, cached answers and stale replies
// are constant. A lost hand-over shows as a call out of its 8 tries.
func TestNetReadersSoak(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("NAAM_SOAK_SECONDS"))
	if secs <= 0 {
		t.Skip("NAAM_SOAK_SECONDS not set")
	}
	n, srv, keys := udpServer(t, nicrt.Config{}, 1, transport.UDPConfig{})
	p := install(t, n, tenantA, testprog.Object(t, nil, testprog.Src{Name: "null", Asm: testprog.NullAsm}))
	null := id(t, p, "null")
	var timeouts, calls atomic.Int64
	stop := time.Now().Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	for c := range 3 {
		cl := udpClient(t, srv, keys, caller.ClientConfig{Node: uint32(c + 1), MinTimeout: 20 * time.Microsecond}, transport.UDPConfig{}, nil)
		for g := range 1 + c {
			wg.Go(func() {
				req := make([]byte, 64)
				for time.Now().Before(stop) {
					var err error
					if g == 1 {
						done := make(chan error, 1)
						if e := goRetry(cl, tenantA, null, req, func(_ []byte, err error) { done <- err }); e != nil {
							err = e
						} else {
							err = <-done
						}
					} else {
						_, err = cl.Call(context.Background(), tenantA, null, req)
					}
					calls.Add(1)
					if errors.Is(err, caller.ErrTimeout) {
						timeouts.Add(1)
						t.Logf("client %d g %d timeout; stats %+v", c, g, cl.Stats())
					} else if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	t.Logf("calls %d timeouts %d", calls.Load(), timeouts.Load())
	if timeouts.Load() > 0 {
		t.Fail()
	}
}
