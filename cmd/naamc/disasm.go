package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cilium/ebpf/asm"
	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/cli"
)

func newDisasmCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "disasm FILE.bin | FILE.nobj",
		Short: "Print raw instruction slots or an object as eBPF text",
		Long: `disasm prints a file of little-endian 8-byte instruction slots in the
syntax naamc asm reads; assembling the output gives the same bytes back.
A malformed stream is reported with the slot index of the first bad
instruction; assembly text (a .s or .asm file, or any file but a .bin
without NUL bytes) is refused with a pointer to naamc asm.

An object (.nobj, from naamc build) is listed handler by handler: a header
with the handler's id, request and reply sizes and the layout of its
arguments and results, then its instructions with the source line above the
instructions that come from it, labels (L12, the slot) at jump targets, and
the names of regions and helpers beside lddw region[IDX] and call. All of
that is in # comments, so naamc asm still assembles the listing into the
object's code.`,
		Example: `  naamc disasm prog.bin
  naamc disasm prog.bin > prog.s && naamc asm prog.s -o again.bin
  naamc disasm kv.nobj`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			raw, err := os.ReadFile(args[0])
			if err != nil {
				return &cli.ExitError{Code: exitTool, Err: err}
			}
			if looksLikeObject(raw) {
				obj, err := readObject(args[0])
				if err != nil {
					return err
				}
				if err := listObject(cmd.OutOrStdout(), obj); err != nil {
					return rejected(cmd, args[0]+": ", err)
				}
				return nil
			}
			if isText(args[0], raw) {
				return cli.Errorf(exitRejected, "%s looks like assembly text, not raw instruction slots (use naamc asm)", args[0])
			}
			insns, err := bytecode.Decode(raw)
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			text, err := bytecode.Disassemble(insns)
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			_, err = fmt.Fprint(cmd.OutOrStdout(), text)
			return err
		},
	}
}

// looksLikeObject reports whether data is meant to be an object: a msgpack
// map (fixmap, map16 or map32) that holds the magic string. Valid raw slots
// never hold the magic's 8 bytes in a row: they would span an imm and the
// next slot's opcode 0x2d with dst register 15.
func looksLikeObject(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	if b := data[0]; b&0xf0 != 0x80 && b != 0xde && b != 0xdf {
		return false
	}
	return bytes.Contains(data, []byte(bytecode.ObjectMagic))
}

// listObject writes the annotated listing of obj (see naamc disasm --help).
func listObject(w io.Writer, obj *bytecode.Object) error {
	insns, err := obj.Insns()
	if err != nil {
		return err
	}
	var plain strings.Builder
	if err := bytecode.DisassembleTo(&plain, insns, bytecode.DisassembleOptions{Labels: true}); err != nil {
		return err
	}
	offsets, _ := bytecode.Slots(insns)
	entries := map[int][]bytecode.Handler{}
	access := map[int][]bytecode.Handler{}
	for _, h := range obj.Handlers {
		entries[h.Entry] = append(entries[h.Entry], h)
		if h.HasAccess() {
			access[h.Access] = append(access[h.Access], h)
		}
	}
	sources := map[string][]string{}
	for _, s := range obj.Sources {
		sources[s.Name] = strings.Split(s.Text, "\n")
	}

	bw := bufio.NewWriter(w)
	if obj.Source != "" {
		fmt.Fprintf(bw, "# object %s: %s, %s\n", obj.Source, plural(len(obj.Handlers), "handler"), plural(len(obj.Regions), "region"))
	}
	for i, r := range obj.Regions {
		rights := "ro"
		if r.Writable {
			rights = "rw"
		}
		fmt.Fprintf(bw, "# region[%d] %s: %d bytes %s\n", i, r.Name, r.Size, rights)
	}
	var last bytecode.Line // the source line printed last
	var labels []string    // label lines waiting for their instruction
	i := 0
	for _, text := range strings.Split(strings.TrimSuffix(plain.String(), "\n"), "\n") {
		if strings.HasSuffix(text, ":") { // instructions never end in a colon
			labels = append(labels, text)
			continue
		}
		if i >= len(insns) {
			return fmt.Errorf("listing has more lines than the code has instructions")
		}
		slot := offsets[i]
		for _, h := range entries[slot] {
			if err := writeHandlerHeader(bw, h); err != nil {
				return err
			}
			last = bytecode.Line{}
		}
		for _, h := range access[slot] {
			fmt.Fprintf(bw, "\n# access function of handler %s: at most %d ranges (region, offset, length: u32 each)\n", h.Name, h.MaxRanges)
			last = bytecode.Line{}
		}
		pos, ok := obj.Position(slot)
		if !ok {
			last = bytecode.Line{} // the next positioned slot gets its line again
		} else if pos.File != last.File || pos.Line != last.Line {
			fmt.Fprintf(bw, "# %s:%d:", pos.File, pos.Line)
			if lines := sources[pos.File]; pos.Line <= len(lines) {
				if src := strings.TrimSpace(lines[pos.Line-1]); src != "" {
					fmt.Fprintf(bw, " %s", src)
				}
			}
			bw.WriteByte('\n')
			last = pos
		}
		for _, l := range labels {
			fmt.Fprintln(bw, l)
		}
		labels = labels[:0]
		fmt.Fprintf(bw, "\t%s%s\n", text, insnComment(obj, &insns[i]))
		i++
	}
	return bw.Flush()
}

func writeHandlerHeader(w io.Writer, h bytecode.Handler) error {
	req, err := bytecode.ParseLayout(h.Args)
	if err != nil {
		return fmt.Errorf("handler %s: %v", h.Name, err)
	}
	reply, err := bytecode.ParseLayout(h.Results)
	if err != nil {
		return fmt.Errorf("handler %s: %v", h.Name, err)
	}
	fmt.Fprintf(w, "\n# handler %s (id %d): request %d bytes, reply %d bytes\n", h.Name, h.ID, req.Size, reply.Size)
	for _, f := range req.Describe() {
		fmt.Fprintf(w, "#   arg %s\n", f)
	}
	for _, f := range reply.Describe() {
		fmt.Fprintf(w, "#   result %s\n", f)
	}
	return nil
}

// movImm64 is mov dst, imm (ALU64, K source).
const movImm64 = 0xb7

// insnComment names the region of lddw region[IDX], the helper of call N,
// and the reserved failure a compiled handler returns with mov %r0, -CODE.
func insnComment(obj *bytecode.Object, ins *asm.Instruction) string {
	switch op := bytecode.RawOpcode(ins); {
	case op == bytecode.OpLdDW && ins.Src == bytecode.PseudoMapValue:
		if idx := uint32(ins.Constant); int(idx) < len(obj.Regions) {
			return "\t# " + obj.Regions[idx].Name
		}
	case op == movImm64 && ins.Dst == asm.R0 && ins.Constant < 0:
		if name := bytecode.FailName(-ins.Constant); name != "" {
			return "\t# " + name
		}
	case op == bytecode.OpCall && ins.Src == 0:
		if h, ok := bytecode.Helper(uint32(ins.Constant)); ok {
			return "\t# " + h.Name
		}
	}
	return ""
}
