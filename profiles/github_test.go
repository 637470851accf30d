package profiles

import "testing"

func TestGitHubEscaping(t *testing.T) {
	if got, want := escapeData("50% done\r\nnext"), "50%25 done%0D%0Anext"; got != want {
		t.Errorf("escapeData = %q, want %q", got, want)
	}
	if got, want := escapeProperty("C:\\a,b%\n"), "C%3A\\a%2Cb%25%0A"; got != want {
		t.Errorf("escapeProperty = %q, want %q", got, want)
	}
}
