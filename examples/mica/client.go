package mica

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/naam-project/naam/examples/call"
	"github.com/naam-project/naam/examples/internal/retry"
	"github.com/naam-project/naam/host"
)

// DefaultRetries is how many times a Client tries an operation that met
// a busy bucket (CodeBusy) before it gives up with ErrBusy, backing off
// between tries (retry.Backoff). A handler holds a bucket for one run.
const DefaultRetries = 8

// DefaultRDMARetries is the same for an RDMAClient, whose one-sided
// writer holds a bucket for five round trips.
const DefaultRDMARetries = 64

// HandlerIDs are the node-wide ids of an installed mica program's
// handlers.
type HandlerIDs struct {
	Get, Put, Delete uint32
}

// PeerIDs finds the handler ids of the mica program a node installed,
// through the host library (the node describes its handlers).
func PeerIDs(ctx context.Context, p *host.Peer) (HandlerIDs, error) {
	var ids HandlerIDs
	err := call.PeerIDs(ctx, p, "mica", call.HandlerID{Name: "mica." + HandlerGet, ID: &ids.Get},
		call.HandlerID{Name: "mica." + HandlerPut, ID: &ids.Put}, call.HandlerID{Name: "mica." + HandlerDelete, ID: &ids.Delete})
	return ids, err
}

// ProgramIDs finds the handler ids of p, a mica program installed on this
// node (host.Node.InstallWith).
func ProgramIDs(p *host.Program) (HandlerIDs, error) {
	var ids HandlerIDs
	found := 0
	for _, h := range p.Handlers() {
		switch h.Name {
		case HandlerGet:
			ids.Get = h.ID
		case HandlerPut:
			ids.Put = h.ID
		case HandlerDelete:
			ids.Delete = h.ID
		default:
			continue
		}
		found++
	}
	if found != 3 {
		return ids, fmt.Errorf("mica: the program has %d of the handlers get, put and delete", found)
	}
	return ids, nil
}

// Reply is what an operation gave: the entry's sequence number (after a
// PUT, the new one), the value (Get), and the round trips the operation
// took, retries included.
type Reply struct {
	Seq        uint64
	Value      []byte
	RoundTrips int
}

// Client runs the operations with one active message each (more only
// when it retries a busy bucket). It is safe for concurrent use.
type Client struct {
	caller call.Caller
	cfg    Config
	ids    HandlerIDs
	// Retries is the number of tries for a busy bucket (DefaultRetries).
	Retries int
}

// NewClient is a client of the store cfg served by handlers ids.
func NewClient(c call.Caller, cfg Config, ids HandlerIDs) *Client {
	return &Client{caller: c, cfg: cfg.withDefaults(), ids: ids, Retries: DefaultRetries}
}

func (c *Client) do(ctx context.Context, handler uint32, req []byte, rep *Reply) ([]byte, error) {
	h := retry.Handler{Caller: c.caller, Busy: CodeBusy, Tries: c.Retries, Codes: codeErrors, What: "mica: handler failed"}
	return h.Call(ctx, handler, req, &rep.RoundTrips)
}

// Get looks key up in one round trip. ErrNotFound if the store holds no
// live entry of it (never stored, deleted, evicted by the log's wrap or
// displaced from a full bucket).
func (c *Client) Get(ctx context.Context, key Key) (Reply, error) {
	var rep Reply
	var req [KeySize]byte
	out, err := c.do(ctx, c.ids.Get, AppendKey(req[:0], key), &rep)
	if err != nil {
		return rep, err
	}
	seq, val, err := c.cfg.DecodeGet(out)
	if err != nil {
		return rep, err
	}
	rep.Seq, rep.Value = seq, val // the reply is ours (call.Caller)
	return rep, nil
}

// Put stores value under key; Reply.Seq is the new entry's sequence
// number.
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
	rep.Seq, err = DecodeSeq(out)
	return rep, err
}

