//go:build !race

package retain_test

const raceEnabled = false
