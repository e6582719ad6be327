package nicrt

import (
	"fmt"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/nicrt/wire"
	"github.com/naam-project/naam/vm"
)

// Handler ids: the built-in verbs' (spec/nic.md, Built-in verbs), the
// wire's contract. Install hands out ids from FirstHandlerID up and never
// gives an id out twice, so a late message for an uninstalled handler
// cannot reach a newer one.
const (
	HandlerRead     = wire.HandlerRead
	HandlerWrite    = wire.HandlerWrite
	HandlerCAS      = wire.HandlerCAS
	HandlerFetchAdd = wire.HandlerFetchAdd
	FirstHandlerID  = wire.FirstHandlerID
)

// Message is one active message for this node, as the network side
// decoded it.
type Message struct {
	Tenant    uint64 // the tenant the sender is authenticated as
	Handler   uint32 // a handler id from Install, or a built-in verb
	RequestID uint64 // unique per sender and tenant
	SrcNode   uint64 // the sender
	// Payload is the request. It must stay unchanged until its sink's
	// Done runs: the handler reads it in place.
	Payload []byte
}

// Sink is where what becomes of one message goes. Whoever submits the
// message passes its sink, as net/http passes a handler its
// ResponseWriter; the model reaches nothing else of whoever feeds it.
// A sink may also be an Outbox (it then carries what the message's
// handler sends and forwards) and a Holder (it holds its reply back to
// send it with the next ones).
type Sink interface {
	// Done receives the outcome exactly once: on the core that ran the
	// message, or at once on the submitter's goroutine when the message
	// is rejected. r.Data is the core's buffer, valid only during Done.
	// Done runs on a core: it must not block for long.
	Done(r Reply)
}

// SinkFunc is a Sink that calls f.
type SinkFunc func(Reply)

// Done calls f(r).
func (f SinkFunc) Done(r Reply) { f(r) }

// Holder is a Sink that may hold its reply back, to send it together with
// the replies that follow it on the same core (the network side writes a
// burst's replies in one system call). Held names what the core tells
// once it has nothing more queued: the same Flusher for every sink whose
// replies wait together, so that the core tells it once. A core tells
// the Flushers of the messages it ran since it last went idle, and no one
// else.
type Holder interface {
	Sink
	Held() Flusher
}

// Flusher sends what a core's runs held back: Flush runs on whoever ran
// core (its goroutine, or a submitter running a message inline) once the
// core has nothing queued.
type Flusher interface {
	Flush(core int)
}

// Status is what became of a message: the runtime status that the wire
// carries (wire.RuntimeStatus, whose names, sentinel errors and
// Rejected it has).
type Status = wire.RuntimeStatus

// The statuses (wire.RuntimeOK …).
const (
	StatusOK             = wire.RuntimeOK             // the handler replied: Reply.Data
	StatusError          = wire.RuntimeError          // the handler failed with Reply.Code
	StatusForwarded      = wire.RuntimeForwarded      // the handler forwarded the request; another node answers
	StatusFault          = wire.RuntimeFault          // the run faulted: Reply.Err is a *vm.Fault (or a run error)
	StatusUnknownHandler = wire.RuntimeUnknownHandler // no such handler (or it is being uninstalled)
	StatusForeignHandler = wire.RuntimeForeignHandler // the handler belongs to another tenant
	StatusOverloaded     = wire.RuntimeOverloaded     // the queues were full; the message was dropped
	StatusBadRequest     = wire.RuntimeBadRequest     // a built-in verb's payload is malformed
	StatusUnknownRegion  = wire.RuntimeUnknownRegion  // a built-in verb names no registered region
	StatusForeignRegion  = wire.RuntimeForeignRegion  // the region belongs to another tenant
	StatusWrongKey       = wire.RuntimeWrongKey       // the region's key does not match
	StatusOutOfBounds    = wire.RuntimeOutOfBounds    // the access leaves the region
	StatusReadOnly       = wire.RuntimeReadOnly       // a write to a read-only region
	StatusMisaligned     = wire.RuntimeMisaligned     // an atomic not on an 8-byte boundary
	StatusTooLarge       = wire.RuntimeTooLarge       // a READ longer than MaxReply
	StatusClosed         = wire.RuntimeClosed         // the NIC is closed
	StatusBadControl     = wire.RuntimeBadControl     // a control packet's op or body is malformed
	StatusControlFailed  = wire.RuntimeControlFailed  // the node refused a well-formed control op (verification, a name taken, …)
)

