//go:build race

package mica

// raceEnabled: the race detector is on. Tests where handlers read region
// words with plain loads while other cores or the host write them (the
// stamps around an entry: the VM's memory model, as on the hardware)
// skip, since the detector reports every such read.
const raceEnabled = true
