package postgres

import (
	"regexp"
	"strings"
	"testing"
)

// identRE is the rule validIdent implements, as a regular expression.
var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,47}$`)

func TestValidIdent(t *testing.T) {
	for _, p := range []string{
		"", "a", "_", "9a", "a9", "agentloop_sessions", "A_B_C", strings.Repeat("x", 48),
		strings.Repeat("x", 49), "a-b", "a b", "a.b", `a"b`, "é", "a;drop", "a\n",
	} {
		if got, want := validIdent(p), identRE.MatchString(p); got != want {
			t.Errorf("validIdent(%q) = %v, want %v", p, got, want)
		}
	}
}

func FuzzValidIdent(f *testing.F) {
	for _, s := range []string{"", "abc", "_9", "9", strings.Repeat("x", 48), "a-b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		if got, want := validIdent(p), identRE.MatchString(p); got != want {
			t.Errorf("validIdent(%q) = %v, want %v", p, got, want)
		}
	})
}
