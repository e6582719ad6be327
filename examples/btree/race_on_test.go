//go:build race

package btree

// raceEnabled: the race detector is on. Tests where handlers read node
// words with plain loads while the host or other cores write them (a
// sequence lock: the VM's memory model, as on the hardware) skip, since
// the detector reports every such read.
const raceEnabled = true
