package nicrt

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/naam-project/naam/internal/defaults"
	"github.com/naam-project/naam/verifier"
	"github.com/naam-project/naam/vm"
	"github.com/naam-project/naam/vm/jit"
)

// Config describes the modelled DPU and the runtime's policies. It is a
// plain value: a zero field takes the default named in its comment, which
// models a BlueField-2-class DPU (spec/nic.md gives the source of every
// number and says which are estimates).
type Config struct {
	// NICCores is the number of NIC cores (goroutines with an unchecked
	// VM each). Default 8: BlueField-2 has eight Arm Cortex-A72 cores.
	NICCores int
	// NICClockHz is the NIC cores' clock. Default 2.5 GHz.
	NICClockHz float64
	// NICCyclesPerInsn is what one bytecode instruction costs an
	// interpreter on a NIC core. Default 10 (an estimate, spec/nic.md).
	NICCyclesPerInsn float64
	// NICBudget is the most instructions one invocation may take on a NIC
	// core: a handler whose verified bound is larger runs on a host core.
	// Default 2,000 (about 8 µs modelled; a policy, spec/nic.md).
	NICBudget uint64
	// NICMemBytes is the NIC memory that regions registered with NICMem
	// may use in all. Default 16 GiB (the DPU's on-board DDR4).
	NICMemBytes uint64
	// NICMemLatency is what the model charges for a NIC core's first touch
	// of a nicmem region in an invocation. Default 100 ns (an estimate).
	NICMemLatency time.Duration

	// DMALatency is a PCIe round trip between the NIC and host memory
	// (a DMA read, a PCIe atomic). Default 1 µs.
	DMALatency time.Duration
	// DMABytesPerSec is the PCIe bandwidth for DMA. Default 25 GB/s
	// (Gen4 x16 after protocol overhead; an estimate).
	DMABytesPerSec float64
	// DMATouchBytes is what the model moves for one touch of a region by
	// plain loads or stores. Default 64 (a cache line).
	DMATouchBytes uint64

	// LinkBitsPerSec is the network link rate, for the model's wire time.
	// Default 200 Gb/s (2 × 100 GbE).
	LinkBitsPerSec float64
	// RxQueueDepth bounds every core's rx queue. Default 1,024.
	RxQueueDepth int
	// TxQueueDepth is the depth the network side should give its tx
	// queues; this package only reports it. Default 1,024.
	TxQueueDepth int
	// MaxReply is the size of a handler's reply buffer when its object
	// declares no results, and the largest READ. Default 1,408 bytes.
	MaxReply int

	// HostCores is the number of host fallback cores. Default 2; a
	// negative value means none (then handlers that need the host are
	// refused at Install, and nothing spills).
	HostCores int
	// HostClockHz and HostCyclesPerInsn model the host cores. Defaults
	// 3 GHz and 4 cycles per instruction (measured on this project's
	// machine, spec/nic.md).
	HostClockHz       float64
	HostCyclesPerInsn float64
	// HostBudget is the verifier's budget at Install: the largest proven
	// bound a handler may have at all. Default verifier.DefaultBudget.
	HostBudget uint64
	// HostUnchecked runs host cores in the VM's unchecked mode too. By
	// default they are checked: the host is where a mistake would hurt.
	HostUnchecked bool
	// Tier is how host cores execute bytecode: TierInterp (default), TierJIT
	// (vm/jit, eBPF → Wasm → machine code; New fails without cgo) or
	// TierAuto (the JIT for a program once one of its handlers has run
	// JITHotRuns times, the interpreter before that and wherever the JIT is
	// unavailable). The engine is chosen once per program, not per run.
	// NIC cores always interpret. Regions are then memfds that the JIT maps
	// into its linear memory, so that programs that write regions run
	// compiled, their atomics shared with every core (spec/jit.md).
	Tier Tier

	// SpillThreshold: when the steered NIC core already has this many
	// requests queued, the request goes to a host core instead. Default
	// 128; a negative value never spills.
	SpillThreshold int
	// Steering picks the NIC core for a request. Default SteerFlow.
	Steering Steering
	// BuiltinInsns is the modelled instruction count of one built-in verb.
	// Default 16.
	BuiltinInsns uint64

	// Paced makes every core take the modelled service time of each run
	// (Reply.ModelNanos) in wall time, by a virtual clock per core that
	// sleeps when it is ahead of the wall clock, never spinning
	// (spec/nic.md, Pacing). Built-in verbs take no core time, as an RDMA
	// NIC's hardware path takes none. Default false: cores run as fast as
	// this machine does.
	Paced bool
	// HostLoad is the share of every host core's time that a modelled
	// application takes, 0 … 1: a host core's service time is stretched by
	// 1 / (1 − HostLoad), sleeping, not spinning. At 1 host cores take no
	// messages (those that must run there are refused as overloaded).
	// Default 0; NIC.SetHostLoad changes it at run time.
	HostLoad float64
	// Placement forces where installed handlers run: PolicyAuto (default:
	// budget, helpers and spill), PolicyNIC (NIC cores wherever the
	// handler's bound fits, never a spill), PolicyHost (host cores) or
	// PolicySteer (per message, the class expected to finish it first).
	// NIC.SetPlacement changes it at run time.
	Placement PlacementPolicy

	// Fair gives every tenant a queue of its own on every core, served by
	// deficit round robin priced by the handlers' proven instruction
	// bounds, with a credit of FairQuantum instructions per round and unit
	// of weight (spec/nic.md, Fair queueing). Default false: one FIFO per
	// core.
	Fair bool
	// FairQuantum is the credit of one round of fair queueing, in
	// instructions. Default NICBudget, so that any NIC core's message
	// can be served in one round.
	FairQuantum uint64
	// Quota is the quota of every tenant not in Quotas: Weight default 1,
	// MaxQueued default RxQueueDepth. Quotas apply with Fair.
	Quota TenantQuota
	// Quotas are the tenants' own quotas; their zero fields take Quota's.
	Quotas map[uint64]TenantQuota
	// Partition gives every active tenant cores of its own, on the NIC
	// and on the host: the class's cores split among the tenants that sent
	// a message in the last PartitionWindow, by their quotas' weights, at
	// least one core each, so that one tenant's runs, which no core
	// preempts, do not delay another's (spec/nic.md, Core partitions). It
	// is not work-conserving: a tenant's cores stay its own while it is
	// active, even idle. With more active tenants than cores, tenants
	// share. Default false: a tenant's messages may go to every core.
	Partition bool
	// PartitionWindow is how long a tenant stays active after its last
	// message under Partition, at least 1 ms. Default 10 ms.
	PartitionWindow time.Duration

	// Outbox receives what handlers send and forward, for every message;
	// nil leaves both to the message's sink if it is an Outbox (the
	// network side's sinks are) and refuses them otherwise (the helpers
	// return -1).
	Outbox Outbox
	// Failed, when set, hears of every run of an installed handler that
	// faulted or failed with an error code, on the core that ran it, after
	// its reply went to its sink: it must be quick and must not block (the
	// host library rate-limits and logs). nil: nobody is told.
	Failed func(Failure)
	// Memory, when set, allocates the memory of every region Register
	// makes (size zeroed bytes, 8-byte aligned): the XDP tier backs regions
	// with memory the kernel shares (host.Config.XDP). nil: a memfd where
	// the JIT may map it, else Go memory.
	Memory func(size uint64) (*vm.Memory, error)
	// Trace receives the bytes of the trace helper; nil drops them.
	// Writes are serialised.
	Trace io.Writer
	// Seed seeds the random helper (core i uses PCG(Seed, i)).
	Seed uint64
}

