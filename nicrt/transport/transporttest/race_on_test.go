//go:build race

package transporttest

// raceEnabled: the race detector changes allocation counts.
const raceEnabled = true
