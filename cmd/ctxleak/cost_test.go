package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCostUsageErrors(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "not.json")
	otherSchema := filepath.Join(dir, "run.json")
	os.WriteFile(notJSON, []byte("ctxleak cost: go1.26\n"), 0o600)
	os.WriteFile(otherSchema, []byte(`{"schema": "ctxleak.run/v1", "scenarios": []}`), 0o600)
	for _, tt := range []struct {
		name     string
		args     []string
		inStderr string
	}{
		{"unknown row", []string{"cost", "no-such-row"}, `unknown measurement "no-such-row"`},
		{"count too small", []string{"cost", "--count", "3"}, "invalid --count 3: want at least 6"},
		{"bad format", []string{"cost", "--format", "xml"}, `invalid --format "xml": want text, json`},
		{"bad duration", []string{"cost", "--duration", "0s"}, "invalid --duration 0s"},
		{"missing base", []string{"cost", "--base", filepath.Join(dir, "missing.json")}, "--base: open"},
		{"base not JSON", []string{"cost", "--base", notJSON}, "not a cost report"},
		{"base of another command", []string{"cost", "--base", otherSchema}, `schema "ctxleak.run/v1", want "ctxleak.cost/v2"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := ctxleak(t, tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.inStderr) {
				t.Errorf("exit %d, stderr %q; want exit %d and %q", code, stderr, exitUsage, tt.inStderr)
			}
		})
	}
}

func TestCostList(t *testing.T) {
	code, stdout, _ := ctxleak(t, "cost", "--list")
	if code != exitClean {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"argument", "value-depth-100", "pending-goroutine", "server-middleware-5"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--list lacks %s:\n%s", want, stdout)
		}
	}
}

// TestCostBaseGates runs one row for real, then gates a second run on it
// made faster than all its samples (exit 1) and slower than all of them
// (exit 0).
func TestCostBaseGates(t *testing.T) {
	t.Parallel()
	args := []string{"cost", "argument", "--quick", "--format", "json"}
	code, stdout, stderr := ctxleak(t, args...)
	if code != exitClean {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != "ctxleak.cost/v2" {
		t.Fatalf("schema %v", doc["schema"])
	}
	dir := t.TempDir()
	row := doc["rows"].([]any)[0].(map[string]any)
	fig := row["ns_per_op"].(map[string]any)
	lo, hi := fig["low"].(float64), fig["high"].(float64)
	// base writes the run with its ns_per_op scaled by factor.
	base := func(name string, factor float64) string {
		scaled := map[string]any{}
		for k, v := range fig {
			switch v := v.(type) {
			case float64:
				scaled[k] = v * factor
			case []any:
				var s []any
				for _, x := range v {
					s = append(s, x.(float64)*factor)
				}
				scaled[k] = s
			}
		}
		r := map[string]any{}
		for k, v := range row {
			r[k] = v
		}
		r["ns_per_op"] = scaled
		d := map[string]any{}
		for k, v := range doc {
			d[k] = v
		}
		d["rows"] = []any{r}
		b, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		os.WriteFile(path, b, 0o600)
		return path
	}
	// Clear of the whole range of the samples (the interval of 6 samples
	// spans them all): ten times faster than the fastest, ten times slower
	// than the slowest.
	spread := 10 * hi / lo
	faster, slower := base("faster.json", 1/spread), base("slower.json", spread)

	code, stdout, stderr = ctxleak(t, "cost", "argument", "--quick", "--base", faster)
	if code != exitFindings || !strings.Contains(stderr, "slower than the base") || !strings.Contains(stdout, "SLOWER") {
		t.Errorf("against a faster base: exit %d, stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}
	code, stdout, stderr = ctxleak(t, "cost", "argument", "--quick", "--base", slower)
	if code != exitClean || strings.Contains(stdout, "SLOWER") {
		t.Errorf("against a slower base: exit %d, stdout:\n%s\nstderr: %s", code, stdout, stderr)
	}
}