// Tier is an execution tier of the host cores.
type Tier uint8

const (
	TierInterp Tier = iota // the interpreter
	TierJIT                // the JIT for every program it can take
	TierAuto               // the JIT for programs with a hot handler
)

// JITHotRuns is how many runs make a handler hot for TierAuto.
const JITHotRuns = 64

func (t Tier) String() string {
	switch t {
	case TierInterp:
		return "interp"
	case TierJIT:
		return "jit"
	case TierAuto:
		return "auto"
	}
	return fmt.Sprintf("Tier(%d)", uint8(t))
}

// Steering is how a request is mapped to a NIC core.
type Steering uint8

const (
	// SteerFlow hashes (source node, tenant), as RSS hashes a flow: one
	// client's requests of one tenant run in order on one core.
	SteerFlow Steering = iota
	// SteerRequest hashes (source node, request id): one client's requests
	// spread over all cores.
	SteerRequest
)

func (s Steering) String() string {
	switch s {
	case SteerFlow:
		return "flow"
	case SteerRequest:
		return "request"
	}
	return fmt.Sprintf("Steering(%d)", uint8(s))
}

// DefaultConfig returns the defaults, every field filled.
func DefaultConfig() Config {
	return Config{}.withDefaults()
}

func (c Config) withDefaults() Config {
	defaults.Set(&c.NICCores, 8)
	defaults.Set(&c.NICClockHz, 2.5e9)
	defaults.Set(&c.NICCyclesPerInsn, 10)
	defaults.Set(&c.NICBudget, 2_000)
	defaults.Set(&c.NICMemBytes, 16<<30)
	defaults.Set(&c.NICMemLatency, 100*time.Nanosecond)
	defaults.Set(&c.DMALatency, time.Microsecond)
	defaults.Set(&c.DMABytesPerSec, 25e9)
	defaults.Set(&c.DMATouchBytes, 64)
	defaults.Set(&c.LinkBitsPerSec, 200e9)
	defaults.Set(&c.RxQueueDepth, 1024)
	defaults.Set(&c.TxQueueDepth, 1024)
	defaults.Set(&c.MaxReply, 1408)
	defaults.Set(&c.HostCores, 2)
	defaults.Set(&c.HostClockHz, 3e9)
	defaults.Set(&c.HostCyclesPerInsn, 4)
	defaults.Set(&c.HostBudget, verifier.DefaultBudget)
	defaults.Set(&c.SpillThreshold, 128)
	defaults.Set(&c.BuiltinInsns, 16)
	defaults.Set(&c.FairQuantum, c.NICBudget)
	defaults.Set(&c.Quota.Weight, 1)
	defaults.Set(&c.Quota.MaxQueued, c.RxQueueDepth)
	defaults.Set(&c.PartitionWindow, 10*time.Millisecond)
	return c
}

