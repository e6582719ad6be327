package vm

import (
	"io"
	"math/rand/v2"
	"time"
)

// LocalEnv is an Env for tools and tests: a clock, a seeded random source,
// a trace writer, and sends and forwards recorded instead of delivered. It
// is not safe for concurrent use.
type LocalEnv struct {
	// Sent and Forwards record every accepted send and forward, in order.
	Sent     []Message
	Forwards []Forward
	// Err, when not nil, makes Send and Forward refuse with it (and record
	// nothing), so that tests can see a handler's failure path.
	Err error

	start time.Time
	rng   *rand.Rand
	trace io.Writer
}

// Message is a message that LocalEnv.Send accepted.
type Message struct {
	Node    uint64
	Handler uint32
	Payload []byte // a copy
}

// NewLocalEnv returns an env whose clock starts at its creation, whose
// random numbers are PCG's with seeds (seed, 0), so that the same seed
// gives the same sequence, and whose traces go to trace verbatim (nil
// drops them).
func NewLocalEnv(seed uint64, trace io.Writer) *LocalEnv {
	return &LocalEnv{start: time.Now(), rng: rand.New(rand.NewPCG(seed, 0)), trace: trace}
}

// Now returns the nanoseconds since NewLocalEnv, from the monotonic clock.
func (e *LocalEnv) Now() uint64 { return uint64(time.Since(e.start)) }

// Random returns the next number of the seeded sequence.
func (e *LocalEnv) Random() uint64 { return e.rng.Uint64() }

// Trace writes b to the trace writer, if there is one; a write error is
// dropped, as a full log would drop the line.
func (e *LocalEnv) Trace(b []byte) {
	if e.trace != nil {
		e.trace.Write(b)
	}
}

// Send records a copy of the message.
func (e *LocalEnv) Send(node uint64, handler uint32, payload []byte) error {
	if e.Err != nil {
		return e.Err
	}
	e.Sent = append(e.Sent, Message{Node: node, Handler: handler, Payload: append([]byte{}, payload...)})
	return nil
}

// Forward records the forward.
func (e *LocalEnv) Forward(node uint64, handler uint32) error {
	if e.Err != nil {
		return e.Err
	}
	e.Forwards = append(e.Forwards, Forward{Node: node, Handler: handler})
	return nil
}
