package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

type runFlags struct {
	args, regions, regionsOut []string
	replySize                 uint64
	replySizeSet              bool
	srcNode, tenant, reqID    uint64
	trace                     bool
	budget                    uint64
}

func newRunCmd() *cobra.Command {
	var fl runFlags
	cmd := &cobra.Command{
		Use:   "run OBJECT HANDLER [--arg NAME=VALUE ...] [--region NAME=FILE ...] [--region-out NAME=FILE ...] [--reply-size N] [--src-node N] [--tenant N] [--request-id N] [--trace]",
		Short: "Run one handler of an object in the interpreter",
		Long: `run verifies OBJECT (as naamc verify does) and runs HANDLER, a name or an id,
once in the checked interpreter under the handler ABI (spec/abi.md).

The request is built from the handler's argument layout; arguments not given
are zero. VALUE is, by the argument's type: an integer in decimal or
0x/0o/0b (negative only for signed types); true or false; for [u8; N] a
string or 0x and hex bytes, zero-padded; for other arrays comma-separated
elements (1,2,3), the rest zero; for a struct 0x and hex bytes. The reply
buffer has the size of the result layout unless --reply-size says otherwise.

Regions start zeroed; --region NAME=FILE fills one from a file no larger
than the region (a shorter file is zero-padded). After the run each
writable region that changed is reported ("region NAME changed") and
--region-out NAME=FILE writes a region's final bytes to FILE. send and
forward are recorded, not delivered; now() counts from the start of the
run, random() is seeded with 1, and trace() writes to stderr with --trace
(and is dropped without).

On stdout: one "NAME = VALUE" line per result ([u8; N] as a quoted string
when printable, otherwise 0x hex; other arrays as [a, b, ...]; structs as
0x hex), then the sends and forwards, the changed regions, and
"insns = N", the instructions executed.

Exit 0 when the handler replied or forwarded. Exit 1 when the object is
rejected by the verifier, when the handler failed ("FILE:LINE:COL:
handler get failed with code 1", a reserved code by name: "failed: index
out of range (code 0x7fffff01)"), or when the run faulted ("FILE:LINE:COL:
handler get faulted: ..."); the position is the failing check's or the
faulting instruction's, from the object's line table. Exit 2 for bad
flags, an unknown handler or argument, a value that does not fit, or a
file that cannot be read or written.`,
		Example: `  naamc run kv.nobj put --arg key=hello --arg value=42 --region-out table=table.bin
  naamc run kv.nobj get --arg key=hello --region table=table.bin
  naamc run kv.nobj 0 --arg key=0x68656c6c6f
  naamc run sum.nobj total --arg xs=1,2,3 --trace`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.replySizeSet = cmd.Flags().Changed("reply-size")
			return runHandler(cmd, args[0], args[1], &fl)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&fl.args, "arg", nil, "argument NAME=VALUE (repeatable)")
	f.StringArrayVar(&fl.regions, "region", nil, "fill region NAME from FILE: NAME=FILE (repeatable)")
	f.StringArrayVar(&fl.regionsOut, "region-out", nil, "write region NAME to FILE after the run: NAME=FILE (repeatable)")
	f.Uint64Var(&fl.replySize, "reply-size", 0, "reply buffer size in bytes (default: the size of the result bytecode.Layout)")
	f.Uint64Var(&fl.srcNode, "src-node", 0, "the request's source node (src_node())")
	f.Uint64Var(&fl.tenant, "tenant", 0, "the request's tenant (tenant())")
	f.Uint64Var(&fl.reqID, "request-id", 0, "the request's id (request_id())")
	f.BoolVar(&fl.trace, "trace", false, "write trace() output to stderr")
	f.Uint64Var(&fl.budget, "budget", 0, fmt.Sprintf("largest accepted worst-case instruction count when verifying (0: %d)", verifier.DefaultBudget))
	return cmd
}

