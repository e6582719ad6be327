package clientruntest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"unsafe"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/clientrun"
	"github.com/naam-project/naam/vm"
)

// Twin runs every request of an object twice, at the node and at the
// client, and says where the two differ: the differential test of
// client-side execution. The node is a vm.Machine on the node's regions;
// the client a clientrun.Runner whose MemFetcher serves a copy of them,
// the client's view of the same memory. A request to a handler that is
// not client-eligible runs at the node on both copies, which keeps them
// equal. It is not safe for concurrent use.
type Twin struct {
	Runner  *clientrun.Runner
	Fetcher *MemFetcher
	// Node and Client are the two copies of the regions, by index.
	Node, Client [][]byte

	obj       *bytecode.Object
	prog      *vm.Program
	m         *vm.Machine
	replySize int
}

// TwinResult is one request's outcome at both places.
type TwinResult struct {
	Node   vm.Result
	Client clientrun.Result
	// AtClient says the client ran it (the handler is client-eligible).
	AtClient bool
}

// NewTwin runs obj's handlers over regions (copied twice: the caller's
// slices are not used). The env serves the node's now and random (nil:
// vm.NewLocalEnv(1, nil)); give cfg.Env the same for handlers that call
// them.
func NewTwin(obj *bytecode.Object, regions [][]byte, cfg clientrun.Config, env vm.Env) (*Twin, error) {
	if len(regions) != len(obj.Regions) {
		return nil, fmt.Errorf("clientruntest: %d regions for an object with %d", len(regions), len(obj.Regions))
	}
	r, err := NewRunner(obj, cfg)
	if err != nil {
		return nil, err
	}
	if env == nil {
		env = vm.NewLocalEnv(1, nil)
	}
	w := &Twin{Runner: r, obj: obj, prog: r.Program(), replySize: cfg.ReplySize,
		m: vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(env)})}
	if w.replySize <= 0 {
		w.replySize = clientrun.DefaultReplySize
	}
	for i, or := range obj.Regions {
		if uint64(len(regions[i])) != or.Size {
			return nil, fmt.Errorf("clientruntest: region %d (%s) has %d bytes, the object says %d", i, or.Name, len(regions[i]), or.Size)
		}
		w.Node = append(w.Node, alignedCopy(regions[i]))
		w.Client = append(w.Client, alignedCopy(regions[i]))
	}
	w.Fetcher = NewMemFetcher(w.Client...)
	return w, nil
}

// AtNode runs one request at the node on regions (Node or Client).
func (w *Twin) AtNode(regions [][]byte, handler string, call clientrun.Call) (vm.Result, error) {
	var h *bytecode.Handler
	for i := range w.obj.Handlers {
		if w.obj.Handlers[i].Name == handler {
			h = &w.obj.Handlers[i]
		}
	}
	if h == nil {
		return vm.Result{}, fmt.Errorf("clientruntest: no handler %q", handler)
	}
	mems := make([]vm.RegionMem, len(regions))
	for i, or := range w.obj.Regions {
		mems[i] = vm.RegionMem{Data: regions[i], Writable: or.Writable}
	}
	reply := w.replySize
	if call.ReplySize > 0 {
		reply = call.ReplySize
	}
	res, err := w.m.Invoke(w.prog, &vm.Invocation{Entry: h.Entry, Handler: h.ID, SrcNode: call.SrcNode, Tenant: call.Tenant,
		RequestID: call.RequestID, Request: call.Request, Reply: alignedBuffer(reply), Regions: mems})
	res.Reply = bytes.Clone(res.Reply)
	return res, err
}

// Call runs call at both places and returns an error that says how they
// differ: in outcome, reply, error code or fault, or in the region bytes
// afterwards.
func (w *Twin) Call(ctx context.Context, call clientrun.Call) (TwinResult, error) {
	var out TwinResult
	node, nerr := w.AtNode(w.Node, call.Handler, call)
	out.Node = node
	var cerr error
	switch err := w.Runner.Eligible(call.Handler); {
	case err == nil:
		out.AtClient = true
		out.Client, cerr = w.Runner.Run(ctx, w.Fetcher, call)
	case errors.As(err, new(*clientrun.NotEligibleError)):
		out.Client.Result, cerr = w.AtNode(w.Client, call.Handler, call)
	default:
		return out, err
	}
	if d := diffResults(node, nerr, out.Client.Result, cerr); d != "" {
		return out, fmt.Errorf("%s %x: %s", call.Handler, call.Request, d)
	}
	if d := w.DiffRegions(); d != "" {
		return out, fmt.Errorf("%s %x: %s", call.Handler, call.Request, d)
	}
	return out, nil
}

// DiffRegions says where the node's and the client's regions differ, or "".
func (w *Twin) DiffRegions() string {
	for i := range w.Node {
		if !bytes.Equal(w.Node[i], w.Client[i]) {
			at := 0
			for w.Node[i][at] == w.Client[i][at] {
				at++
			}
			return fmt.Sprintf("region %d (%s) differs from byte %d: node %x, client %x", i, w.obj.Regions[i].Name, at,
				w.Node[i][at:min(at+16, len(w.Node[i]))], w.Client[i][at:min(at+16, len(w.Client[i]))])
		}
	}
	return ""
}

// diffResults compares two runs: "" if they ended alike.
func diffResults(a vm.Result, aerr error, b vm.Result, berr error) string {
	var af, bf *vm.Fault
	errors.As(aerr, &af)
	errors.As(berr, &bf)
	switch {
	case (aerr == nil) != (berr == nil):
		return fmt.Sprintf("node: %v, client: %v", aerr, berr)
	case aerr != nil && (af == nil || bf == nil || af.Kind != bf.Kind || af.PC != bf.PC):
		return fmt.Sprintf("node faulted with %v, client with %v", aerr, berr)
	case aerr != nil:
		return ""
	case a.Outcome != b.Outcome || a.R0 != b.R0 || a.Code != b.Code || a.Exit != b.Exit || a.Insns != b.Insns:
		return fmt.Sprintf("node %v r0=%d code=%d exit=%d insns=%d, client %v r0=%d code=%d exit=%d insns=%d",
			a.Outcome, a.R0, a.Code, a.Exit, a.Insns, b.Outcome, b.R0, b.Code, b.Exit, b.Insns)
	case !bytes.Equal(a.Reply, b.Reply):
		return fmt.Sprintf("node replied %x, client %x", a.Reply, b.Reply)
	case (a.Forward == nil) != (b.Forward == nil):
		return fmt.Sprintf("node forward %v, client %v", a.Forward, b.Forward)
	}
	return ""
}

func alignedBuffer(n int) []byte {
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), len(words)*8)[:n]
}

func alignedCopy(b []byte) []byte {
	c := alignedBuffer(len(b))
	copy(c, b)
	return c
}