func (c Config) validate() error {
	switch {
	case c.NICCores < 1:
		return errors.New("nicrt: config: NICCores must be at least 1")
	case c.NICClockHz < 0 || c.NICCyclesPerInsn < 0 || c.HostClockHz < 0 || c.HostCyclesPerInsn < 0 ||
		c.DMABytesPerSec < 0 || c.LinkBitsPerSec < 0 || c.DMALatency < 0 || c.NICMemLatency < 0:
		return errors.New("nicrt: config: clocks, cycle counts, latencies and rates must not be negative")
	case c.RxQueueDepth < 1:
		return errors.New("nicrt: config: RxQueueDepth must be at least 1")
	case c.MaxReply < 8 || c.MaxReply%8 != 0:
		return fmt.Errorf("nicrt: config: MaxReply %d must be a positive multiple of 8", c.MaxReply)
	case c.Steering > SteerRequest:
		return fmt.Errorf("nicrt: config: unknown steering %d", c.Steering)
	case c.NICBudget > c.HostBudget:
		return fmt.Errorf("nicrt: config: NICBudget %d exceeds HostBudget %d", c.NICBudget, c.HostBudget)
	case c.PartitionWindow < time.Millisecond:
		return fmt.Errorf("nicrt: config: PartitionWindow %v: want at least 1ms", c.PartitionWindow)
	case c.Tier > TierAuto:
		return fmt.Errorf("nicrt: config: unknown tier %d", c.Tier)
	case c.Tier == TierJIT && jit.Available() != nil:
		return fmt.Errorf("nicrt: config: Tier jit: %v", jit.Available())
	}
	if err := checkHostLoad(c.HostLoad); err != nil {
		return fmt.Errorf("nicrt: config: %w", err)
	}
	if err := c.checkPlacement(c.Placement); err != nil {
		return fmt.Errorf("nicrt: config: %w", err)
	}
	if err := c.Quota.check("Quota"); err != nil {
		return err
	}
	for t, q := range c.Quotas {
		if err := q.check(fmt.Sprintf("Quotas[%d]", t)); err != nil {
			return err
		}
	}
	return nil
}

// hostCores returns the number of host cores after defaults.
func (c Config) hostCores() int { return max(c.HostCores, 0) }
