package xdp

import (
	"errors"
	"fmt"
	"strings"
	"syscall"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// bind associates every map reference of insns (mapPtr, mapValue) with
// the map of that name. It works on a copy.
func bind(insns asm.Instructions, maps map[string]*ebpf.Map) (asm.Instructions, error) {
	out := make(asm.Instructions, len(insns))
	copy(out, insns)
	for i := range out {
		if !out[i].IsLoadFromMap() {
			continue
		}
		name := out[i].Reference()
		m := maps[name]
		if m == nil {
			return nil, fmt.Errorf("xdp: internal error: instruction %d names map %q, which does not exist", i, name)
		}
		if err := out[i].AssociateMap(m); err != nil {
			return nil, fmt.Errorf("xdp: internal error: instruction %d: %w", i, err)
		}
	}
	return out, nil
}

// KernelRefusal is the kernel verifier's refusal of a program: Reason is
// its last line (what the verifier found), Log the whole log.
type KernelRefusal struct {
	Program string
	Reason  string
	Log     string
	Err     error // the *ebpf.VerifierError
}

func (r *KernelRefusal) Error() string {
	return "xdp: the kernel verifier refused " + r.Program + ": " + r.Reason
}

func (r *KernelRefusal) Unwrap() error { return r.Err }

// ErrKernelRefused matches every *KernelRefusal.
var ErrKernelRefused = errors.New("the kernel verifier refused the program")

func (r *KernelRefusal) Is(target error) bool { return target == ErrKernelRefused }

// loadProgram loads an XDP program. A refusal of the kernel's verifier is
// a *KernelRefusal with the whole log: the first try runs without a log
// (a large log buffer is costly), and a refused program is loaded again
// with one.
func loadProgram(name string, insns asm.Instructions, maps map[string]*ebpf.Map) (*ebpf.Program, error) {
	bound, err := bind(insns, maps)
	if err != nil {
		return nil, err
	}
	spec := &ebpf.ProgramSpec{Name: name, Type: ebpf.XDP, Instructions: bound, License: "GPL"}
	prog, err := ebpf.NewProgram(spec)
	if err == nil {
		return prog, nil
	}
	var ve *ebpf.VerifierError
	verifierBug := errors.Is(err, syscall.EFAULT) // the verifier's own sanity checks failed
	if !errors.As(err, &ve) && !verifierBug {
		return nil, fmt.Errorf("xdp: load %s: %w", name, err)
	}
	prog, err2 := ebpf.NewProgramWithOptions(spec, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelBranch, LogSizeStart: 1 << 22})
	if err2 == nil { // accepted the second time: nothing to report
		return prog, nil
	}
	r := &KernelRefusal{Program: name, Err: err2}
	if errors.As(err2, &ve) {
		r.Reason, r.Log = refusalReason(ve.Log), strings.Join(ve.Log, "\n")
	}
	if verifierBug && r.Reason == "" {
		r.Reason = "the verifier failed with EFAULT, a bug of this kernel's verifier (dmesg shows its warning)"
	}
	return nil, r
}

// refusalReason picks the line of a verifier log that says what was
// wrong: the last one that is not the kernel's statistics.
func refusalReason(log []string) string {
	for i := len(log) - 1; i >= 0; i-- {
		l := strings.TrimSpace(log[i])
		if l == "" || strings.HasPrefix(l, "processed ") || strings.HasPrefix(l, "verification time") ||
			strings.HasPrefix(l, "stack depth") || strings.HasPrefix(l, "mark_precise") {
			continue
		}
		return l
	}
	return "no reason in the log"
}
