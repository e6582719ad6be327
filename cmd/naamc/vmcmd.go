package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
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
access, budget exhausted, ...) exits 1 with the reason on stderr. Memory of
more than 4294967295 bytes (2^32-1, one segment) is refused.

With --bench N the program runs N times on the same memory after one
checked run, and the last line is "ns/run: X" (after insns/run and ns/insn,
and compile-us with --tier jit). The memory lives across the runs (the JIT
maps it into its linear memory once, as it maps regions).

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
			x, compileTime, err := rawExecutable(tier, insns)
			if err != nil {
				return rejected(cmd, args[0]+": ", err)
			}
			m := vm.NewMachine(vm.Options{Budget: budget, Helpers: vm.RawHelpers()})
			defer m.Close()
			r0, err := m.RunRawMemory(x, mem)
			if err != nil {
				return &cli.ExitError{Code: exitRejected, Err: err}
			}
			out := cmd.OutOrStdout()
			if bench == 0 {
				fmt.Fprintf(out, "%#x\n", r0)
				return nil
			}
			insnsPerRun := m.Executed()
			start := time.Now()
			for range bench {
				if _, err := m.RunRawMemory(x, mem); err != nil {
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

// rawExecutable prepares insns for tier and returns the JIT's compile
// time. Raw programs are unverified, so the JIT compiles them checked:
// every access bounds-checked, faults as the interpreter's.
func rawExecutable(tier string, insns asm.Instructions) (vm.Executable, time.Duration, error) {
	if tier == "jit" {
		code, err := jit.Compile(insns, jit.Options{})
		if err != nil {
			return nil, 0, err
		}
		return code, code.Stats().Total(), nil
	}
	p, err := vm.Load(insns)
	if err != nil {
		return nil, 0, err
	}
	return p, 0, nil
}

// readMem returns the memory of --mem FILE or --mem-hex HEX (empty without
// either) as a vm.Memory, refusing more than one segment holds before
// reading it.
func readMem(file, hexText string) (*vm.Memory, error) {
	var data []byte
	switch {
	case file != "":
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if err := memSize(st.Size(), "--mem "+file); err != nil {
			return nil, err
		}
		mem, err := vm.NewMemory(uint64(st.Size()))
		if err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(f, mem.Bytes()); err != nil {
			return nil, fmt.Errorf("--mem %s: %v", file, err)
		}
		return mem, nil
	case hexText != "":
		b, err := hex.DecodeString(strings.Join(strings.Fields(hexText), ""))
		if err != nil {
			return nil, fmt.Errorf("--mem-hex: %v", err)
		}
		if err := memSize(int64(len(b)), "--mem-hex"); err != nil {
			return nil, err
		}
		data = b
	}
	mem, err := vm.NewMemory(uint64(len(data)))
	if err != nil {
		return nil, err
	}
	copy(mem.Bytes(), data)
	return mem, nil
}

// memSize refuses raw memory larger than a segment: an offset of 2^32
// would be the next segment's.
func memSize(n int64, what string) error {
	if uint64(n) > vm.MaxSegmentSize {
		return fmt.Errorf("%s: %d bytes of memory, more than one segment holds (%d)", what, n, uint64(vm.MaxSegmentSize))
	}
	return nil
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
