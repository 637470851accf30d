package english

import "testing"

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Plural(0, "group"), "0 groups"},
		{Plural(1, "group"), "1 group"},
		{Plural(33, "group"), "33 groups"},
		{PluralDelta(1, "object"), "+1 object"},
		{PluralDelta(-1, "object"), "-1 object"},
		{PluralDelta(5, "object"), "+5 objects"},
		{PluralDelta(0, "object"), "+0 objects"},
		{Noun(2, "goroutine"), "goroutines"},
		{List(nil), ""},
		{List([]string{"12"}), "12"},
		{List([]string{"12", "14"}), "12 and 14"},
		{List([]string{"12", "14", "15"}), "12, 14 and 15"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}
