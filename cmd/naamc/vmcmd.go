package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cilium/ebpf/asm"
	"github.com/spf13/cobra"

	"github.com/naam-project/naam/bytecode"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

func newVMCmd() *cobra.Command {
	var (
		memFile, memHex, tier string
		bench                 int
		budget                uint64
	)
	cmd := &cobra.Command{
		Use:   "vm [--mem FILE | --mem-hex HEX] [--tier interp|jit] [--bench N] PROGRAM",
		Short: "Run a raw eBPF program in the interpreter or the JIT tier",
		Long: `vm runs PROGRAM in raw mode, unverified, with bounds-checked memory: r1 points
to the memory given by --mem or --mem-hex (read-write), r2 holds its length.
PROGRAM is a file of little-endian 8-byte instruction slots, or eBPF text
(a .s or .asm file, or any file without NUL bytes). Helper 5 is the
conformance suite's "unwind" (returns r1); no other helpers exist.

The last line of stdout is r0 as 0x...; exit status 0. A fault (out-of-bounds
access, budget exhausted, ...) exits 1 with the reason on stderr.

With --bench N the program runs N times on the same memory after one
checked run, and the last line is "ns/run: X" (after insns/run and ns/insn,
and compile-us with --tier jit).

--tier jit translates the program to WebAssembly and runs it as machine code
(wasmtime); the program is unverified, so every access stays checked and
faults name the same instruction and address as the interpreter's. It needs
a build with cgo.`,
		Example: `  naamc vm prog.s
  naamc vm --mem-hex "00 00 00 01 00 00 00 02" prog.bin
  naamc vm --mem packet.bin --bench 100000 prog.s`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if memFile != "" && memHex != "" {
				return cli.Errorf(exitTool, "--mem and --mem-hex are exclusive")
			}
			switch tier {
			case "interp":
			case "jit":
				if err := jit.Available(); err != nil {
					return cli.Errorf(exitTool, "--tier jit: %w", err)
				}
			default:
				return cli.Errorf(exitTool, "--tier %q: want interp or jit", tier)
			}
			if bench < 0 {
				return cli.Errorf(exitTool, "--bench must not be negative")
			}
			mem, err := readMem(memFile, memHex)
			if err != nil {
				return &cli.ExitError{Code: exitTool, Err: err}
			}
			insns, err := readProgram(cmd, args[0])
			if err != nil {
				return err
			}
			run, executed, compileTime, err := rawRunner(tier, insns, vm.Options{Budget: budget, Helpers: vm.RawHelpers()})
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			r0, err := run(mem)
			if err != nil {
				return &cli.ExitError{Code: exitRejected, Err: err}
			}
			out := cmd.OutOrStdout()
			if bench == 0 {
				fmt.Fprintf(out, "%#x\n", r0)
				return nil
			}
			insnsPerRun := executed()
			start := time.Now()
			for range bench {
				if _, err := run(mem); err != nil {
					return &cli.ExitError{Code: exitRejected, Err: err}
				}
			}
			nsPerRun := float64(time.Since(start).Nanoseconds()) / float64(bench)
			fmt.Fprintf(out, "%#x\n", r0)
			if tier == "jit" {
				fmt.Fprintf(out, "compile-us: %.1f\n", float64(compileTime.Nanoseconds())/1e3)
			}
			fmt.Fprintf(out, "insns/run: %d\n", insnsPerRun)
			fmt.Fprintf(out, "ns/insn: %.3f\n", nsPerRun/float64(max(insnsPerRun, 1)))
			fmt.Fprintf(out, "ns/run: %.1f\n", nsPerRun)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&memFile, "mem", "", "file whose bytes are the program's memory")
	f.StringVar(&memHex, "mem-hex", "", `memory as hex bytes, spaces allowed ("00 01 ff")`)
	f.StringVar(&tier, "tier", "interp", "execution tier: interp, or jit (eBPF → Wasm → machine code, checked memory)")
	f.IntVar(&bench, "bench", 0, "run N times and print ns/run last")
	f.Uint64Var(&budget, "budget", 0, fmt.Sprintf("instruction budget per run (0: %d)", vm.DefaultBudget))
	return cmd
}

// rawRunner loads insns for tier and returns a function that runs them in
// raw mode, one that returns the last run's instruction count, and the
// JIT's compile time. Raw programs are unverified, so the JIT compiles
// them checked: every access bounds-checked, faults as the interpreter's.
func rawRunner(tier string, insns asm.Instructions, opts vm.Options) (run func([]byte) (uint64, error), executed func() uint64, compile time.Duration, err error) {
	if tier == "jit" {
		code, err := jit.Compile(insns, jit.Options{})
		if err != nil {
			return nil, nil, 0, err
		}
		m, err := jit.NewMachine(opts)
		if err != nil {
			return nil, nil, 0, err
		}
		return func(mem []byte) (uint64, error) { return m.RunRaw(code, mem) }, m.Executed, code.Stats().Total(), nil
	}
	p, err := vm.Load(insns)
	if err != nil {
		return nil, nil, 0, err
	}
	m := vm.NewMachine(opts)
	return func(mem []byte) (uint64, error) { return m.RunRaw(p, mem) }, m.Executed, 0, nil
}

func readMem(file, hexText string) ([]byte, error) {
	switch {
	case file != "":
		return os.ReadFile(file)
	case hexText != "":
		b, err := hex.DecodeString(strings.Join(strings.Fields(hexText), ""))
		if err != nil {
			return nil, fmt.Errorf("--mem-hex: %v", err)
		}
		return b, nil
	}
	return nil, nil
}

// isText reports whether a program file is assembly text: .s and .asm files
// are, and so is any file but a .bin without a NUL byte (raw slots nearly
// always have one: exit is 95 00 00 00 00 00 00 00).
func isText(path string, data []byte) bool {
	ext := filepath.Ext(path)
	return ext == ".s" || ext == ".asm" || (len(data) > 0 && !bytes.Contains(data, []byte{0}) && ext != ".bin")
}

// readProgram reads raw slots or assembly text (see isText).
func readProgram(cmd *cobra.Command, path string) (asm.Instructions, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &cli.ExitError{Code: exitTool, Err: err}
	}
	var insns asm.Instructions
	if isText(path, data) {
		insns, err = bytecode.Assemble(string(data))
		if err != nil {
			return nil, syntaxRejected(cmd, path, data, err)
		}
		return insns, nil
	}
	insns, err = bytecode.Decode(data)
	if err != nil {
		return nil, rejected(cmd, path+": ", err)
	}
	return insns, nil
}