func runHandler(cmd *cobra.Command, path, which string, fl *runFlags) error {
	obj, err := readObject(path)
	if err != nil {
		return err
	}
	h, err := findHandler(obj, which)
	if err != nil {
		return err
	}
	argLayout, err := bytecode.ParseLayout(h.Args)
	if err != nil {
		return cli.Errorf(exitRejected, "%s: handler %s: %v", path, h.Name, err)
	}
	resLayout, err := bytecode.ParseLayout(h.Results)
	if err != nil {
		return cli.Errorf(exitRejected, "%s: handler %s: %v", path, h.Name, err)
	}
	request, err := buildRequest(argLayout, fl.args)
	if err != nil {
		return err
	}
	regions, err := loadRegions(obj, fl.regions)
	if err != nil {
		return err
	}
	outs, err := parseRegionOut(obj, fl.regionsOut)
	if err != nil {
		return err
	}
	replySize := resLayout.Size
	if fl.replySizeSet {
		replySize = fl.replySize
	}
	if replySize > vm.MaxSegmentSize {
		return cli.Errorf(exitTool, "--reply-size %d: at most %d", replySize, uint64(vm.MaxSegmentSize))
	}

	if _, err := verifyObject(cmd, obj, fl.budget); err != nil {
		return err
	}
	insns, err := obj.Insns()
	if err != nil {
		return cli.Errorf(exitRejected, "%s: %v", path, err)
	}
	prog, err := vm.Load(insns)
	if err != nil {
		return rejected(cmd, path+": ", err)
	}

	var trace io.Writer
	if fl.trace {
		trace = cmd.ErrOrStderr()
	}
	env := vm.NewLocalEnv(1, trace)
	m := vm.NewMachine(vm.Options{Helpers: vm.ABIHelpers(env)})
	inv := &vm.Invocation{
		Entry: h.Entry, Handler: h.ID,
		SrcNode: fl.srcNode, Tenant: fl.tenant, RequestID: fl.reqID,
		Request: request, Reply: alignedBytes(replySize),
	}
	before := make([][]byte, len(regions))
	for i, r := range regions {
		inv.Regions = append(inv.Regions, vm.RegionMem{Data: r, Writable: obj.Regions[i].Writable})
		if obj.Regions[i].Writable {
			before[i] = bytes.Clone(r)
		}
	}
	res, runErr := m.Invoke(prog, inv)

	w := cmd.OutOrStdout()
	if runErr == nil && res.Outcome == bytecode.OutcomeReply {
		printResults(w, resLayout, res.Reply)
	}
	for _, s := range env.Sent {
		fmt.Fprintf(w, "send node=%d handler=%d payload=0x%s\n", s.Node, s.Handler, hex.EncodeToString(s.Payload))
	}
	for _, f := range env.Forwards {
		fmt.Fprintf(w, "forward node=%d handler=%d\n", f.Node, f.Handler)
	}
	for i, r := range regions {
		if before[i] != nil && !bytes.Equal(before[i], r) {
			fmt.Fprintf(w, "region %s changed\n", obj.Regions[i].Name)
		}
	}
	fmt.Fprintf(w, "insns = %d\n", res.Insns)
	for _, o := range outs {
		if err := os.WriteFile(o.file, regions[o.index], 0o644); err != nil {
			return &cli.ExitError{Code: exitTool, Err: err}
		}
	}

	if runErr != nil {
		var fault *vm.Fault
		if !errors.As(runErr, &fault) {
			return &cli.ExitError{Code: exitTool, Err: runErr}
		}
		return cli.Errorf(exitRejected, "%shandler %s faulted: %v", at(obj, fault.PC), h.Name, runErr)
	}
	if res.Outcome == bytecode.OutcomeError {
		return cli.Errorf(exitRejected, "%shandler %s %s", at(obj, res.Exit), h.Name, bytecode.FailText(int64(res.Code)))
	}
	return nil
}

// at is "file:line:col: " for slot of obj from its line table, or "".
func at(obj *bytecode.Object, slot int) string {
	if pos, ok := obj.Position(slot); ok {
		return pos.String() + ": "
	}
	return ""
}

// findHandler finds a handler by name, or else by id.
func findHandler(obj *bytecode.Object, which string) (bytecode.Handler, error) {
	for _, h := range obj.Handlers {
		if h.Name == which {
			return h, nil
		}
	}
	if id, err := strconv.ParseUint(which, 0, 32); err == nil {
		for _, h := range obj.Handlers {
			if uint64(h.ID) == id {
				return h, nil
			}
		}
	}
	var names []string
	for _, h := range obj.Handlers {
		names = append(names, fmt.Sprintf("%s (id %d)", h.Name, h.ID))
	}
	return bytecode.Handler{}, cli.Errorf(exitTool, "no handler %q; the object has %s", which, strings.Join(names, ", "))
}

