//go:build race

package transport_test

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