// Delete removes key from the index; Reply.Seq is the sequence number of
// the entry it pointed at.
func (c *Client) Delete(ctx context.Context, key Key) (Reply, error) {
	var rep Reply
	out, err := c.do(ctx, c.ids.Delete, AppendKey(nil, key), &rep)
	if err != nil {
		return rep, err
	}
	rep.Seq, err = DecodeSeq(out)
	return rep, err
}

// RDMAClient works as a client of a one-sided RDMA store must: a GET
// READs the key's bucket, then the entry of each slot whose tag matches
// (two round trips, more on a tag collision); a PUT locks the bucket and
// writes the entry and the slot with one verb each.
type RDMAClient struct {
	r   call.Reader
	cfg Config
	// Retries is the number of tries when a bucket is locked
	// (DefaultRDMARetries).
	Retries int
}

// NewRDMAClient is a one-sided client of the store cfg read through r.
func NewRDMAClient(r call.Reader, cfg Config) *RDMAClient {
	return &RDMAClient{r: r, cfg: cfg.withDefaults(), Retries: DefaultRDMARetries}
}

// read READs n bytes at off, counting the round trip.
func (c *RDMAClient) read(ctx context.Context, off uint64, n uint64, rep *Reply) ([]byte, error) {
	rep.RoundTrips++
	b, err := c.r.Read(ctx, off, uint32(n))
	if err != nil {
		return nil, err
	}
	if uint64(len(b)) != n {
		return nil, fmt.Errorf("mica: READ of %d bytes gave %d", n, len(b))
	}
	return b, nil
}

// entry READs the entry of stamp st and returns it if it holds key and
// both its stamps are st.
func (c *RDMAClient) entry(ctx context.Context, st uint64, key Key, rep *Reply) ([]byte, bool, error) {
	cfg := c.cfg
	e, err := c.read(ctx, cfg.EntryOffset(st-1), cfg.EntrySize(), rep)
	if err != nil {
		return nil, false, err
	}
	ok := binary.LittleEndian.Uint64(e[EntryStamp:]) == st &&
		Key(e[EntryKey:EntryKey+KeySize]) == key &&
		binary.LittleEndian.Uint64(e[cfg.EntryStampEnd():]) == st &&
		binary.LittleEndian.Uint32(e[EntryVLen:]) <= cfg.ValueSize
	return e, ok, nil
}

// Get looks key up with READs.
func (c *RDMAClient) Get(ctx context.Context, key Key) (Reply, error) {
	var rep Reply
	cfg := c.cfg
	bucket, err := c.read(ctx, cfg.BucketOffset(cfg.Bucket(key)), cfg.BucketSize(), &rep)
	if err != nil {
		return rep, err
	}
	tag := Tag(key)
	for w := range cfg.Ways {
		sl := binary.LittleEndian.Uint64(bucket[BucketSlots+8*w:])
		st := sl & StampMask
		if st == 0 || sl>>SlotTagShift != tag {
			continue
		}
		e, ok, err := c.entry(ctx, st, key, &rep)
		if err != nil {
			return rep, err
		}
		if ok {
			vlen := binary.LittleEndian.Uint32(e[EntryVLen:])
			rep.Seq, rep.Value = st-1, append([]byte(nil), e[EntryValue:EntryValue+vlen]...)
			return rep, nil
		}
	}
	return rep, ErrNotFound
}

// ErrNoVerbs is RDMAClient.Put's error when its Reader cannot write.
var ErrNoVerbs = errors.New("mica: the RDMA client's reader has no WRITE, CAS and FETCH-ADD (call.Verbs)")

