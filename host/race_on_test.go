//go:build race

package host

// raceEnabled: the race detector slows the fault runs and changes
// allocation counts.
const raceEnabled = true
