package bytesize

import "testing"

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Size
	}{
		{"0", 0},
		{"4096", 4096},
		{"512KiB", 512 * KiB},
		{"50MiB", 50 * MiB},
		{"50mib", 50 * MiB},
		{"1GiB", GiB},
		{"1.5MiB", MiB + MiB/2},
		{"2M", 2 * MiB},
		{"10kB", 10000},
		{"1MB", 1000000},
		{" 3 KiB ", 3 * KiB},
		{"100B", 100},
	} {
		got, err := Parse(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Parse(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "MiB", "-1MiB", "fifty", "1.2.3KiB", "NaN", "Inf", "99999999999TiB", "1e30GiB", "5 parsecs"} {
		if got, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %d, want error", in, got)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		in   int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{50 << 20, "50.0 MiB"},
		{-(3 << 30), "-3.0 GiB"},
	} {
		if got := Format(tt.in); got != tt.want {
			t.Errorf("Format(%d) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := FormatDelta(50 << 20); got != "+50.0 MiB" {
		t.Errorf("FormatDelta = %q", got)
	}
}

func TestCompactRoundTrip(t *testing.T) {
	for _, s := range []Size{0, 1, 1000, KiB, 512 * KiB, 50 * MiB, GiB, 3*GiB + 1} {
		got, err := Parse(Compact(s))
		if err != nil || got != s {
			t.Errorf("Parse(Compact(%d)) = %d, %v", s, got, err)
		}
	}
}

func TestFlag(t *testing.T) {
	var s Size
	f := NewFlag(&s, 50*MiB)
	if f.String() != "50MiB" {
		t.Errorf("default String() = %q", f.String())
	}
	if err := f.Set("1GiB"); err != nil || s != GiB {
		t.Errorf("Set(1GiB) = %v, s = %d", err, s)
	}
	if err := f.Set("lots"); err == nil {
		t.Error("Set(lots) succeeded")
	}
}