// Put stores value under key with one-sided verbs, as the put handler
// does in one message:
//
//  1. READ the bucket (its version and slots),
//  2. CAS the version from v to v+1 (the lock),
//  3. FETCH-ADD the tail: the entry's sequence number,
//  4. WRITE the entry's trailing stamp, then 5. the rest of it,
//  6. READ the entry of each live slot whose tag matches (to find the key),
//  7. WRITE the chosen slot, 8. FETCH-ADD 1 to the version (unlocked).
//
// Seven round trips or more where the handler needs one. A client that
// dies between 2 and 8 leaves the bucket locked: one-sided writers need
// a lease or a recovery scheme that this example does not have.
func (c *RDMAClient) Put(ctx context.Context, key Key, value []byte) (Reply, error) {
	var rep Reply
	vb, ok := c.r.(call.Verbs)
	if !ok {
		return rep, ErrNoVerbs
	}
	if len(value) > int(c.cfg.ValueSize) {
		return rep, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(value), c.cfg.ValueSize)
	}
	err := retry.Do(ctx, c.Retries, ErrBusy, func() error { return c.put(ctx, vb, key, value, &rep) })
	return rep, err
}

func (c *RDMAClient) put(ctx context.Context, vb call.Verbs, key Key, value []byte, rep *Reply) error {
	cfg := c.cfg
	b := cfg.Bucket(key)
	boff := cfg.BucketOffset(b)
	bucket, err := c.read(ctx, boff, cfg.BucketSize(), rep)
	if err != nil {
		return err
	}
	v := binary.LittleEndian.Uint64(bucket[BucketVersion:])
	if v&1 == 1 {
		return ErrBusy
	}
	rep.RoundTrips++
	if _, swapped, err := vb.CompareAndSwap(ctx, boff+BucketVersion, v, v+1); err != nil {
		return err
	} else if !swapped {
		return ErrBusy
	}
	// The bucket is ours, and unchanged since the READ: the CAS saw v.
	unlock := func() error {
		rep.RoundTrips++
		_, err := vb.FetchAdd(ctx, boff+BucketVersion, 1)
		return err
	}
	rep.RoundTrips++
	seq, err := vb.FetchAdd(ctx, StoreTail, 1)
	if err != nil {
		return errors.Join(err, unlock())
	}
	stamp := seq + 1
	eoff := cfg.EntryOffset(seq)
	var st8 [8]byte
	binary.LittleEndian.PutUint64(st8[:], stamp)
	rep.RoundTrips++
	if err := vb.Write(ctx, eoff+cfg.EntryStampEnd(), st8[:]); err != nil {
		return errors.Join(err, unlock())
	}
	e := make([]byte, cfg.EntryStampEnd())
	binary.LittleEndian.PutUint64(e[EntryStamp:], stamp)
	copy(e[EntryKey:], key[:])
	binary.LittleEndian.PutUint32(e[EntryVLen:], uint32(len(value)))
	copy(e[EntryValue:], value)
	rep.RoundTrips++
	if err := vb.Write(ctx, eoff, e); err != nil {
		return errors.Join(err, unlock())
	}

	tail, tag := stamp, Tag(key) // the tail is at least our own seq + 1
	target, free, oldest, oldestStamp := cfg.Ways, cfg.Ways, uint32(0), uint64(StampMask+1)
	for w := range cfg.Ways {
		sl := binary.LittleEndian.Uint64(bucket[BucketSlots+8*w:])
		st := sl & StampMask
		if !cfg.Live(st, tail) {
			if free == cfg.Ways {
				free = w
			}
			continue
		}
		if sl>>SlotTagShift == tag {
			_, same, err := c.entry(ctx, st, key, rep)
			if err != nil {
				return errors.Join(err, unlock())
			}
			if same {
				target = w
				break
			}
		}
		if st < oldestStamp {
			oldestStamp, oldest = st, w
		}
	}
	if target == cfg.Ways {
		target = free
	}
	if target == cfg.Ways {
		target = oldest
	}
	binary.LittleEndian.PutUint64(st8[:], tag<<SlotTagShift|stamp)
	rep.RoundTrips++
	if err := vb.Write(ctx, boff+BucketSlots+8*uint64(target), st8[:]); err != nil {
		return errors.Join(err, unlock())
	}
	rep.Seq = seq
	return unlock()
}
