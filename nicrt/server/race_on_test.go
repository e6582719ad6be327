//go:build race

package server

// raceEnabled: the race detector slows the fault runs and changes
// allocation counts.
const raceEnabled = true
