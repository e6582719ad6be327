package nicrt

// The cost model of the DPU (spec/nic.md, Cost model). Real execution
// gives this machine's times; the model says what the same work would cost
// on the configured DPU, so that runs can be compared with the hardware
// the defaults describe.

// cost is the modelled work of one run, or a part of it.
type cost struct {
	cycles    uint64  // core cycles for the instructions
	dmaReads  uint64  // PCIe round trips (DMA reads, PCIe atomics)
	dmaWrites uint64  // posted PCIe writes
	dmaBytes  uint64  // bytes across PCIe
	dmaNanos  float64 // the part of nanos spent on PCIe
	localHits uint64  // region touches that stayed on the core's side
	nanos     float64 // modelled service time
}

func (k *cost) add(o cost) {
	k.cycles += o.cycles
	k.dmaReads += o.dmaReads
	k.dmaWrites += o.dmaWrites
	k.dmaBytes += o.dmaBytes
	k.dmaNanos += o.dmaNanos
	k.localHits += o.localHits
	k.nanos += o.nanos
}

// model holds the per-unit costs derived from a Config.
type model struct {
	nicNsPerCycle, hostNsPerCycle float64
	nicCPI, hostCPI               float64
	dmaLatency                    float64 // ns per round trip
	nsPerDMAByte                  float64
	nicmemLatency                 float64
	touchBytes                    uint64
}

func newModel(c Config) model {
	return model{
		nicNsPerCycle:  1e9 / c.NICClockHz,
		hostNsPerCycle: 1e9 / c.HostClockHz,
		nicCPI:         c.NICCyclesPerInsn,
		hostCPI:        c.HostCyclesPerInsn,
		dmaLatency:     float64(c.DMALatency.Nanoseconds()),
		nsPerDMAByte:   1e9 / c.DMABytesPerSec,
		nicmemLatency:  float64(c.NICMemLatency.Nanoseconds()),
		touchBytes:     c.DMATouchBytes,
	}
}

// insns is the cost of n instructions on a NIC or host core.
func (m *model) insns(n uint64, host bool) cost {
	// Every product is rounded (float64(…)) before it is added to
	// anything, here or by a caller: Go may fuse a multiply and an add
	// into one instruction on some architectures, and the model's figures
	// must be the same bits on every machine (package sim's output is).
	if host {
		cyc := float64(float64(n) * m.hostCPI)
		return cost{cycles: uint64(cyc), nanos: float64(cyc * m.hostNsPerCycle)}
	}
	cyc := float64(float64(n) * m.nicCPI)
	return cost{cycles: uint64(cyc), nanos: float64(cyc * m.nicNsPerCycle)}
}

// access is the cost of moving n bytes between a core and a region. An
// access crosses PCIe when the core and the memory sit on different sides
// (a NIC core and host memory, a host core and nicmem): a read or an
// atomic waits a round trip, a write is posted. Otherwise it is a local
// hit; a NIC core's hit in nicmem costs the nicmem latency, a host core's
// hit in host memory is taken as free beside the rest.
func (m *model) access(n uint64, write, atomic, hostCore, nicmem bool) cost {
	if hostCore != nicmem {
		return cost{localHits: 1, nanos: m.localLatency(hostCore)}
	}
	k := cost{dmaBytes: n}
	k.dmaNanos = float64(float64(n) * m.nsPerDMAByte)
	if write && !atomic {
		k.dmaWrites = 1
	} else {
		k.dmaReads = 1
		k.dmaNanos += m.dmaLatency
	}
	k.nanos = k.dmaNanos
	return k
}

func (m *model) localLatency(hostCore bool) float64 {
	if hostCore {
		return 0
	}
	return m.nicmemLatency
}

// handoff is the extra cost of running a request on a host core: the NIC
// writes the request into host memory (posted) and fetches the reply (a
// round trip).
func (m *model) handoff(request, reply int) cost {
	n := uint64(request + reply)
	k := cost{dmaReads: 1, dmaWrites: 1, dmaBytes: n}
	k.dmaNanos = m.dmaLatency + float64(float64(n)*m.nsPerDMAByte)
	k.nanos = k.dmaNanos
	return k
}

// touches is the static part of a handler's run on one side: one touch of
// DMATouchBytes per region it may use (spec/nic.md: the first touch; later
// accesses are taken as cached). A region it may read is a read, one it
// may only write a posted write, one it may read and write a
// read-modify-write, which waits a round trip as a read does.
func (m *model) touches(reads, writes []int, nicmem []bool, hostCore bool) cost {
	var k cost
	written := map[int]bool{}
	for _, i := range writes {
		written[i] = true
	}
	for _, i := range reads {
		k.add(m.access(m.touchBytes, written[i], written[i], hostCore, nicmem[i]))
		delete(written, i)
	}
	for _, i := range writes {
		if written[i] {
			k.add(m.access(m.touchBytes, true, false, hostCore, nicmem[i]))
		}
	}
	return k
}
