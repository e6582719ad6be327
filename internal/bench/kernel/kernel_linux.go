//go:build linux

package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/rlimit"
)

const (
	// xdpPass is what the wrapper returns; the test run ignores it.
	xdpPass = 2
	// pktSize is the input packet of a test run: XDP test runs want at least
	// an Ethernet header. The body never sees it.
	pktSize = 64
	// maxMemSize bounds the map value: the verifier tracks offsets into a
	// map value up to 1<<29 and array values must fit one kmalloc.
	maxMemSize = 1 << 22
	bodySymbol = "naam_body"
)

var (
	availOnce sync.Once
	availErr  error
)

// Available reports, as a one-line error, why this process cannot load and
// run BPF programs (not root, no bpf(2), missing capabilities), or nil. The
// probe runs once per process; tests Skip with the error's text.
func Available() error {
	availOnce.Do(func() { availErr = probe() })
	return availErr
}

func probe() error {
	// Kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK; newer ones
	// use the memory cgroup and ignore the limit, so a failure is harmless.
	_ = rlimit.RemoveMemlock()
	p, err := Load(asm.Instructions{asm.LoadImm(asm.R0, 0x1122334455667788, asm.DWord), asm.Return()}, 8)
	if err != nil {
		return fmt.Errorf("kernel BPF unavailable: %s", reason(err))
	}
	defer p.Close()
	r0, err := p.Run(make([]byte, 8))
	if err != nil {
		return fmt.Errorf("kernel BPF test runs unavailable: %s", reason(err))
	}
	if r0 != 0x1122334455667788 {
		return fmt.Errorf("kernel BPF harness broken: probe returned %#x, want 0x1122334455667788", r0)
	}
	return nil
}

// reason turns a load or run error into one line, naming the usual causes.
func reason(err error) string {
	msg := strings.Join(strings.Fields(err.Error()), " ")
	// cilium/ebpf guesses at RLIMIT_MEMLOCK on EPERM; the probe has already
	// raised it, so the hint only misleads.
	msg, _, _ = strings.Cut(msg, " (MEMLOCK may be too low")
	switch {
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.EACCES):
		return "needs root or CAP_BPF and CAP_PERFMON: " + msg
	case errors.Is(err, syscall.ENOSYS):
		return "the kernel has no bpf(2) system call: " + msg
	case errors.Is(err, ebpf.ErrNotSupported):
		return "not supported by this kernel: " + msg
	}
	return msg
}

// JITStatus reads /proc/sys/net/core/bpf_jit_enable and says in one line
// whether loaded programs are JIT-compiled or interpreted.
func JITStatus() (string, error) {
	b, err := os.ReadFile("/proc/sys/net/core/bpf_jit_enable")
	if err != nil {
		return "", fmt.Errorf("bpf_jit_enable: %w", err)
	}
	switch v := strings.TrimSpace(string(b)); v {
	case "0":
		return "JIT off (bpf_jit_enable=0): the kernel interprets BPF", nil
	case "1":
		return "JIT on (bpf_jit_enable=1)", nil
	case "2":
		return "JIT on, with debug output (bpf_jit_enable=2)", nil
	default:
		return "bpf_jit_enable=" + v, nil
	}
}

// Program is a body loaded into the kernel with its memory map. It is not
// safe for concurrent use.
type Program struct {
	prog *ebpf.Program
	mem  *ebpf.Map // one value: the body's memory
	ret  *ebpf.Map // one value: the body's r0
	size int
	buf  []byte // the memory map's value
	pkt  []byte
}

// Load wraps body (raw mode: r1 = memory, r2 = memSize) as described in the
// package documentation and loads it as an XDP program. A verifier refusal
// is an error matching ErrRejected that also wraps *ebpf.VerifierError.
func Load(body asm.Instructions, memSize int) (*Program, error) {
	return load(body, memSize, ebpf.ProgramOptions{})
}

