package dom

// SetParallelMinEdges sets the number of non-tree edges from which they
// are sorted on every core, and returns the setting before.
func SetParallelMinEdges(n int) int {
	old := parallelMinEdges
	parallelMinEdges = n
	return old
}

// SetNumberedMaxNodes sets the number of nodes up to which the search
// keeps the targets of non-tree edges as numbers, and returns the setting
// before.
func SetNumberedMaxNodes(n int) int {
	old := numberedMaxNodes
	numberedMaxNodes = n
	return old
}

// SetPopulateMin sets the number of nodes from which New populates its
// arrays on another goroutine, and returns the setting before.
func SetPopulateMin(n int) int {
	old := populateMin
	populateMin = n
	return old
}

// DefaultPopulateMin is populateMin outside the tests.
const DefaultPopulateMin = defaultPopulateMin
