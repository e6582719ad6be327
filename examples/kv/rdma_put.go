package kv

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/naam-project/naam/examples/call"
)

// ErrNoVerbs is RDMAClient.Put's error when its Reader cannot write.
var ErrNoVerbs = errors.New("kv: the RDMA client's reader has no WRITE, CAS and FETCH-ADD (call.Verbs)")

// Put stores value under key with one-sided verbs, as an RDMA client
// must without a handler on the node:
//
//  1. READ the probe window (a second READ if it wraps),
//  2. CAS the bucket's version from v to v+1 (the lock),
//  3. WRITE the slot: version v+2 and the value,
//  4. WRITE the header (key, vlen, state) if it changes,
//  5. FETCH-ADD 1 to the version (v+2: unlocked).
//
// Four or five round trips where the put handler needs one. A client
// that dies between 2 and 5 leaves the bucket locked: one-sided writers
// need a lease or recovery scheme that this example does not have.
func (c *RDMAClient) Put(ctx context.Context, key Key, value []byte) (Reply, error) {
	var rep Reply
	v, ok := c.r.(call.Verbs)
	if !ok {
		return rep, ErrNoVerbs
	}
	if len(value) > int(c.cfg.ValueSize) {
		return rep, fmt.Errorf("%w: %d bytes, at most %d", ErrTooLong, len(value), c.cfg.ValueSize)
	}
	tries := max(c.Retries, 1)
	for try := 1; ; try++ {
		err := c.put(ctx, v, key, value, &rep)
		if !errors.Is(err, ErrBusy) || try >= tries {
			return rep, err
		}
		if err := backoff(ctx, try); err != nil {
			return rep, err
		}
	}
}

func (c *RDMAClient) put(ctx context.Context, vb call.Verbs, key Key, value []byte, rep *Reply) error {
	cfg := c.cfg
	home := cfg.Home(key)
	var window []byte
	target, tv, found, haveFree := uint32(0), uint64(0), false, false
	var header []byte
	for p := uint32(0); p < cfg.Probes; p++ {
		b, i, err := c.bucketAt(ctx, home, p, &window, rep)
		if err != nil {
			return err
		}
		ver := binary.LittleEndian.Uint64(b[BucketVersion:])
		if ver&1 == 1 {
			return ErrBusy
		}
		state := binary.LittleEndian.Uint32(b[BucketState:])
		if state == StateUsed {
			if Key(b[BucketKey:BucketKey+KeySize]) == key {
				target, tv, found, header = i, ver, true, b
				break
			}
			continue
		}
		if !haveFree {
			target, tv, haveFree, header = i, ver, true, b
		}
		if state == StateEmpty {
			break
		}
	}
	if !found && !haveFree {
		return ErrFull
	}
	off := uint64(target) * BucketSize
	rep.RoundTrips++
	if _, swapped, err := vb.CompareAndSwap(ctx, off+BucketVersion, tv, tv+1); err != nil {
		return err
	} else if !swapped {
		return ErrBusy
	}
	slot := make([]byte, SlotData+len(value))
	binary.LittleEndian.PutUint64(slot[SlotVersion:], tv+2)
	copy(slot[SlotData:], value)
	rep.RoundTrips++
	if err := vb.Write(ctx, cfg.SlotsOffset()+uint64(target)*cfg.SlotSize(), slot); err != nil {
		return err
	}
	if !found || binary.LittleEndian.Uint32(header[BucketVLen:]) != uint32(len(value)) {
		h := make([]byte, BucketSize-BucketKey)
		copy(h, key[:])
		binary.LittleEndian.PutUint32(h[BucketVLen-BucketKey:], uint32(len(value)))
		binary.LittleEndian.PutUint32(h[BucketState-BucketKey:], StateUsed)
		rep.RoundTrips++
		if err := vb.Write(ctx, off+BucketKey, h); err != nil {
			return err
		}
	}
	rep.RoundTrips++
	if _, err := vb.FetchAdd(ctx, off+BucketVersion, 1); err != nil {
		return err
	}
	rep.Version = tv + 2
	return nil
}
