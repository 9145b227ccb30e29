package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ExpandGlobs turns absolute doublestar patterns (such as the paths of
// permission deny rules, "/home/u/project/**/.env") into the existing
// paths they match, for Policy.ReadDeny and Policy.WriteDeny. A pattern
// without wildcards is its own path. A pattern with wildcards is matched
// by walking from its literal prefix, or, when that prefix is the root
// ("**/.env" anywhere), from each of roots. What a match contains is not
// walked further: the match covers it. The walk visits at most budget
// entries in all; truncated reports that it stopped early, so that some
// matching paths may be missing.
func ExpandGlobs(patterns, roots []string, budget int) (paths []string, truncated bool) {
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, pat := range patterns {
		if !strings.HasPrefix(pat, "/") || !doublestar.ValidatePattern(pat) {
			continue
		}
		base, rest := doublestar.SplitPattern(pat)
		if rest == "" || !hasMeta(rest) {
			if _, err := os.Lstat(unescape(pat)); err == nil {
				add(filepath.Clean(unescape(pat)))
			}
			continue
		}
		starts := []string{unescape(base)}
		if filepath.Clean(starts[0]) == "/" {
			starts = roots
		}
		for _, start := range starts {
			err := filepath.WalkDir(start, func(p string, d fs.DirEntry, err error) error {
				if budget <= 0 {
					truncated = true
					return fs.SkipAll
				}
				budget--
				if err != nil {
					return nil // unreadable: nothing to deny there that could be read
				}
				if ok, _ := doublestar.Match(pat, p); ok {
					add(p)
					if d.IsDir() {
						return fs.SkipDir
					}
				}
				return nil
			})
			_ = err // WalkDir's callback never fails
		}
	}
	return paths, truncated
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[{\`) }

// unescape removes doublestar's backslash escapes from a literal pattern.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
