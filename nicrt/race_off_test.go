//go:build !race

package nicrt

const raceEnabled = false
