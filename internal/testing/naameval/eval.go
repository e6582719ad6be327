package naameval

import (
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/lang"
)

// Env is what the helpers need from the node: the same method set as the
// VM's Env, so a *vm.LocalEnv serves both sides of a differential test.
type Env interface {
	Now() uint64
	Random() uint64
	Trace(b []byte)
	// Send and Forward return nil when the message left; an error is a
	// refusal (send gives false, forward fails with bytecode.FailForward).
	Send(node uint64, handler uint32, payload []byte) error
	Forward(node uint64, handler uint32) error
}

// Context holds the request's context fields (spec/abi.md, Context).
type Context struct {
	SrcNode, Tenant, RequestID uint64
}

// Call is one request for one handler.
type Call struct {
	Handler   string // the handler's name
	Request   []byte // the payload; never written
	ReplySize int    // bytes in the reply buffer
	// Regions holds each region's bytes, indexed by lang.Region.Index, of
	// exactly the region type's size. Writable regions are written in
	// place.
	Regions [][]byte
	Context Context
	Env     Env // nil: a clock and random source stuck at 0, sends and forwards refused
}

// Kind says how a run ended.
type Kind int

const (
	Replied   Kind = iota // the handler returned; Outcome.Reply holds the reply
	Failed                // fail(code) or a run-time check; Outcome.Code holds the code
	Forwarded             // forward succeeded; Outcome.ForwardNode/ForwardHandler say where
)

func (k Kind) String() string {
	switch k {
	case Replied:
		return "reply"
	case Failed:
		return "fail"
	case Forwarded:
		return "forwarded"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Outcome is the result of a run.
type Outcome struct {
	Kind           Kind
	Reply          []byte // Replied: the first Reply.Size bytes of the reply buffer
	Code           uint32 // Failed: the error code
	ForwardNode    uint64 // Forwarded
	ForwardHandler uint32
}

func (o Outcome) String() string {
	switch o.Kind {
	case Replied:
		return fmt.Sprintf("reply % x", o.Reply)
	case Failed:
		return fmt.Sprintf("fail %#x", o.Code)
	case Forwarded:
		return fmt.Sprintf("forwarded to node %d handler %d", o.ForwardNode, o.ForwardHandler)
	}
	return o.Kind.String()
}

// Errors Run returns for calls it cannot make; anything else it returns
// wraps ErrInternal.
var (
	ErrNoHandler = errors.New("naameval: no such handler")
	ErrRegions   = errors.New("naameval: region memory does not match the program")
	ErrInternal  = errors.New("naameval: internal error")
)

// Run evaluates handler call.Handler of a checked program for one request.
// info must come from a successful lang.Check; the syntax tree is reached
// through info.Handlers and info.Funcs.
func Run(info *lang.Info, call Call) (out Outcome, err error) {
	var h *lang.Handler
	for _, x := range info.Handlers {
		if x.Name() == call.Handler {
			h = x
		}
	}
	if h == nil {
		return Outcome{}, fmt.Errorf("%w: %q", ErrNoHandler, call.Handler)
	}
	if len(call.Regions) != len(info.Regions) {
		return Outcome{}, fmt.Errorf("%w: %d regions given, the program declares %d", ErrRegions, len(call.Regions), len(info.Regions))
	}
	for _, r := range info.Regions {
		if int64(len(call.Regions[r.Index])) != lang.Sizeof(r.Type()) {
			return Outcome{}, fmt.Errorf("%w: region %s has %d bytes, its type %s takes %d",
				ErrRegions, r.Name(), len(call.Regions[r.Index]), r.Type(), lang.Sizeof(r.Type()))
		}
	}
	if int64(len(call.Request)) < h.Args.Size {
		return Outcome{Kind: Failed, Code: bytecode.FailShortRequest}, nil
	}
	if int64(call.ReplySize) < h.Reply.Size {
		return Outcome{Kind: Failed, Code: bytecode.FailShortReply}, nil
	}
	m := &machine{info: info, req: &call, env: call.Env, reply: make([]byte, call.ReplySize)}
	if m.env == nil {
		m.env = nopEnv{}
	}

	defer func() {
		r := recover()
		if r == nil {
			return
		}
		switch r := r.(type) {
		case failure:
			out, err = Outcome{Kind: Failed, Code: r.code}, nil
		case forwarded:
			out, err = Outcome{Kind: Forwarded, ForwardNode: r.node, ForwardHandler: r.handler}, nil
		case internalError:
			out, err = Outcome{}, r.err
		default:
			out, err = Outcome{}, fmt.Errorf("%w: %v\n%s", ErrInternal, r, debug.Stack())
		}
	}()

	fr := &frame{vars: map[*lang.Var]place{}, handler: h}
	for i, v := range h.Params {
		f := h.Args.Fields[i]
		fr.vars[v] = place{mem: call.Request, off: f.Offset, typ: f.Type}
	}
	for i, v := range h.Results {
		f := h.Reply.Fields[i]
		fr.vars[v] = place{mem: m.reply, off: f.Offset, typ: f.Type}
	}
	m.block(fr, h.Decl.Body.List)
	return Outcome{Kind: Replied, Reply: append([]byte{}, m.reply[:h.Reply.Size]...)}, nil
}

// machine is the state of one run.
type machine struct {
	info  *lang.Info
	req   *Call
	env   Env
	reply []byte
}

// frame is one activation of a handler or fn: where each variable lives
// (a value variable's own bytes, or a reference's target).
type frame struct {
	vars    map[*lang.Var]place
	handler *lang.Handler // nil in a fn
	result  uint64        // a fn's return value
}

// Panics that unwind a run to Run.
type (
	failure   struct{ code uint32 }
	forwarded struct {
		node    uint64
		handler uint32
	}
	internalError struct{ err error }
)

func fail(code uint32) { panic(failure{code}) }

func internalf(format string, args ...any) {
	panic(internalError{fmt.Errorf("%w: "+format, append([]any{ErrInternal}, args...)...)})
}

type nopEnv struct{}

var errRefused = errors.New("naameval: no env")

func (nopEnv) Now() uint64                       { return 0 }
func (nopEnv) Random() uint64                    { return 0 }
func (nopEnv) Trace([]byte)                      {}
func (nopEnv) Send(uint64, uint32, []byte) error { return errRefused }
func (nopEnv) Forward(uint64, uint32) error      { return errRefused }