func load(body asm.Instructions, memSize int, opts ebpf.ProgramOptions) (*Program, error) {
	if len(body) == 0 {
		return nil, errors.New("kernel: empty body")
	}
	if memSize < 0 || memSize > maxMemSize {
		return nil, fmt.Errorf("kernel: memory size %d outside 0..%d", memSize, maxMemSize)
	}
	// A zero-sized value is not allowed; a body with no memory gets one
	// byte it never uses.
	m, err := newArray("naam_mem", max(memSize, 1))
	if err != nil {
		return nil, err
	}
	ret, err := newArray("naam_r0", 8)
	if err != nil {
		m.Close()
		return nil, err
	}
	insns, err := wrap(body, m, ret, memSize)
	if err != nil {
		m.Close()
		ret.Close()
		return nil, err
	}
	prog, err := ebpf.NewProgramWithOptions(&ebpf.ProgramSpec{
		Name:         "naam_test",
		Type:         ebpf.XDP,
		Instructions: insns,
		License:      "GPL",
	}, opts)
	if err != nil {
		m.Close()
		ret.Close()
		var ve *ebpf.VerifierError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("%w: %w", ErrRejected, err)
		}
		return nil, fmt.Errorf("kernel: load: %w", err)
	}
	return &Program{prog: prog, mem: m, ret: ret, size: memSize, buf: make([]byte, max(memSize, 1)), pkt: make([]byte, pktSize)}, nil
}

