package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/host"
	"github.com/naam-project/naam/internal/cli"
)

func newCallCmd() *cobra.Command {
	var cf clientFlags
	var out outputFlag
	var args []string
	var raw string
	var list bool
	var pc callPlacement
	cmd := &cobra.Command{
		Use:   "call ADDR HANDLER",
		Short: "Send one active message and print the decoded reply",
		Long: `call asks the node at ADDR what it has installed, encodes the arguments by
the handler's layout, sends one request, and prints the results one per
line ("name = value"), or with -o json one document:
  {"handler": "counter.add", "results": {"result": 5}}
HANDLER is a handler's name, or PROGRAM.HANDLER when two programs have one
of that name.

Arguments are --arg name=value: integers in Go syntax (42, 0x2a, -1 for
signed types), true/false, byte arrays as text or 0x-prefixed hex, other
arrays as comma-separated elements. --raw HEX sends the payload as given
instead, and prints the reply in hex ({"handler", "reply"} with -o json).
--list prints the node's handlers with their layouts.

A handler that fails is reported with the failing site from its object's
line table: "counter.naam:5:9: counter.add failed with code 7", and a
reserved code by name ("failed: index out of range (code 0x7fffff01)").

` + cli.ExitHelp(),
		Example: `  naam call 127.0.0.1:7000 add --arg slot=3 --arg by=1
  naam call 127.0.0.1:7000 kv.get --arg key=0x2a -o json
  naam call 127.0.0.1:7000 --list
  naam call 127.0.0.1:7000 get --raw 0300000000000000
  naam call kv-1 kv.get --arg key=7 --join 10.0.0.1:7946`,
		Args: func(cmd *cobra.Command, a []string) error {
			if list {
				return cobra.ExactArgs(1)(cmd, a)
			}
			return cobra.ExactArgs(2)(cmd, a)
		},
		RunE: func(cmd *cobra.Command, pos []string) error {
			return cf.with(cmd, pos[0], func(ctx context.Context, p *host.Peer) error {
				if list {
					return listHandlers(cmd.OutOrStdout(), p)
				}
				return runCall(ctx, cmd.OutOrStdout(), cmd.ErrOrStderr(), p, pos[1], args, raw, out, &pc)
			})
		},
	}
	cf.add(cmd)
	out.add(cmd)
	cmd.Flags().StringArrayVar(&args, "arg", nil, "an argument, name=value (repeatable)")
	cmd.Flags().StringVar(&raw, "raw", "", "send this payload (hex) instead of --arg")
	cmd.Flags().BoolVar(&list, "list", false, "list the node's handlers and their layouts")
	pc.add(cmd)
	return cmd
}

func listHandlers(w io.Writer, p *host.Peer) error {
	hs := p.Handlers()
	if len(hs) == 0 {
		fmt.Fprintln(w, "no handlers installed")
		return nil
	}
	for _, h := range hs {
		fmt.Fprintf(w, "%s(%s) -> (%s)  id %d\n", h, fieldList(h.Args), fieldList(h.Results), h.ID)
	}
	return nil
}

func fieldList(fs []bytecode.Field) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = f.Name + ": " + f.Type
	}
	return strings.Join(parts, ", ")
}

func runCall(ctx context.Context, w, stderr io.Writer, p *host.Peer, handler string, args []string, raw string, out outputFlag, pc *callPlacement) error {
	pl, err := pc.prepare(stderr, p)
	if err != nil {
		return err
	}
	h, err := p.Handler(ctx, handler)
	if err != nil {
		return nodeError(err)
	}
	var payload []byte
	if raw != "" {
		if len(args) > 0 {
			return fmt.Errorf("--raw and --arg do not go together")
		}
		payload, err = hex.DecodeString(strings.TrimPrefix(raw, "0x"))
		if err != nil {
			return fmt.Errorf("--raw: %v", err)
		}
	} else {
		vals := map[string]string{}
		for _, a := range args {
			k, v, ok := strings.Cut(a, "=")
			if !ok || k == "" {
				return fmt.Errorf("--arg %q: want name=value", a)
			}
			if _, dup := vals[k]; dup {
				return fmt.Errorf("--arg %s given twice", k)
			}
			vals[k] = v
		}
		payload, err = h.EncodeStrings(vals)
		if err != nil {
			return nodeError(err)
		}
	}
	if err := pc.check(h, pl); err != nil {
		return err
	}
	reply, err := callPlaced(ctx, stderr, p, h, payload, pl)
	if err != nil {
		return nodeError(callFailure(h, err))
	}
	switch {
	case raw != "" && out.json():
		return printJSON(w, struct {
			Handler string `json:"handler"`
			Reply   string `json:"reply"`
		}{h.String(), hex.EncodeToString(reply)})
	case raw != "":
		fmt.Fprintf(w, "%x\n", reply)
		return nil
	case out.json():
		results, err := resultsJSON(h, reply)
		if err != nil {
			return err
		}
		return printJSON(w, struct {
			Handler string                     `json:"handler"`
			Results map[string]json.RawMessage `json:"results"`
		}{h.String(), results})
	}
	fmt.Fprint(w, h.FormatResults(reply))
	return nil
}

// callFailure says how a call to h failed: a handler's own code with
// where in its source ("counter.naam:5:9: counter.add failed with code
// 7"), a fault with its text, else err as it is.
func callFailure(h *host.Handler, err error) error {
	var he *host.HandlerError
	if errors.As(err, &he) {
		at := ""
		if he.Pos != "" {
			at = he.Pos + ": "
		}
		return fmt.Errorf("%s%s %s", at, h, bytecode.FailText(int64(he.Code)))
	}
	var re *host.RemoteError
	if errors.As(err, &re) && errors.Is(err, host.ErrFault) {
		return fmt.Errorf("%s faulted: %s", h, re.Msg)
	}
	return err
}

// resultsJSON is the reply by result name, each value as JSON: integers
// as numbers, bools, [u8; N] as its text when printable or 0x hex, other
// arrays as arrays, structs as 0x hex.
func resultsJSON(h *host.Handler, reply []byte) (map[string]json.RawMessage, error) {
	l, err := bytecode.ParseLayout(h.Results)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", h, err)
	}
	out := map[string]json.RawMessage{}
	for _, f := range l.Fields {
		b := make([]byte, f.Size)
		if int(f.Offset) < len(reply) {
			copy(b, reply[f.Offset:])
		}
		out[f.Name] = jsonValue(f.T, b)
	}
	if len(l.Fields) == 0 {
		out["reply"], _ = json.Marshal(hex.EncodeToString(reply))
	}
	return out, nil
}

func jsonValue(t *bytecode.FieldType, b []byte) json.RawMessage {
	text := t.FormatText(b)
	switch {
	case t.Scalar != "": // an integer or a bool: FormatText's is JSON's
		return json.RawMessage(text)
	case t.Elem != nil && t.Elem.Scalar == "u8":
		if strings.HasPrefix(text, `"`) {
			return json.RawMessage(text) // strconv.Quote of printable ASCII is valid JSON
		}
	case t.Elem != nil:
		items := make([]json.RawMessage, t.N)
		for i := range items {
			off := uint64(i) * t.Elem.Size
			items[i] = jsonValue(t.Elem, b[off:off+t.Elem.Size])
		}
		out, _ := json.Marshal(items)
		return out
	}
	out, _ := json.Marshal(text)
	return out
}
