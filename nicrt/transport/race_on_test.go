//go:build race

package transport

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