// newArray creates a one-element array map with a value of size bytes.
func newArray(name string, size int) (*ebpf.Map, error) {
	m, err := ebpf.NewMap(&ebpf.MapSpec{
		Name:       name,
		Type:       ebpf.Array,
		KeySize:    4,
		ValueSize:  uint32(size),
		MaxEntries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("kernel: create map %s: %w", name, err)
	}
	return m, nil
}

// wrap builds the wrapper of the package documentation around a copy of
// body.
func wrap(body asm.Instructions, mem, ret *ebpf.Map, memSize int) (asm.Instructions, error) {
	memPtr := asm.LoadMapValue(asm.R1, 0, 0)
	retPtr := asm.LoadMapValue(asm.R1, 0, 0)
	if err := memPtr.AssociateMap(mem); err != nil {
		return nil, err
	}
	if err := retPtr.AssociateMap(ret); err != nil {
		return nil, err
	}
	entry := bodySymbol
	if s := body[0].Symbol(); s != "" {
		entry = s
	}
	insns := asm.Instructions{
		memPtr,
		asm.Mov.Imm(asm.R2, int32(memSize)),
		asm.Call.Label(entry),
		retPtr,
		asm.StoreMem(asm.R1, 0, asm.R0, asm.DWord),
		asm.Mov.Imm(asm.R0, xdpPass),
		asm.Return(),
	}
	start := len(insns)
	insns = append(insns, body...)
	insns[start] = insns[start].WithSymbol(entry)
	for i := range insns[start:] {
		fixAtomicImm(&insns[start+i])
	}
	return insns, nil
}

// fixAtomicImm works around cilium/ebpf v0.22.0, whose Instruction.Marshal
// encodes an atomic's imm from Constant instead of from the opcode, so that
// asm.FetchAdd.Mem(...) (Constant 0) reaches the kernel as a plain add.
// Decoded instructions carry the right Constant already; bytecode.Encode
// applies the same fix.
func fixAtomicImm(ins *asm.Instruction) {
	if op := ins.OpCode.AtomicOp(); op != asm.InvalidAtomic {
		ins.Constant = int64(op >> 8)
	}
}

// setMem writes mem into the memory map.
func (p *Program) setMem(mem []byte) error {
	if len(mem) != p.size {
		return fmt.Errorf("kernel: memory is %d bytes, the program was loaded for %d", len(mem), p.size)
	}
	copy(p.buf, mem)
	if err := p.mem.Update(uint32(0), p.buf, ebpf.UpdateAny); err != nil {
		return fmt.Errorf("kernel: write memory: %w", err)
	}
	return nil
}

// Run runs the body once on mem (exactly the memSize bytes it was loaded
// for), copies the memory as the body left it back into mem and returns the
// body's 64-bit r0.
func (p *Program) Run(mem []byte) (uint64, error) {
	if err := p.setMem(mem); err != nil {
		return 0, err
	}
	if _, err := p.prog.Run(&ebpf.RunOptions{Data: p.pkt, Repeat: 1}); err != nil {
		return 0, fmt.Errorf("kernel: %w", err)
	}
	if err := p.mem.Lookup(uint32(0), p.buf); err != nil {
		return 0, fmt.Errorf("kernel: read memory: %w", err)
	}
	copy(mem, p.buf)
	var r0 [8]byte
	if err := p.ret.Lookup(uint32(0), r0[:]); err != nil {
		return 0, fmt.Errorf("kernel: read r0: %w", err)
	}
	return binary.LittleEndian.Uint64(r0[:]), nil
}

// Bench writes mem and runs the program repeat times inside one
// BPF_PROG_TEST_RUN, returning the kernel's measured time per run in
// nanoseconds (the kernel's figure is a whole number of nanoseconds). The
// figure includes the test-run loop and the wrapper; Overhead measures both
// with an empty body. Memory is not reset between the repeats.
func (p *Program) Bench(mem []byte, repeat int) (float64, error) {
	if repeat < 1 {
		return 0, fmt.Errorf("kernel: repeat %d < 1", repeat)
	}
	if err := p.setMem(mem); err != nil {
		return 0, err
	}
	_, d, err := p.prog.Benchmark(p.pkt, repeat, nil)
	if err != nil {
		return 0, fmt.Errorf("kernel: %w", err)
	}
	return float64(d.Nanoseconds()), nil
}

// JITed reports whether the kernel compiled the program to machine code.
func (p *Program) JITed() (bool, error) {
	info, err := p.prog.Info()
	if err != nil {
		return false, err
	}
	size, err := info.JitedSize()
	if err != nil {
		return false, err
	}
	return size > 0, nil
}

// Close releases the program and its map.
func (p *Program) Close() error {
	return errors.Join(p.prog.Close(), p.mem.Close(), p.ret.Close())
}

// Bench loads body, times repeat runs on mem with Program.Bench and unloads
// it.
func Bench(body asm.Instructions, mem []byte, repeat int) (float64, error) {
	p, err := Load(body, len(mem))
	if err != nil {
		return 0, err
	}
	defer p.Close()
	return p.Bench(mem, repeat)
}

// Overhead is Bench of an empty body (r0 = 0; exit): the cost per run of the
// test-run loop, the wrapper's call and its store of r0, to subtract from or
// report beside other figures.
func Overhead(repeat int) (float64, error) {
	return Bench(asm.Instructions{asm.Mov.Imm(asm.R0, 0), asm.Return()}, nil, repeat)
}

// Stats is what the kernel's verifier says about a program it accepted.
type Stats struct {
	Time      time.Duration // "verification time", as the kernel measured it
	Processed int           // "processed N insns"
}

// VerifierStats loads body as Load does, with the verifier's statistics
// log, and returns the kernel's own figures; the program is unloaded again.
func VerifierStats(body asm.Instructions, memSize int) (Stats, error) {
	p, err := load(body, memSize, ebpf.ProgramOptions{LogLevel: ebpf.LogLevelStats, LogSizeStart: 1 << 16})
	if err != nil {
		return Stats{}, err
	}
	defer p.Close()
	var st Stats
	log := p.prog.VerifierLog
	if i := strings.Index(log, "verification time "); i >= 0 {
		var us int64
		fmt.Sscanf(log[i:], "verification time %d usec", &us)
		st.Time = time.Duration(us) * time.Microsecond
	}
	if i := strings.Index(log, "processed "); i >= 0 {
		fmt.Sscanf(log[i:], "processed %d insns", &st.Processed)
	}
	if st.Time == 0 && st.Processed == 0 {
		return st, fmt.Errorf("kernel: no statistics in the verifier log %q", log)
	}
	return st, nil
}
