//go:build race

package kv

// raceEnabled: the race detector is on. Tests where handlers on several
// NIC cores read region words with plain loads while other cores write
// them (a sequence lock, a CAS loop: the VM's memory model, as on the
// hardware) skip, since the detector reports every such read.
const raceEnabled = true
