package memcache

import (
	"context"
	"errors"
	"strconv"

	"github.com/naam-project/naam/internal/bench/workload"
)

// ErrMissing is Records.Get's error for a record the server does not
// hold (the benchmark loads every record first, so this is a failure).
var ErrMissing = errors.New("memcache: record missing")

// Records are the benchmark's records on a memcached: record n has the
// key KeyOf(n). Its Get and Put have the shape of workload.Target's; each
// is one request, one round trip.
type Records struct {
	Client *Client
}

// KeyOf is record n's key: "user" and n in 12 decimal digits, the key
// examples/kv uses for the same record.
func KeyOf(n uint64) string {
	s := strconv.FormatUint(n, 10)
	const digits = "000000000000"
	if len(s) < len(digits) {
		s = digits[len(s):] + s
	}
	return "user" + s
}

// Get fetches record key.
func (r Records) Get(ctx context.Context, key uint64) (int, error) {
	_, found, err := r.Client.Get(ctx, KeyOf(key))
	if err == nil && !found {
		err = ErrMissing
	}
	return 1, err
}

// Put stores record key.
func (r Records) Put(ctx context.Context, key uint64, value []byte) (int, error) {
	return 1, r.Client.Set(ctx, KeyOf(key), value)
}

// Baseline starts memcached on loopback, connects one pipelined client
// (outstanding requests in flight) per benchmark client, and loads
// records of valueSize bytes: the KV benchmark's memcached mode. stop
// closes the clients and the server.
func Baseline(ctx context.Context, clients, outstanding int, records uint64, valueSize int) (targets []workload.Target, stop func(), err error) {
	srv, err := Start(ctx, ServerConfig{})
	if err != nil {
		return nil, nil, err
	}
	var conns []*Client
	stop = func() {
		for _, c := range conns {
			c.Close()
		}
		srv.Close()
	}
	for range clients {
		c, err := Dial(ctx, srv.Addr, outstanding)
		if err != nil {
			stop()
			return nil, nil, err
		}
		conns = append(conns, c)
		targets = append(targets, Records{Client: c})
	}
	if err := workload.Load(ctx, targets, records, valueSize, outstanding); err != nil {
		stop()
		return nil, nil, err
	}
	return targets, stop, nil
}
