//go:build !race

package mica

const raceEnabled = false
