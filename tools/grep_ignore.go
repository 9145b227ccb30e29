package tools

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// ignoreRule is one pattern line of a .gitignore-style file.
type ignoreRule struct {
	pattern string // doublestar pattern relative to the file's directory
	negate  bool   // "!pattern": re-include
	dirOnly bool   // "pattern/": directories only
}

// ruleName returns the name glob that decides rule r alone when its
// pattern is "**/" then a glob without a slash, which matches whatever
// directories the entry is in; else a glob of kind nameNone.
func ruleName(r ignoreRule) nameGlob {
	last, ok := strings.CutPrefix(r.pattern, "**/")
	if !ok || strings.Contains(last, "/") || strings.Contains(last, "**") {
		return nameGlob{}
	}
	return newNameGlob(last)
}

// ignoreNode holds the rules of the ignore files of one directory and links
// to those of its ancestors. Nodes are immutable once built and shared by
// the walkers of all subdirectories.
type ignoreNode struct {
	dir    string // absolute
	rules  []ignoreRule
	names  []nameGlob // ruleName of each rule, when computed
	git    bool       // inside a git repository: .gitignore files apply
	parent *ignoreNode
}

// load returns the node for directory dir, whose entries are given: n when
// dir has no ignore files, else a new child of n.
func (n *ignoreNode) load(dir string, entries []fs.DirEntry) *ignoreNode {
	git := n != nil && n.git
	var isRepo, hasGitignore, hasIgnore, hasRgignore bool
	for _, e := range entries {
		switch e.Name() {
		case ".git":
			isRepo = true
		case ".gitignore":
			hasGitignore = !e.IsDir()
		case ".ignore":
			hasIgnore = !e.IsDir()
		case ".rgignore":
			hasRgignore = !e.IsDir()
		}
	}
	git = git || isRepo
	var rules []ignoreRule
	// Later rules win, so files are read from lowest to highest precedence.
	if isRepo {
		rules = append(rules, readIgnoreFile(filepath.Join(dir, ".git", "info", "exclude"))...)
	}
	if git && hasGitignore {
		rules = append(rules, readIgnoreFile(filepath.Join(dir, ".gitignore"))...)
	}
	if hasIgnore {
		rules = append(rules, readIgnoreFile(filepath.Join(dir, ".ignore"))...)
	}
	if hasRgignore {
		rules = append(rules, readIgnoreFile(filepath.Join(dir, ".rgignore"))...)
	}
	if len(rules) == 0 && git == (n != nil && n.git) {
		return n
	}
	names := make([]nameGlob, len(rules))
	for i, r := range rules {
		names[i] = ruleName(r)
	}
	return &ignoreNode{dir: dir, rules: rules, names: names, git: git, parent: n}
}

// ignored reports whether the entry at abs is excluded. Deeper files take
// precedence over shallower ones; within a file the last matching rule
// decides.
func (n *ignoreNode) ignored(abs string, isDir bool) bool {
	name := abs[strings.LastIndexByte(abs, filepath.Separator)+1:]
	for ; n != nil; n = n.parent {
		if len(n.rules) == 0 {
			continue
		}
		rel, ok := relSlash(n.dir, abs)
		if !ok {
			continue
		}
		for i := len(n.rules) - 1; i >= 0; i-- {
			r := &n.rules[i]
			if r.dirOnly && !isDir {
				continue
			}
			var ok bool
			if i < len(n.names) && n.names[i].kind != nameNone {
				ok = n.names[i].match(name)
			} else {
				ok, _ = doublestar.Match(r.pattern, rel)
			}
			if ok {
				return !r.negate
			}
		}
	}
	return false
}

// relSlash returns abs relative to dir with forward slashes, if abs lies
// below dir.
func relSlash(dir, abs string) (string, bool) {
	prefix := dir
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	rest, ok := strings.CutPrefix(abs, prefix)
	if !ok || rest == "" {
		return "", false
	}
	return filepath.ToSlash(rest), true
}

func readIgnoreFile(path string) []ignoreRule {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return parseIgnore(string(data))
}

// parseIgnore reads gitignore syntax: comments, "!" negation, a trailing
// "/" for directories only, and patterns anchored to the file's directory
// when they contain a slash (else they match a name at any depth).
func parseIgnore(data string) []ignoreRule {
	var rules []ignoreRule
	for line := range strings.SplitSeq(data, "\n") {
		line = strings.TrimSuffix(line, "\r")
		for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, `\ `) {
			line = line[:len(line)-1]
		}
		if line == "" || line[0] == '#' {
			continue
		}
		var r ignoreRule
		switch {
		case line[0] == '!':
			r.negate = true
			line = line[1:]
		case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		line = strings.TrimPrefix(line, "/")
		// Braces are literal in gitignore but alternation in doublestar.
		line = strings.NewReplacer("{", `\{`, "}", `\}`).Replace(line)
		if !anchored {
			line = "**/" + line
		}
		if !doublestar.ValidatePattern(line) {
			continue
		}
		r.pattern = line
		rules = append(rules, r)
	}
	return rules
}

// ancestorIgnores returns the ignore rules that apply to root from the
// directories above it, up to the root of the git repository holding it
// (none when root is not inside one, or is the repository's root: its own
// files are read by the walk).
func ancestorIgnores(root string) *ignoreNode {
	repo := ""
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			repo = dir
			break
		}
		if filepath.Dir(dir) == dir {
			break
		}
	}
	if _, err := os.Lstat(filepath.Join(root, ".git")); err == nil || repo == "" {
		return nil
	}
	var dirs []string
	for dir := filepath.Dir(root); ; dir = filepath.Dir(dir) {
		dirs = append(dirs, dir)
		if dir == repo {
			break
		}
	}
	var n *ignoreNode
	for i := len(dirs) - 1; i >= 0; i-- {
		entries, err := os.ReadDir(dirs[i])
		if err != nil {
			continue
		}
		n = n.load(dirs[i], entries)
	}
	return n
}
