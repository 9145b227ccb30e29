package permission

import (
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Reads of whole directory trees (grep -r, rg, diff -r, cp -r, git grep
// --untracked) reach every file below the directory, so a deny or ask rule
// on any of them applies to the read. treeRule finds such a rule: one that
// matches the directory or an ancestor, or a path that exists below it.

// treeWalkLimit bounds the entries looked at below one directory; past it,
// any rule that could match below the directory counts as matching.
const treeWalkLimit = 20000

// mayMatchBelow reports whether the pattern could match some path below
// the absolute directory dir (whether or not it exists).
func (pp pathPattern) mayMatchBelow(dir string) bool {
	d := strings.TrimPrefix(filepath.Clean(dir), "/")
	if pp.fold {
		d = strings.ToLower(d)
	}
	var segs []string
	if d != "" {
		segs = strings.Split(d, "/")
	}
	for _, g := range pp.globs {
		if globCanExtend(strings.Split(g, "/"), segs) {
			return true
		}
	}
	return false
}

// globCanExtend reports whether some path that starts with the segments
// dir (and has at least one more) can match the glob segments g, or a path
// below one that g matches.
func globCanExtend(g, dir []string) bool {
	switch {
	case len(g) == 0:
		return true // g matched an ancestor: everything below matches
	case len(dir) == 0:
		return true // the remaining segments can be met by names below
	case g[0] == "**":
		return globCanExtend(g[1:], dir) || globCanExtend(g, dir[1:])
	}
	if ok, err := doublestar.Match(g[0], dir[0]); err != nil || !ok {
		return false
	}
	return globCanExtend(g[1:], dir[1:])
}

// treeRule returns the first of rules that applies to reading the
// directory whose candidate forms are cands as a whole tree: a rule
// matching a candidate, or one matching a path found below it (symbolic
// links below it are followed one step, as diff -r and cp -L do). When the
// walk is cut short at treeWalkLimit entries, a rule that could match
// below counts.
func (st *state) treeRule(rules []*rule, cands []string) *rule {
	if r := matchPath(rules, cands, false); r != nil {
		return r
	}
	var maybe []*rule
	for _, r := range rules {
		for _, c := range cands {
			if r.path.mayMatchBelow(c) {
				maybe = append(maybe, r)
				break
			}
		}
	}
	if len(maybe) == 0 {
		return nil
	}
	var hit *rule
	seen := 0
	for _, root := range cands {
		phys := resolvePhysical(root)
		err := filepath.WalkDir(phys, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable: the command cannot read it either
			}
			seen++
			if seen > treeWalkLimit {
				hit = maybe[0]
				return fs.SkipAll
			}
			rel := strings.TrimPrefix(p, phys)
			names := addUnique(nil, p, filepath.Clean(root+rel))
			if e.Type()&fs.ModeSymlink != 0 {
				if t, err := filepath.EvalSymlinks(p); err == nil {
					names = addUnique(names, t)
				}
			}
			if r := matchPath(maybe, names, false); r != nil {
				hit = r
				return fs.SkipAll
			}
			return nil
		})
		if err != nil && hit == nil {
			hit = maybe[0]
		}
		if hit != nil {
			return hit
		}
	}
	return nil
}