// Sentinel errors, one per rejection status, in Reply.Err (Status.Err).
var (
	ErrUnknownHandler = StatusUnknownHandler.Err()
	ErrForeignHandler = StatusForeignHandler.Err()
	ErrOverloaded     = StatusOverloaded.Err()
	ErrBadRequest     = StatusBadRequest.Err()
	ErrUnknownRegion  = StatusUnknownRegion.Err()
	ErrForeignRegion  = StatusForeignRegion.Err()
	ErrWrongKey       = StatusWrongKey.Err()
	ErrOutOfBounds    = StatusOutOfBounds.Err()
	ErrReadOnly       = StatusReadOnly.Err()
	ErrMisaligned     = StatusMisaligned.Err()
	ErrTooLarge       = StatusTooLarge.Err()
	ErrClosed         = StatusClosed.Err()
	ErrBadControl     = StatusBadControl.Err()
	ErrControlFailed  = StatusControlFailed.Err()
)

// Placement is where a request ran, and why.
type Placement uint8

const (
	PlaceNIC        Placement = iota // a NIC core
	PlaceHostBudget                  // a host core: the verified bound exceeds the NIC budget
	PlaceHostHelper                  // a host core: the handler calls a host-only helper
	PlaceHostSpill                   // a host core: the NIC queue was past the spill threshold
	PlaceHostForced                  // a host core: the placement policy is host (Config.Placement)
	PlaceHostSteer                   // a host core: the steering policy expected it done sooner there (PolicySteer)
	PlaceNone                        // nowhere: rejected before it was queued
	numPlacements   = PlaceNone
)

var placementNames = [...]string{"nic", "host-budget", "host-helper", "host-spill", "host-forced", "host-steer", "none"}

func (p Placement) String() string {
	if int(p) < len(placementNames) {
		return placementNames[p]
	}
	return fmt.Sprintf("Placement(%d)", uint8(p))
}

// OnHost reports whether the placement is a host core.
func (p Placement) OnHost() bool { return p >= PlaceHostBudget && p <= PlaceHostSteer }

// Reply is how a message ended. Sink.Done receives it on the core that
// ran the message (or on Submit's caller for a rejection).
type Reply struct {
	Status Status
	// Data is the reply (StatusOK). It is the core's buffer: valid only
	// until Done returns, so copy what you keep.
	Data []byte
	// Code is the handler's error code (StatusError).
	Code int32
	// Forward is where the request went when the handler forwarded it:
	// always with StatusForwarded, and with StatusFault when the run failed
	// after forwarding (the request has left all the same).
	Forward *vm.Forward
	// Err is the *vm.Fault or run error (StatusFault) or the sentinel of a
	// rejection; nil otherwise.
	Err error
	// Pos is where in the handler's source the run failed (StatusFault,
	// StatusError): the object's line-table entry of the faulting
	// instruction or of the exit that returned the code. Its Line is 0
	// when the object has no position there.
	Pos bytecode.Line
	// Placement and Core say where it ran (Core -1 if it did not).
	Placement Placement
	Core      int
	// Insns is the instructions the handler executed (the modelled count
	// for a built-in verb).
	Insns uint64
	// ModelNanos is the modelled service time on the DPU (spec/nic.md,
	// Cost model), without queueing.
	ModelNanos uint64
}

// Failure is a run of an installed handler that faulted or failed with
// an error code, as Config.Failed hears of it.
type Failure struct {
	Handler HandlerInfo
	Status  Status        // StatusFault or StatusError
	Code    int32         // StatusError: the handler's code
	Pos     bytecode.Line // Reply.Pos
	Err     error         // StatusFault: the *vm.Fault or run error
}

func rejection(s Status) Reply {
	return Reply{Status: s, Err: s.Err(), Placement: PlaceNone, Core: -1}
}

// Outbox is where messages that handlers send or forward leave the node:
// Config.Outbox for every message, or else the message's own sink if it
// is one (the network side's sinks are). Both methods run on a core,
// during the handler's run, so they should not block for long.
type Outbox interface {
	// Send sends payload as a one-way message to handler on node. payload
	// is valid only during the call. handler is the number the handler
	// passed (spec/nic.md, Handler ids in send and forward).
	Send(from Origin, node uint64, handler uint32, payload []byte) error
	// Forward passes the request being run to handler on node, which
	// answers the original caller. req, including its payload, is valid
	// only during the call.
	Forward(from Origin, req *Message, node uint64, handler uint32) error
}

// Origin is the run that sends or forwards.
type Origin struct {
	Tenant  uint64
	Handler uint32   // the node-wide id of the running handler
	Program *Program // the program it belongs to (Program.ResolveLocal maps object ids)
}