// buildRequest lays out the --arg values; every error names the argument.
func buildRequest(l bytecode.Layout, args []string) ([]byte, error) {
	req := make([]byte, l.Size)
	seen := map[string]bool{}
	for _, a := range args {
		name, value, ok := strings.Cut(a, "=")
		if !ok {
			return nil, cli.Errorf(exitTool, "--arg %q: want NAME=VALUE", a)
		}
		f, ok := l.Field(name)
		if !ok {
			var names []string
			for _, f := range l.Fields {
				names = append(names, f.Name)
			}
			have := "it takes no arguments"
			if len(names) > 0 {
				have = "its arguments are " + strings.Join(names, ", ")
			}
			return nil, cli.Errorf(exitTool, "--arg %s: no such argument (%s)", name, have)
		}
		if seen[name] {
			return nil, cli.Errorf(exitTool, "--arg %s: given twice", name)
		}
		seen[name] = true
		b := req[f.Offset : uint64(f.Offset)+uint64(f.Size)]
		if err := f.T.EncodeText(value, b); err != nil {
			return nil, cli.Errorf(exitTool, "--arg %s (%s): %v", name, f.Type, err)
		}
	}
	return req, nil
}

// loadRegions returns zeroed memory for every region of obj, filled from
// the --region files.
func loadRegions(obj *bytecode.Object, specs []string) ([][]byte, error) {
	mem := make([][]byte, len(obj.Regions))
	for _, s := range specs {
		i, file, err := regionSpec(obj, "--region", s)
		if err != nil {
			return nil, err
		}
		if mem[i] != nil {
			return nil, cli.Errorf(exitTool, "--region %s: given twice", obj.Regions[i].Name)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, &cli.ExitError{Code: exitTool, Err: err}
		}
		r := obj.Regions[i]
		if uint64(len(data)) > r.Size {
			return nil, cli.Errorf(exitTool, "--region %s: %s has %d bytes, the region %d", r.Name, file, len(data), r.Size)
		}
		mem[i] = alignedBytes(r.Size)
		copy(mem[i], data)
	}
	for i, r := range obj.Regions {
		if mem[i] == nil {
			mem[i] = alignedBytes(r.Size)
		}
	}
	return mem, nil
}

type regionOut struct {
	index int
	file  string
}

func parseRegionOut(obj *bytecode.Object, specs []string) ([]regionOut, error) {
	var outs []regionOut
	for _, s := range specs {
		i, file, err := regionSpec(obj, "--region-out", s)
		if err != nil {
			return nil, err
		}
		outs = append(outs, regionOut{i, file})
	}
	return outs, nil
}

// regionSpec parses NAME=FILE and finds the region.
func regionSpec(obj *bytecode.Object, flag, s string) (int, string, error) {
	name, file, ok := strings.Cut(s, "=")
	if !ok || file == "" {
		return 0, "", cli.Errorf(exitTool, "%s %q: want NAME=FILE", flag, s)
	}
	var names []string
	for i, r := range obj.Regions {
		if r.Name == name {
			return i, file, nil
		}
		names = append(names, r.Name)
	}
	have := "the object has no regions"
	if len(names) > 0 {
		have = "the object has " + strings.Join(names, ", ")
	}
	return 0, "", cli.Errorf(exitTool, "%s %s: no such region (%s)", flag, name, have)
}

// printResults prints one line per result field of the reply.
func printResults(w io.Writer, l bytecode.Layout, reply []byte) {
	for _, f := range l.Fields {
		end := uint64(f.Offset) + uint64(f.Size)
		if end > uint64(len(reply)) {
			fmt.Fprintf(w, "%s = (not in the %d-byte reply)\n", f.Name, len(reply))
			continue
		}
		fmt.Fprintf(w, "%s = %s\n", f.Name, f.T.FormatText(reply[f.Offset:end]))
	}
}

// alignedBytes returns n zero bytes starting on an 8-byte boundary, as the
// VM requires of writable memory.
func alignedBytes(n uint64) []byte {
	if n == 0 {
		return []byte{}
	}
	words := make([]uint64, (n+7)/8)
	return unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), n)
}
