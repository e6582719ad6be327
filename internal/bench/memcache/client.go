package memcache

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
)

// MaxKeyLen is the text protocol's longest key.
const MaxKeyLen = 250

// ErrClosed is returned for calls on a closed or broken client.
var ErrClosed = errors.New("memcache: client closed")

// ServerError is an ERROR, CLIENT_ERROR or SERVER_ERROR line from the
// server.
type ServerError struct{ Line string }

func (e *ServerError) Error() string { return "memcache: server replied " + strconv.Quote(e.Line) }

// Client speaks the text protocol over one connection. Its methods are
// safe for concurrent use: requests are written in the order callers
// arrive and replies matched in that order, so concurrent callers keep
// several requests in flight.
type Client struct {
	conn net.Conn

	wmu     sync.Mutex // orders writes and the pending queue together
	w       *bufio.Writer
	pending chan *request
	err     error // set once, under wmu, when the connection broke

	quit     chan struct{} // closed by Close and by a failed write
	quitOnce sync.Once
	dead     chan struct{} // closed when the reader stops reading
	done     chan struct{} // closed when the reader has failed what was queued
}

type kind uint8

const (
	kindGet kind = iota
	kindSet
)

type request struct {
	kind  kind
	key   string
	value []byte
	found bool
	err   error
	done  chan struct{}
}

// Dial connects to a memcached at addr (host:port). maxInFlight bounds
// the requests outstanding at once (callers past it wait); 0 means 1024.
func Dial(ctx context.Context, addr string, maxInFlight int) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("memcache: %w", err)
	}
	if maxInFlight <= 0 {
		maxInFlight = 1024
	}
	c := &Client{
		conn:    conn,
		w:       bufio.NewWriterSize(conn, 64<<10),
		pending: make(chan *request, maxInFlight),
		quit:    make(chan struct{}),
		dead:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	go c.readLoop(bufio.NewReaderSize(conn, 64<<10))
	return c, nil
}

// Close closes the connection; calls in flight fail with ErrClosed.
func (c *Client) Close() error {
	c.wmu.Lock()
	if c.err == nil {
		c.err = ErrClosed
	}
	c.wmu.Unlock()
	c.stop()
	err := c.conn.Close()
	<-c.done
	return err
}

func (c *Client) stop() { c.quitOnce.Do(func() { close(c.quit) }) }

func checkKey(key string) error {
	if len(key) == 0 || len(key) > MaxKeyLen {
		return fmt.Errorf("memcache: key of %d bytes (1…%d)", len(key), MaxKeyLen)
	}
	for i := 0; i < len(key); i++ {
		if key[i] <= ' ' || key[i] == 0x7f {
			return fmt.Errorf("memcache: key %q has a space or control byte", key)
		}
	}
	return nil
}

// Get fetches key: its value (a new slice) and whether it was there.
func (c *Client) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := checkKey(key); err != nil {
		return nil, false, err
	}
	r := &request{kind: kindGet, key: key, done: make(chan struct{})}
	if err := c.send(r, func(w *bufio.Writer) {
		w.WriteString("get ")
		w.WriteString(key)
		w.WriteString("\r\n")
	}); err != nil {
		return nil, false, err
	}
	if err := wait(ctx, r); err != nil {
		return nil, false, err
	}
	return r.value, r.found, r.err
}

// Set stores value under key (flags 0, no expiry).
func (c *Client) Set(ctx context.Context, key string, value []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	r := &request{kind: kindSet, key: key, done: make(chan struct{})}
	if err := c.send(r, func(w *bufio.Writer) {
		w.WriteString("set ")
		w.WriteString(key)
		w.WriteString(" 0 0 ")
		w.WriteString(strconv.Itoa(len(value)))
		w.WriteString("\r\n")
		w.Write(value)
		w.WriteString("\r\n")
	}); err != nil {
		return err
	}
	if err := wait(ctx, r); err != nil {
		return err
	}
	return r.err
}

