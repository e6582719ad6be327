package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/naam-project/naam/internal/bench/benchprog"
	"github.com/naam-project/naam/internal/bench/kernel"
	"github.com/naam-project/naam/internal/cli"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
)

type demoRow struct {
	name                   string
	insns, bound           uint64  // executed, and proven by the verifier
	checked, fast, kernelT float64 // ns per run; kernelT 0 when unavailable
}

// runEngines runs the benchmark programs in each engine and prints the
// table.
func runEngines(w io.Writer, perMode time.Duration) error {
	kernelErr := kernel.Available()
	if kernelErr == nil {
		status, _ := kernel.JITStatus()
		fmt.Fprintf(w, "Kernel: loading BPF works here (%s); its JIT is the reference.\n", status)
	} else {
		fmt.Fprintf(w, "Kernel: %v; showing the interpreter alone.\n", kernelErr)
	}
	fmt.Fprintln(w)

	var rows []demoRow
	for _, prog := range benchprog.Benchmarks() {
		row, err := demoProgram(prog, perMode, kernelErr == nil)
		if err != nil {
			return &cli.ExitError{Code: 1, Err: fmt.Errorf("%s: %w", prog.Name, err)}
		}
		rows = append(rows, row)
	}

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "program\tinsns/run\tproven max\tchecked ns/run\tfast ns/run\tkernel JIT ns/run\tfast ns/insn\tchecked÷kernel\tfast÷kernel\t")
	for _, r := range rows {
		kernelCol, ratioC, ratioF := "–", "–", "–"
		if r.kernelT > 0 {
			kernelCol = fmt.Sprintf("%.0f", r.kernelT)
			ratioC = fmt.Sprintf("%.1f×", r.checked/r.kernelT)
			ratioF = fmt.Sprintf("%.1f×", r.fast/r.kernelT)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%.0f\t%s\t%.2f\t%s\t%s\t\n",
			r.name, r.insns, r.bound, r.checked, r.fast, kernelCol, r.fast/float64(r.insns), ratioC, ratioF)
	}
	tw.Flush()
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Every engine returned the expected r0 for every program (computed in Go, not stored).")
	fmt.Fprintln(w, "checked: any bytecode, every memory access bounds- and rights-checked.")
	fmt.Fprintln(w, "proven max: the verifier's worst-case instruction count, found by analysis")
	fmt.Fprintln(w, "  (loops bounded without unrolling) before the program may run unchecked.")
	fmt.Fprintln(w, "fast: the unchecked mode, for verified programs only.")
	return nil
}

func demoProgram(prog benchprog.Program, perMode time.Duration, withKernel bool) (demoRow, error) {
	row := demoRow{name: prog.Name}
	// Verify first: the fast mode is only for programs the verifier accepted.
	rep, err := verifier.Verify(prog.Insns, verifier.Config{Raw: true, MemSize: uint64(prog.MemSize), Budget: 10_000_000})
	if err != nil {
		return row, fmt.Errorf("verifier: %w", err)
	}
	row.bound = rep.MaxInsns
	p, err := vm.Load(prog.Insns)
	if err != nil {
		return row, err
	}
	mem := prog.NewMem()
	for i, unchecked := range []bool{false, true} {
		m := vm.NewMachine(vm.Options{Unchecked: unchecked})
		r0, err := m.RunRaw(p, mem)
		if err != nil {
			return row, err
		}
		if prog.HasWant && r0 != prog.Want {
			return row, fmt.Errorf("interpreter returned %#x, want %#x", r0, prog.Want)
		}
		row.insns = m.Executed()
		ns := timeRuns(perMode, func() { m.RunRaw(p, mem) })
		if i == 0 {
			row.checked = ns
		} else {
			row.fast = ns
		}
	}
	if !withKernel {
		return row, nil
	}
	kp, err := kernel.Load(prog.Insns, prog.MemSize)
	if err != nil {
		return row, err
	}
	defer kp.Close()
	r0, err := kp.Run(prog.NewMem())
	if err != nil {
		return row, err
	}
	if prog.HasWant && r0 != prog.Want {
		return row, fmt.Errorf("kernel returned %#x, want %#x", r0, prog.Want)
	}
	// Size the repeat count from the interpreter's time so that the kernel
	// also runs for about perMode.
	repeat := max(1, int(float64(perMode.Nanoseconds())/max(row.fast/20, 1)))
	row.kernelT, err = kp.Bench(prog.NewMem(), min(repeat, 1<<24))
	return row, err
}

// timeRuns calls run repeatedly for about d and returns nanoseconds per call.
func timeRuns(d time.Duration, run func()) float64 {
	n := 1
	for {
		start := time.Now()
		for range n {
			run()
		}
		el := time.Since(start)
		if el >= d || n >= 1<<30 {
			return float64(el.Nanoseconds()) / float64(n)
		}
		// Aim past d from the rate seen so far.
		n = max(n*2, int(float64(n)*1.2*float64(d)/float64(max(el, 1))))
	}
}
