package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/host/peer"
)

// DefaultRetries is how many times a Client tries an operation that met a
// busy bucket (CodeBusy) before it gives up with ErrBusy, backing off
// from 1 µs (doubling, to 1 ms) between tries. A bucket is locked for the
// length of one handler run, so a retry rarely meets the same writer.
const DefaultRetries = 8

// DefaultRDMARetries is the same for an RDMAClient. A one-sided writer
// holds a bucket for three round trips (CAS, WRITE, FETCH-ADD; four with
// the header), so readers of a hot key meet it far more often: with 16
// operations in flight on YCSB-B's Zipfian keys over loopback UDP, 8
// tries without backoff left 2 of 20,000 operations busy, and 32 without
// backoff 2 of 4,000 in process while the test suite loaded the CPUs.
const DefaultRDMARetries = 32

// HandlerIDs are the node-wide ids of an installed kv program's handlers.
type HandlerIDs struct {
	Get, Put, Delete, CAS uint32
}

// handlerIDs are the handlers of the kv program, by name, and where
// their ids go in ids.
func (ids *HandlerIDs) handlerIDs() []call.HandlerID {
	return []call.HandlerID{{Name: HandlerGet, ID: &ids.Get}, {Name: HandlerPut, ID: &ids.Put}, {Name: HandlerDelete, ID: &ids.Delete}, {Name: HandlerCAS, ID: &ids.CAS}}
}

// LookupIDs finds the handler ids of an installed kv program with lookup,
// which gives the node-wide id of a handler by name (kvnode.IDs: over the
// installed program; PeerIDs does the same over a peer's description).
func LookupIDs(lookup func(name string) (uint32, error)) (HandlerIDs, error) {
	var ids HandlerIDs
	for _, h := range ids.handlerIDs() {
		id, err := lookup(h.Name)
		if err != nil {
			return ids, err
		}
		*h.ID = id
	}
	return ids, nil
}

// Reply is what an operation gave: the version the key has (after a
// write, the new one), the value (Get), whether a CompareAndSwap swapped,
// and the round trips the operation took, retries included.
type Reply struct {
	Version    uint64
	Value      []byte
	Swapped    bool
	RoundTrips int
}

// Client runs the kv operations with one active message each (more only
// when it retries a busy bucket). It is safe for concurrent use.
type Client struct {
	caller call.Caller
	cfg    Config
	ids    HandlerIDs
	// Retries is the number of tries for a busy bucket (DefaultRetries).
	Retries int
}

// NewClient is a client of the table cfg served by handlers ids.
func NewClient(c call.Caller, cfg Config, ids HandlerIDs) *Client {
	return &Client{caller: c, cfg: cfg.withDefaults(), ids: ids, Retries: DefaultRetries}
}

// do calls handler with req until it is not busy.
func (c *Client) do(ctx context.Context, handler uint32, req []byte, rep *Reply) ([]byte, error) {
	tries := max(c.Retries, 1)
	for {
		rep.RoundTrips++
		out, err := c.caller.Call(ctx, handler, req)
		if err == nil {
			return out, nil
		}
		code, ok := call.Code(err)
		if !ok {
			return nil, err
		}
		if code != CodeBusy || rep.RoundTrips >= tries {
			return nil, codeErrors.Of("kv: handler failed", code, err)
		}
		if err := backoff(ctx, rep.RoundTrips); err != nil {
			return nil, err
		}
	}
}

