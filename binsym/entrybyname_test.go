package binsym

import "testing"

// The lookups by name that scan the functions and those that use the index
// built after them give the same entries: for names that exist, and for a
// prefix of one and other names that do not.
func TestEntryByNameScanThenIndex(t *testing.T) {
	b, err := Open(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	names := []string{"runtime.main", "main.main", "runtime.gcStart", "runtime.mai", "no.such.function", ""}
	type answer struct {
		entry uint64
		ok    bool
	}
	var scanned []answer
	for _, name := range names {
		e, ok := b.pcln.entryByName(name)
		scanned = append(scanned, answer{e, ok})
	}
	if !scanned[0].ok || !scanned[1].ok || !scanned[2].ok || scanned[3].ok || scanned[4].ok || scanned[5].ok {
		t.Fatalf("scanned lookups of %q: %v", names, scanned)
	}
	for b.pcln.lookups.Load() < scanLookups {
		b.pcln.entryByName("runtime.main")
	}
	for i, name := range names {
		e, ok := b.pcln.entryByName(name)
		if (answer{e, ok}) != scanned[i] {
			t.Errorf("%q: indexed %#x %v, scanned %#x %v", name, e, ok, scanned[i].entry, scanned[i].ok)
		}
	}
	if b.pcln.byName == nil {
		t.Error("no index after the scanned lookups")
	}
}
