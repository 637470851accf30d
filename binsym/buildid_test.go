package binsym

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestGoBuildIDMatchesGoTool(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := GoBuildID(exe)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	if want := strings.TrimSpace(string(out)); got != want {
		t.Errorf("GoBuildID = %q, go tool buildid says %q", got, want)
	}
	if _, err := GoBuildID("buildid.go"); err == nil {
		t.Error("GoBuildID of a source file: no error")
	}
}
