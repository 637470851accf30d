// Package english phrases counts for ctxleak's messages: "1 group",
// "3 groups", "+1 object", "12, 14 and 15".
package english

import (
	"fmt"
	"strings"
)

// Plural formats n with noun, adding an "s" unless n is 1 or -1:
// Plural(1, "group") is "1 group", Plural(3, "group") is "3 groups".
func Plural(n int, noun string) string {
	return fmt.Sprintf("%d %s", n, Noun(n, noun))
}

// PluralDelta is Plural with a sign: "+1 object", "-3 objects", "0 objects".
func PluralDelta(n int64, noun string) string {
	return fmt.Sprintf("%+d %s", n, Noun64(n, noun))
}

// Noun returns noun for a count of n: as it is for 1 or -1, with an "s"
// otherwise.
func Noun(n int, noun string) string { return Noun64(int64(n), noun) }

// Noun64 is Noun for an int64 count.
func Noun64(n int64, noun string) string {
	if n == 1 || n == -1 {
		return noun
	}
	return noun + "s"
}

// List joins items as a sentence does: "a", "a and b", "a, b and c".
func List(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}
