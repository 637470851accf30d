package scenarios

// MaxPayloadBytes returns the largest payload this machine can run: half
// its physical memory, since a scenario's child holds the payload, and
// while it is alive its heap dump may hold it too. ok is false where the
// size of memory is not known (outside Linux).
func MaxPayloadBytes() (max int64, ok bool) {
	mem, ok := physicalMemory()
	if !ok {
		return 0, false
	}
	return mem / 2, true
}
