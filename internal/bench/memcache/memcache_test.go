package memcache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeServer answers each request line with the scripted reply for its
// first word, after reading a set's data; it holds replies until it has
// read `batch` requests, so the client must pipeline to get any answer.
func fakeServer(t *testing.T, batch int, reply func(line string) string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		conn, err := l.Accept()
		if err != nil {
			return
		}
		defer conn.Close()
		br := bufio.NewReader(conn)
		var out []string
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			if strings.HasPrefix(line, "set ") {
				var key string
				var flags, exp, n int
				fmt.Sscanf(line, "set %s %d %d %d", &key, &flags, &exp, &n)
				buf := make([]byte, n+2)
				if _, err := br.Read(buf[:0]); err != nil {
					return
				}
				for read := 0; read < len(buf); {
					m, err := br.Read(buf[read:])
					if err != nil {
						return
					}
					read += m
				}
			}
			out = append(out, reply(line))
			if len(out) == batch {
				conn.Write([]byte(strings.Join(out, "")))
				out = out[:0]
			}
		}
	}()
	return l.Addr().String()
}

func TestPipelinedFake(t *testing.T) {
	const n = 16
	addr := fakeServer(t, n, func(line string) string {
		if k, ok := strings.CutPrefix(line, "get "); ok {
			if k == "missing" {
				return "END\r\n"
			}
			return fmt.Sprintf("VALUE %s 0 %d\r\nv:%s\r\nEND\r\n", k, len(k)+2, k)
		}
		if strings.HasPrefix(line, "set bad") {
			return "SERVER_ERROR out of memory storing object\r\n"
		}
		return "STORED\r\n"
	})
	c, err := Dial(context.Background(), addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			switch {
			case i == 0:
				if _, found, err := c.Get(ctx, "missing"); found || err != nil {
					errs <- fmt.Errorf("missing: found %v, %v", found, err)
				}
			case i == 1:
				var se *ServerError
				if err := c.Set(ctx, "bad", []byte("x")); !errors.As(err, &se) {
					errs <- fmt.Errorf("set bad: %v", err)
				}
			case i%2 == 0:
				k := fmt.Sprint("k", i)
				v, found, err := c.Get(ctx, k)
				if err != nil || !found || string(v) != "v:"+k {
					errs <- fmt.Errorf("get %s = %q %v %v", k, v, found, err)
				}
			default:
				if err := c.Set(ctx, fmt.Sprint("k", i), []byte("a\r\nb")); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestBrokenConnection(t *testing.T) {
	// A reply that does not parse ends the connection; every call after
	// it fails.
	addr := fakeServer(t, 1, func(string) string { return "VALUE other 0 1\r\nx\r\nEND\r\n" })
	c, err := Dial(context.Background(), addr, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, _, err := c.Get(ctx, "k"); err == nil || !strings.Contains(err.Error(), "unexpected reply") {
		t.Fatalf("mismatched key: %v", err)
	}
	// The client is broken now: later calls fail at once, naming the
	// connection, and never reach the server's scripted reply.
	if _, _, err := c.Get(ctx, "k"); err == nil || !strings.HasPrefix(err.Error(), "memcache: connection:") {
		t.Fatalf("a call after a malformed reply: %v", err)
	}
	if err := checkKey("has space"); err == nil {
		t.Error("a key with a space was accepted")
	}
	if _, _, err := c.Get(ctx, strings.Repeat("k", 251)); err == nil {
		t.Error("a 251-byte key was accepted")
	}
}

func startOrSkip(t *testing.T) *Server {
	t.Helper()
	s, err := Start(context.Background(), ServerConfig{MemoryMB: 64})
	if errors.Is(err, ErrNotInstalled) {
		t.Skip("memcached is not installed (apt-get install memcached)")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestRealMemcached(t *testing.T) {
	s := startOrSkip(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, s.Addr, 64)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	recs := Records{Client: c}
	// 8 callers × 250 records, pipelined on one connection.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range uint64(250) {
				n := uint64(w)*250 + i
				if _, err := recs.Put(ctx, n, []byte(fmt.Sprint("value\r\n", n))); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for n := uint64(0); n < 2000; n += 97 {
		v, found, err := c.Get(ctx, KeyOf(n))
		if err != nil || !found || string(v) != fmt.Sprint("value\r\n", n) {
			t.Fatalf("record %d = %q %v %v", n, v, found, err)
		}
		if rt, err := recs.Get(ctx, n); rt != 1 || err != nil {
			t.Fatalf("Records.Get(%d) = %d, %v", n, rt, err)
		}
	}
	if _, err := recs.Get(ctx, 5000); !errors.Is(err, ErrMissing) {
		t.Errorf("absent record: %v", err)
	}
	big := bytes.Repeat([]byte{0xfe}, 2<<20) // over memcached's 1 MB item limit
	var se *ServerError
	if err := c.Set(ctx, "big", big); !errors.As(err, &se) {
		t.Errorf("a 2 MB value: %v", err)
	}
	if v, _, err := c.Get(ctx, KeyOf(3)); err != nil || string(v) != "value\r\n3" {
		t.Errorf("after a refused set the stream is out of step: %q %v", v, err)
	}
	addr := s.Addr
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
		conn.Close()
		t.Error("memcached still accepts after Close")
	}
}

func TestKeyOf(t *testing.T) {
	if k := KeyOf(42); k != "user000000000042" {
		t.Errorf("KeyOf(42) = %q", k)
	}
	if _, err := Start(context.Background(), ServerConfig{Binary: "no-such-memcached-binary"}); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("a missing binary: %v", err)
	}
}

// TestFullQueueThenBreak: callers wait on a full in-flight queue while
// the server holds its replies; when the connection breaks every caller
// gets an error, none hangs.
func TestFullQueueThenBreak(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	c, err := Dial(context.Background(), l.Addr().String(), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	srv := <-accepted
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := c.Get(context.Background(), fmt.Sprint("k", i))
			errs <- err
		}()
	}
	time.Sleep(50 * time.Millisecond) // two requests in flight, four callers waiting
	srv.Close()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("callers hang after the connection broke")
	}
	close(errs)
	for err := range errs {
		if err == nil {
			t.Error("a call on a broken connection succeeded")
		}
	}
}

// FuzzReplies feeds arbitrary server bytes to a get and a set: the client
// fails or answers, never panics or hangs.
func FuzzReplies(f *testing.F) {
	f.Add([]byte("VALUE k 0 2\r\nab\r\nEND\r\nSTORED\r\n"))
	f.Add([]byte("END\r\nNOT_STORED\r\n"))
	f.Add([]byte("VALUE k 0 -1\r\n"))
	f.Add([]byte("SERVER_ERROR x\r\nERROR\r\n"))
	f.Fuzz(func(t *testing.T, reply []byte) {
		a, b := net.Pipe()
		defer b.Close()
		go func() {
			buf := make([]byte, 4096)
			b.Read(buf) // the get
			b.Write(reply)
			b.Close()
		}()
		c := &Client{conn: a, w: bufio.NewWriter(a), pending: make(chan *request, 4), quit: make(chan struct{}), dead: make(chan struct{}), done: make(chan struct{})}
		go c.readLoop(bufio.NewReader(a))
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.Get(ctx, "k")
		c.Set(ctx, "k", []byte("v"))
		c.Close()
	})
}
