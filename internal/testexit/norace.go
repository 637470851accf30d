//go:build !race

package testexit

const raceEnabled = false
