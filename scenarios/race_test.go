//go:build race

package scenarios

// raceEnabled reports whether the tests run under the race detector, where
// sync.Pool drops a quarter of its Puts on purpose.
const raceEnabled = true
