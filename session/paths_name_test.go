package session

import (
	"regexp"
	"strings"
	"testing"
)

// projectNameRE is the rule projectNameOK implements, as a regular
// expression.
var projectNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func TestProjectNameOK(t *testing.T) {
	for _, n := range []string{
		"", "a", "my-proj_1", "Z9", strings.Repeat("x", 64), strings.Repeat("x", 65),
		"a b", "a/b", "../x", "ü", "a.b", "-", "_", "a\n", "\x00",
	} {
		if got, want := projectNameOK(n), projectNameRE.MatchString(n); got != want {
			t.Errorf("projectNameOK(%q) = %v, want %v", n, got, want)
		}
	}
}

func FuzzProjectNameOK(f *testing.F) {
	for _, s := range []string{"", "abc", strings.Repeat("-", 64), "a/b", "é"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, n string) {
		if got, want := projectNameOK(n), projectNameRE.MatchString(n); got != want {
			t.Errorf("projectNameOK(%q) = %v, want %v", n, got, want)
		}
	})
}
