package tools

import (
	"path/filepath"
	"testing"
)

// TestGrepIgnoreByName checks that rules decided by an entry's name alone
// decide as the whole pattern would.
func TestGrepIgnoreByName(t *testing.T) {
	rules := parseIgnore("*.log\n!keep.log\nbuild/\nMakefile\n*.min.js\nfoo*bar\n[ab].txt\n{x}\n\\#hash\n/top\na/**/b\n**/deep\nx?y\n")
	names := make([]nameGlob, len(rules))
	byName := 0
	for i, r := range rules {
		if names[i] = ruleName(r); names[i].kind != nameNone {
			byName++
		}
	}
	if byName < 8 {
		t.Errorf("only %d of %d rules go by name", byName, len(rules))
	}
	root := filepath.FromSlash("/r")
	plain := &ignoreNode{dir: root, rules: rules}
	fast := &ignoreNode{dir: root, rules: rules, names: names}
	for _, rel := range []string{
		"a.log", "x/a.log", "keep.log", "x/keep.log", "build", "x/build", "Makefile", "x/Makefile.am",
		"app.min.js", "x/app.js", "foobar", "x/foo-bar", "fooba", "a.txt", "x/c.txt", "x", "{x}",
		"#hash", "x/#hash", "top", "x/top", "a/b", "a/x/b", "deep", "x/y/deep", "xzy", "x/xy", "log",
	} {
		abs := filepath.Join(root, filepath.FromSlash(rel))
		for _, isDir := range []bool{false, true} {
			if got, want := fast.ignored(abs, isDir), plain.ignored(abs, isDir); got != want {
				t.Errorf("ignored(%s, dir %v) = %v by name, %v by pattern", rel, isDir, got, want)
			}
		}
	}
}
