package dom

// SetParallelMinEdges sets the number of non-tree edges from which they
// are sorted on every core, and returns the setting before.
func SetParallelMinEdges(n int) int {
	old := parallelMinEdges
	parallelMinEdges = n
	return old
}