// backoff waits before try+1 of an operation that met a busy bucket:
// nothing after the first try, then 1 µs doubling to 1 ms, so that a
// writer that lost its CPU (a one-sided writer holds the lock across
// round trips) gets time to finish instead of the reader running out of
// tries in a burst.
func backoff(ctx context.Context, try int) error {
	if try <= 1 {
		return nil
	}
	d := time.Microsecond << min(try-2, 10)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Get looks key up: hash, probe and copy on the node, one round trip.
// The value is a copy. ErrNotFound if absent.
func (c *Client) Get(ctx context.Context, key Key) (Reply, error) {
	var rep Reply
	var req [KeySize]byte
	out, err := c.do(ctx, c.ids.Get, AppendGet(req[:0], key), &rep)
	if err != nil {
		return rep, err
	}
	v, val, err := c.cfg.DecodeGet(out)
	if err != nil {
		return rep, err
	}
	rep.Version, rep.Value = v, val // the reply is ours (call.Caller)
	return rep, nil
}

// Put stores value under key; Reply.Version is the new version.
func (c *Client) Put(ctx context.Context, key Key, value []byte) (Reply, error) {
	var rep Reply
	req, err := c.cfg.AppendPut(make([]byte, 0, c.cfg.PutRequestSize()), key, value)
	if err != nil {
		return rep, err
	}
	out, err := c.do(ctx, c.ids.Put, req, &rep)
	if err != nil {
		return rep, err
	}
	rep.Version, err = DecodeVersion(out)
	return rep, err
}

// Delete removes key; Reply.Version is the bucket's new version.
func (c *Client) Delete(ctx context.Context, key Key) (Reply, error) {
	var rep Reply
	out, err := c.do(ctx, c.ids.Delete, AppendDelete(nil, key), &rep)
	if err != nil {
		return rep, err
	}
	rep.Version, err = DecodeVersion(out)
	return rep, err
}

// CompareAndSwap replaces key's value with value if key's version is
// expected. Reply.Swapped says whether it did; Reply.Version is then the
// new version, otherwise the current one.
func (c *Client) CompareAndSwap(ctx context.Context, key Key, expected uint64, value []byte) (Reply, error) {
	var rep Reply
	req, err := c.cfg.AppendCAS(make([]byte, 0, c.cfg.CASRequestSize()), key, expected, value)
	if err != nil {
		return rep, err
	}
	out, err := c.do(ctx, c.ids.CAS, req, &rep)
	if err != nil {
		return rep, err
	}
	rep.Version, rep.Swapped, err = DecodeCAS(out)
	return rep, err
}

// RDMAClient looks keys up as a client of a one-sided RDMA store does:
// READ the probe window of bucket headers (one round trip; a second if
// the window wraps past the last bucket), find the key, then READ its
// value slot (one more). So a GET takes at least two round trips.
//
// A value is accepted when its slot's version equals the bucket version
// read in the first READ, which catches a value replaced between the two
// READs; like any one-sided scheme without per-cache-line versions it
// cannot see a write that is in progress during the second READ itself.
// The active-message GET has no such gap: it rereads the version on the
// node after its copy.
type RDMAClient struct {
	r   call.Reader
	cfg Config
	// Retries is the number of tries when a bucket is locked or changed
	// (DefaultRDMARetries).
	Retries int
}

// NewRDMAClient is a one-sided client of the table cfg read through r.
func NewRDMAClient(r call.Reader, cfg Config) *RDMAClient {
	return &RDMAClient{r: r, cfg: cfg.withDefaults(), Retries: DefaultRDMARetries}
}

// Get looks key up with READs.
func (c *RDMAClient) Get(ctx context.Context, key Key) (Reply, error) {
	var rep Reply
	tries := max(c.Retries, 1)
	for try := 1; ; try++ {
		err := c.get(ctx, key, &rep)
		if !errors.Is(err, ErrBusy) || try >= tries {
			return rep, err
		}
		if err := backoff(ctx, try); err != nil {
			return rep, err
		}
	}
}

// bucketAt returns the header of probe p from home and its bucket index,
// reading the next window of headers with one READ where p starts one
// (the first probe, and the wrap to bucket 0): a READ reaches to the end
// of the probe window or of the table.
func (c *RDMAClient) bucketAt(ctx context.Context, home, p uint32, window *[]byte, rep *Reply) ([]byte, uint32, error) {
	cfg := c.cfg
	i := (home + p) & (cfg.Buckets - 1)
	if p == 0 || i == 0 {
		n := min(cfg.Probes-p, cfg.Buckets-i)
		rep.RoundTrips++
		w, err := c.r.Read(ctx, uint64(i)*BucketSize, n*BucketSize)
		if err != nil {
			return nil, i, err
		}
		if len(w) != int(n*BucketSize) {
			return nil, i, fmt.Errorf("kv: READ of %d bytes gave %d", n*BucketSize, len(w))
		}
		*window = w
	}
	b := (*window)[:BucketSize]
	*window = (*window)[BucketSize:]
	return b, i, nil
}

func (c *RDMAClient) get(ctx context.Context, key Key, rep *Reply) error {
	cfg := c.cfg
	home := cfg.Home(key)
	var window []byte
	for p := uint32(0); p < cfg.Probes; p++ {
		b, i, err := c.bucketAt(ctx, home, p, &window, rep)
		if err != nil {
			return err
		}
		v := binary.LittleEndian.Uint64(b[BucketVersion:])
		if v&1 == 1 {
			return ErrBusy
		}
		state := binary.LittleEndian.Uint32(b[BucketState:])
		if state == StateEmpty {
			return ErrNotFound
		}
		if state != StateUsed || Key(b[BucketKey:BucketKey+KeySize]) != key {
			continue
		}
		vlen := binary.LittleEndian.Uint32(b[BucketVLen:])
		if vlen > cfg.ValueSize {
			return fmt.Errorf("kv: bucket %d says %d value bytes, at most %d", i, vlen, cfg.ValueSize)
		}
		rep.RoundTrips++
		s, err := c.r.Read(ctx, cfg.SlotsOffset()+uint64(i)*cfg.SlotSize(), SlotData+vlen)
		if err != nil {
			return err
		}
		if len(s) != int(SlotData+vlen) {
			return fmt.Errorf("kv: READ of %d bytes gave %d", SlotData+vlen, len(s))
		}
		if binary.LittleEndian.Uint64(s[SlotVersion:]) != v {
			return ErrBusy
		}
		rep.Version, rep.Value = v, append([]byte(nil), s[SlotData:]...)
		return nil
	}
	return ErrNotFound
}

// PeerIDs finds the handler ids of the kv program a node installed,
// through the host library (the node describes its handlers).
func PeerIDs(ctx context.Context, p *peer.Peer) (HandlerIDs, error) {
	var ids HandlerIDs
	err := call.PeerIDs(ctx, p, "kv", ids.handlerIDs()...)
	return ids, err
}
