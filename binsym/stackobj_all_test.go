package binsym

import (
	"debug/elf"
	"os"
	"strings"
	"testing"
)

// Every function of the test executable has stack-object records that
// read without error: in order and without overlaps, as the runtime wants
// them.
func TestStackObjectsAllFuncs(t *testing.T) {
	b, err := Open(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	funcs, objects := 0, 0
	for i := 0; ; i++ {
		f, ok := b.pcln.funcAt(i)
		if !ok {
			break
		}
		funcs++
		objs, err := b.StackObjects(b.toRun(f.entry))
		if err != nil {
			t.Errorf("%s: %v", f.name(), err)
		}
		objects += len(objs)
	}
	if funcs < 1000 || objects < 50 {
		t.Errorf("%d functions with %d stack objects: too few for the test to mean anything", funcs, objects)
	}
	t.Logf("%d functions, %d stack objects", funcs, objects)
}

// Records out of order, or overlapping, are refused: the runtime throws
// on them, and without the check a corrupt binary's records could make a
// frame hold more objects than it has bytes.
func TestStackObjectsOverlapping(t *testing.T) {
	b, err := Open(TestExe)
	if err != nil {
		t.Fatal(err)
	}
	// A function with two records or more, and where they are in the file.
	var recs uint64
	for i := 0; recs == 0; i++ {
		f, ok := b.pcln.funcAt(i)
		if !ok {
			t.Fatal("no function with two stack objects")
		}
		if objs, _ := b.StackObjects(b.toRun(f.entry)); len(objs) >= 2 {
			off, _ := f.funcdata(funcdataStackObjects)
			gofunc, _ := b.gofunc()
			a := gofunc + uint64(off) + 8
			for _, s := range b.elf.Sections {
				if s.Type != elf.SHT_NOBITS && a >= s.Addr && a-s.Addr < s.Size {
					recs = s.Offset + (a - s.Addr)
				}
			}
			b.Close()
			b = nil
			exe, err := os.ReadFile(TestExe)
			if err != nil {
				t.Fatal(err)
			}
			// The second record at the first one's offset.
			copy(exe[recs+stackObjectRecSize:recs+stackObjectRecSize+4], exe[recs:recs+4])
			p := t.TempDir() + "/exe"
			if err := os.WriteFile(p, exe, 0o700); err != nil {
				t.Fatal(err)
			}
			c, err := Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			got, err := c.StackObjects(c.toRun(f.entry))
			if err == nil || !strings.Contains(err.Error(), "before the end of record 0") || len(got) != 1 {
				t.Errorf("%s, second record moved onto the first: %d objects, error %v", f.name(), len(got), err)
			}
		}
	}
}
