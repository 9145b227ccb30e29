package permission

import (
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// pathPattern is a compiled Read/Edit path specifier: a set of absolute
// doublestar patterns (without the leading '/'), each of which also
// matches everything below what it matches, as gitignore patterns do.
type pathPattern struct {
	globs []string
	fold  bool
}

// pathBases are the directories a path specifier may be relative to.
type pathBases struct {
	cwd    string // the session's original working directory
	source string // the settings source's directory ("/path" rules); "" means cwd
	home   string
	// lexical leaves the links of the bases unresolved: a pass that only
	// checks the rules (New) finds the same errors and warnings without
	// asking the file system, whose answers only matching needs.
	lexical bool
}

// physical is resolvePhysical, or p itself for a lexical compilation.
func (b pathBases) physical(p string) string {
	if b.lexical {
		return p
	}
	return resolvePhysical(p)
}

// compilePathPattern turns a specifier into absolute patterns:
//
//	//abs/path   the absolute path /abs/path
//	~/path       under the home directory
//	/path        under the rule source's directory
//	./path       under the working directory
//	path         allow rules: under the working directory (a bare name at
//	             any depth below it); deny and ask rules: at any depth
//	             anywhere, so that they cannot be dodged with another
//	             directory
//
// '*' matches within one path segment and '**' across segments. Symbolic
// links in the base directories are resolved as well, so a rule matches
// both ways of naming a file.
func compilePathPattern(spec string, b Behavior, bases pathBases, fold bool) (pathPattern, error) {
	s := spec
	if len(s) > 1 {
		s = strings.TrimRight(s, "/")
		if s == "" {
			s = "/"
		}
	}
	var bases2 []string // base directories (unescaped), "" for none
	rel := s
	anywhere := false
	switch {
	case strings.HasPrefix(s, "//"):
		bases2, rel = []string{"/"}, s[2:]
	case s == "~" || strings.HasPrefix(s, "~/"):
		if bases.home == "" {
			return pathPattern{}, fmt.Errorf("no home directory for %q", spec)
		}
		bases2, rel = []string{bases.home}, strings.TrimPrefix(s[1:], "/")
	case strings.HasPrefix(s, "/"):
		src := bases.source
		if src == "" {
			src = bases.cwd
		}
		bases2, rel = []string{src}, s[1:]
	case strings.HasPrefix(s, "./"):
		bases2, rel = []string{bases.cwd}, s[2:]
	case b == Allow:
		if !strings.Contains(s, "/") {
			rel = "**/" + s
		}
		bases2 = []string{bases.cwd}
	default:
		anywhere = true
	}
	var p pathPattern
	p.fold = fold
	add := func(g string) error {
		g = strings.TrimPrefix(g, "/")
		if fold {
			g = strings.ToLower(g)
		}
		if !doublestar.ValidatePattern(g) {
			return fmt.Errorf("invalid path pattern %q", spec)
		}
		for _, have := range p.globs {
			if have == g {
				return nil
			}
		}
		p.globs = append(p.globs, g)
		return nil
	}
	if anywhere {
		return p, add("**/" + path.Clean(s))
	}
	for _, base := range bases2 {
		if base == "" || !filepath.IsAbs(base) {
			return pathPattern{}, fmt.Errorf("no base directory for %q", spec)
		}
		for _, form := range addUnique(nil, filepath.Clean(base), bases.physical(filepath.Clean(base))) {
			g := escapeGlob(form)
			if rel != "" {
				g = path.Clean(g + "/" + rel)
			}
			if err := add(g); err != nil {
				return pathPattern{}, err
			}
			// The literal start of rel may itself lie behind a link.
			if rel != "" {
				static, rest := doublestar.SplitPattern(rel)
				if static != "." && !strings.ContainsRune(static, '\\') {
					lex := filepath.Clean(form + "/" + static)
					if phys := bases.physical(lex); phys != lex {
						if err := add(path.Clean(escapeGlob(phys) + "/" + rest)); err != nil {
							return pathPattern{}, err
						}
					}
				}
			}
		}
	}
	return p, nil
}

// escapeGlob escapes the characters doublestar gives a meaning to.
func escapeGlob(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]{}\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// match reports whether the absolute path p is matched by the pattern or
// lies below something it matches.
func (pp pathPattern) match(p string) bool {
	p = strings.TrimPrefix(p, "/")
	if pp.fold {
		p = strings.ToLower(p)
	}
	for _, g := range pp.globs {
		if ok, _ := doublestar.Match(g, p); ok {
			return true
		}
		if ok, _ := doublestar.Match(g+"/**", p); ok {
			return true
		}
	}
	return false
}
