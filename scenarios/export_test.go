package scenarios

// Test helpers for the tests in package scenarios_test, which run the
// scenarios of package scenariostest.
var (
	TestRunner    = testRunner
	HoldersRunner = holdersRunner
	CheckEntry    = checkEntry
)

// RaceEnabled reports whether the tests run under the race detector.
const RaceEnabled = raceEnabled
