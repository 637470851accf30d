package binsym

import "testing"

func TestMethodValueReceiver(t *testing.T) {
	for fn, want := range map[string]string{
		"main.(*server).handle-fm":             "*main.server",
		"main.server.handle-fm":                "main.server",
		"net/http.(*Server).Serve-fm":          "*net/http.Server",
		"gopkg.in/yaml%2ev3.(*Node).Decode-fm": "*gopkg.in/yaml%2ev3.Node",
		"main.(*cache[...]).put-fm":            "", // generic: shapes
		"main.server.handle":                   "", // not a method value
		"main.f-fm":                            "", // no receiver
		"-fm":                                  "",
		"main.(*broken-fm":                     "",
	} {
		if got := methodValueReceiver(fn); got != want {
			t.Errorf("methodValueReceiver(%q) = %q, want %q", fn, got, want)
		}
	}
}

func TestPieceAt(t *testing.T) {
	fb := func(v int8) []byte { return []byte{opFbreg, byte(v) & 0x7f} } // small negative sleb
	piece := func(n byte) []byte { return []byte{opPiece, n} }
	cat := func(parts ...[]byte) []byte {
		var b []byte
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	for _, tt := range []struct {
		name   string
		expr   []byte
		cfaOff int64
		size   int64
		in     int64
		ok     bool
	}{
		{"lone pointer", fb(-40), -40, 8, 0, true},
		{"lone, other slot", fb(-40), -32, 8, 0, false},
		{"lone interface, data word", fb(-40), -32, 16, 8, true},
		{"lone, unknown size", fb(-40), -32, -1, 0, false},
		{"stack then register", cat(fb(-48), piece(8), []byte{0x50}, piece(8)), -48, 16, 0, true},
		{"register then stack", cat([]byte{0x50}, piece(8), fb(-48), piece(8)), -48, 16, 8, true},
		{"register then stack, first word", cat([]byte{0x50}, piece(8), fb(-48), piece(8)), -56, 16, 0, false},
		{"two stack pieces", cat(fb(-64), piece(8), fb(-32), piece(8)), -32, 16, 8, true},
		{"optimized out piece", cat(piece(8), fb(-32), piece(8)), -32, 16, 8, true},
		{"register only", []byte{0x50}, -8, 8, 0, false},
		{"unknown op", []byte{0x03, 1, 2, 3, 4, 5, 6, 7, 8}, -8, 8, 0, false},
		{"truncated sleb", []byte{opFbreg, 0x80}, -8, 8, 0, false},
		{"empty", nil, -8, 8, 0, false},
	} {
		in, ok := pieceAt(tt.expr, tt.cfaOff, tt.size)
		if ok != tt.ok || ok && in != tt.in {
			t.Errorf("%s: pieceAt = %d, %v; want %d, %v", tt.name, in, ok, tt.in, tt.ok)
		}
	}
}

// The pieces of an interface whose type word and data word lie apart.
func TestPieces(t *testing.T) {
	expr := []byte{opFbreg, 0x98, 0x7f, opPiece, 8, opFbreg, 0xb0, 0x7f, opPiece, 8} // -104, then -80
	in, ps, ok := pieces(expr, -80, 16)
	want := []VarPiece{{Offset: 0, Size: 8, CFAOff: -104, OnStack: true}, {Offset: 8, Size: 8, CFAOff: -80, OnStack: true}}
	if !ok || in != 8 || len(ps) != 2 || ps[0] != want[0] || ps[1] != want[1] {
		t.Errorf("pieces = %d, %+v, %v; want 8, %+v", in, ps, ok, want)
	}
	_, ps, ok = pieces([]byte{0x50, opPiece, 8, opFbreg, 0xb0, 0x7f, opPiece, 8}, -80, 16)
	if !ok || len(ps) != 2 || ps[0].OnStack || !ps[1].OnStack {
		t.Errorf("register then stack: %+v, %v", ps, ok)
	}
}

func TestLocList5At(t *testing.T) {
	const entry = 0x1000
	list := []byte{
		lleBaseAddrx, 0x05, // base: the function's entry
		lleOffsetPair, 0x00, 0x10, 1, 0x50, // [entry, entry+16): register
		lleOffsetPair, 0x10, 0x40, 2, opFbreg, 0x58, // [entry+16, entry+64): fbreg -40
		lleEnd,
	}
	if _, ok := locList5At(list, 0, entry, entry+8); !ok {
		t.Error("no location at entry+8")
	}
	expr, ok := locList5At(list, 0, entry, entry+0x20)
	if !ok || len(expr) != 2 || expr[0] != opFbreg {
		t.Errorf("at entry+0x20: %x, %v; want fbreg -40", expr, ok)
	}
	if _, ok := locList5At(list, 0, entry, entry+0x40); ok {
		t.Error("a location past the list's ranges")
	}
	for cut := range len(list) - 1 {
		locList5At(list[:cut], 0, entry, entry+0x20) // no panic on a cut list
	}
	if _, ok := locList5At(list, uint64(len(list)+5), entry, entry); ok {
		t.Error("a location at an offset past the section")
	}
}