// wait waits for r or ctx. A request given up on stays queued: the reader
// still consumes its reply, so the stream stays in step.
func wait(ctx context.Context, r *request) error {
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// send queues r and writes its bytes, in the same order.
func (c *Client) send(r *request, write func(*bufio.Writer)) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.err != nil {
		return c.err
	}
	// A full queue waits here, holding wmu, until the reader takes a
	// request or dies; dead (not done) is closed before the reader needs
	// wmu, so this cannot deadlock with it.
	select {
	case c.pending <- r:
	case <-c.dead:
		return ErrClosed
	}
	write(c.w)
	if err := c.w.Flush(); err != nil {
		c.err = fmt.Errorf("memcache: write: %w", err)
		c.stop()
		c.conn.Close() // the reader fails what is queued
		return c.err
	}
	return nil
}

// readLoop matches replies to queued requests in order.
func (c *Client) readLoop(br *bufio.Reader) {
	defer close(c.done)
	var err error
	var broken *request
	for err == nil {
		var r *request
		select {
		case r = <-c.pending:
		default:
			// Nothing queued: wait for a request or for the connection
			// to end (a read error then), whichever comes first.
			if _, err = br.Peek(1); err != nil {
				break
			}
			// Bytes came first: a reply to a request being queued now,
			// or bytes nobody asked for (readReply then fails them).
			select {
			case r = <-c.pending:
			case <-c.quit:
				err = ErrClosed
			}
		}
		if err != nil {
			break
		}
		if err = c.readReply(br, r); err != nil {
			broken = r
			break
		}
		close(r.done)
	}
	close(c.dead)
	c.wmu.Lock()
	if c.err == nil {
		c.err = fmt.Errorf("memcache: connection: %w", err)
	}
	failErr := c.err
	c.wmu.Unlock()
	// The request whose reply broke the stream learns why only now, after
	// c.err is set, so a call that follows it fails naming the connection.
	if broken != nil {
		broken.err = err
		close(broken.done)
	}
	for {
		select {
		case r := <-c.pending:
			r.err = failErr
			close(r.done)
		default:
			return
		}
	}
}

// readReply reads one reply. A server error line is r's error, not the
// connection's; a malformed reply or a read error ends the connection.
func (c *Client) readReply(br *bufio.Reader, r *request) error {
	line, err := readLine(br)
	if err != nil {
		return err
	}
	if se := serverError(line); se != nil {
		r.err = se
		return nil
	}
	switch r.kind {
	case kindSet:
		if string(line) != "STORED" {
			r.err = &ServerError{Line: string(line)}
		}
		return nil
	default: // kindGet
		if string(line) == "END" {
			return nil
		}
		f := bytes.Fields(line)
		if len(f) < 4 || string(f[0]) != "VALUE" || string(f[1]) != r.key {
			return fmt.Errorf("memcache: unexpected reply %q to get %q", line, r.key)
		}
		n, err := strconv.Atoi(string(f[3]))
		if err != nil || n < 0 {
			return fmt.Errorf("memcache: bad length in %q", line)
		}
		v := make([]byte, n+2)
		if _, err := io.ReadFull(br, v); err != nil {
			return err
		}
		if string(v[n:]) != "\r\n" {
			return fmt.Errorf("memcache: value of %q not followed by CRLF", r.key)
		}
		end, err := readLine(br)
		if err != nil {
			return err
		}
		if string(end) != "END" {
			return fmt.Errorf("memcache: %q after a value, want END", end)
		}
		r.value, r.found = v[:n], true
		return nil
	}
}

func serverError(line []byte) *ServerError {
	for _, p := range []string{"ERROR", "CLIENT_ERROR", "SERVER_ERROR"} {
		if bytes.HasPrefix(line, []byte(p)) {
			return &ServerError{Line: string(line)}
		}
	}
	return nil
}

func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(line[:len(line)-1], []byte("\r")), nil
}
