package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/verifier"
)

func newVerifyCmd() *cobra.Command {
	var (
		raw     bool
		memSize uint64
		budget  uint64
		verbose bool
	)
	cmd := &cobra.Command{
		Use:   "verify OBJECT | verify --raw --mem-size N [--budget INSNS] PROGRAM",
		Short: "Prove a program memory-safe and terminating, with its worst-case instruction count",
		Long: `verify runs the verifier that every node runs before it installs a program.

With an object file (.nobj) the handler ABI applies (spec/abi.md): each
handler is verified from its entry with r1 pointing to the read-only context.
With --raw, PROGRAM (raw slots, or eBPF text) is verified in raw mode: r1
points to N readable and writable bytes (--mem-size), r2 = N, no helpers
exist, pointers may not be stored to that memory nor returned in r0, every
loop must be bounded, and atomics must be naturally aligned.

Accepted: exit 0 and a summary with max-insns=K, the proven worst-case number
of instructions per run: for an object, a line per entry ("NAME: max-insns=K
client-eligible", or "not client-eligible: insn N (file:line): why"; a
handler's access function is the entry NAME.access), then the whole. Rejected: exit 1 and "insn K (file:line): reason
[code]" followed by the registers involved. Any other exit code means naamc
itself failed. -v prints the whole walk, block by block, to stderr.`,
		Example: `  naamc verify kv.nobj
  naamc verify --raw --mem-size 64 prog.s
  naamc verify --raw --mem-size 4096 --budget 1000000 -v loop.bin`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := verifier.Config{Budget: budget}
			if verbose {
				cfg.Log = cmd.ErrOrStderr()
			}
			var insns asm.Instructions
			var err error
			if raw {
				cfg.Raw, cfg.MemSize = true, memSize
				insns, cfg.Position, err = readRawForVerify(cmd, args[0])
			} else {
				insns, err = readObjectForVerify(args[0], &cfg)
			}
			if err != nil {
				return err
			}
			rep, err := verifier.Verify(insns, cfg)
			if err != nil {
				var verr *verifier.Error
				if errors.As(err, &verr) {
					fmt.Fprintf(cmd.ErrOrStderr(), "%+v\n", verr)
					return &cli.ExitError{Code: exitRejected}
				}
				return &cli.ExitError{Code: exitTool, Err: err}
			}
			printReport(cmd.OutOrStdout(), rep)
			return nil
		},
	}
	f := cmd.Flags()
	f.BoolVar(&raw, "raw", false, "verify a raw program (r1 = memory, r2 = its length) instead of an object")
	f.Uint64Var(&memSize, "mem-size", 0, "raw mode: bytes of memory at r1")
	f.Uint64Var(&budget, "budget", 0, fmt.Sprintf("largest accepted worst-case instruction count (0: %d)", verifier.DefaultBudget))
	f.BoolVarP(&verbose, "verbose", "v", false, "print the whole walk to stderr")
	return cmd
}

func printReport(w io.Writer, rep *verifier.Report) {
	for _, e := range rep.Entries {
		fmt.Fprintf(w, "%s: max-insns=%d%s\n", e.Name, e.MaxInsns, clientNote(e, " "))
	}
	fmt.Fprintf(w, "accepted: %s\n", rep)
}

// readRawForVerify reads raw slots or text; for text, messages get the
// source line of each instruction.
func readRawForVerify(cmd *cobra.Command, path string) (asm.Instructions, func(int) string, error) {
	insns, err := readProgram(cmd, path)
	if err != nil {
		return nil, nil, err
	}
	data, _ := os.ReadFile(path)
	if !isText(path, data) {
		return insns, nil, nil
	}
	_, lines, err := bytecode.AssembleLines(string(data))
	if err != nil {
		return insns, nil, nil
	}
	offsets, _ := bytecode.Slots(insns)
	bySlot := map[int]int{}
	for i, s := range offsets {
		bySlot[s] = lines[i]
	}
	return insns, func(slot int) string {
		if l, ok := bySlot[slot]; ok {
			return fmt.Sprintf("%s:%d", path, l)
		}
		return ""
	}, nil
}

// readObject reads and decodes an object file. A file that is not an object
// is rejected input (exit 1); one that cannot be read is a tool failure.
func readObject(path string) (*bytecode.Object, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &cli.ExitError{Code: exitTool, Err: err}
	}
	obj, err := bytecode.UnmarshalObject(data)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "object") {
			msg = "object: " + msg
		}
		return nil, cli.Errorf(exitRejected, "%s: %s", path, msg)
	}
	return obj, nil
}

func readObjectForVerify(path string, cfg *verifier.Config) (asm.Instructions, error) {
	obj, err := readObject(path)
	if err != nil {
		return nil, err
	}
	insns, err := objectVerifyConfig(obj, cfg)
	if err != nil {
		return nil, cli.Errorf(exitRejected, "%s: %v", path, err)
	}
	return insns, nil
}

// objectVerifyConfig decodes obj's code and adds to cfg what the handler
// ABI needs: the entries, the regions and the source position of each slot.
// naamc verify, build and run all verify objects with it.
func objectVerifyConfig(obj *bytecode.Object, cfg *verifier.Config) (asm.Instructions, error) {
	insns, err := obj.Insns()
	if err != nil {
		return nil, err
	}
	*cfg = verifier.ObjectConfig(obj, *cfg)
	return insns, nil
}

// verifyObject verifies obj with the object configuration of naamc verify
// and the given budget (0: the verifier's default). A rejection is printed
// to stderr in full (%+v: insn, file:line, reason, registers) and returned
// as exit 1; a verifier failure is a tool failure.
func verifyObject(cmd *cobra.Command, obj *bytecode.Object, budget uint64) (*verifier.Report, error) {
	cfg := verifier.Config{Budget: budget}
	insns, err := objectVerifyConfig(obj, &cfg)
	if err != nil {
		return nil, &cli.ExitError{Code: exitRejected, Err: err}
	}
	rep, err := verifier.Verify(insns, cfg)
	if err != nil {
		var verr *verifier.Error
		if errors.As(err, &verr) {
			fmt.Fprintf(cmd.ErrOrStderr(), "%+v\n", verr)
			return nil, &cli.ExitError{Code: exitRejected}
		}
		return nil, &cli.ExitError{Code: exitTool, Err: err}
	}
	return rep, nil
}

// clientNote says whether a handler entry is client-eligible, after sep;
// access functions get nothing (they always are).
func clientNote(e verifier.EntryReport, sep string) string {
	switch {
	case e.Access:
		return ""
	case e.ClientEligible:
		return sep + "client-eligible"
	}
	return sep + "not client-eligible: " + e.ClientReason
}
