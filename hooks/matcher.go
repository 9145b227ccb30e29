package hooks

import (
	"fmt"
	"regexp"
	"strings"
)

// pattern is a compiled matcher.
type pattern struct {
	all   bool
	names []string       // exact names, for a plain name or list
	re    *regexp.Regexp // otherwise
}

// compilePattern reads a matcher the way the reference does: empty or "*"
// matches everything; a string of only letters, digits, "_", "-", spaces,
// "|" and "," is a list of exact names separated by "|" or ","; anything
// else is an unanchored regular expression ("Edit.*" also matches
// "NotebookEdit"; write "^Edit$" to anchor it). Go's RE2 syntax is used,
// so lookarounds and backreferences do not compile.
func compilePattern(s string) (pattern, error) {
	t := strings.TrimSpace(s)
	if t == "" || t == "*" {
		return pattern{all: true}, nil
	}
	if plainList(t) {
		var p pattern
		for _, f := range strings.FieldsFunc(t, func(r rune) bool { return r == '|' || r == ',' }) {
			if f = strings.TrimSpace(f); f != "" {
				p.names = append(p.names, f)
			}
		}
		if len(p.names) == 0 {
			return pattern{all: true}, nil
		}
		return p, nil
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return pattern{}, fmt.Errorf("matcher %q: %w", s, err)
	}
	return pattern{re: re}, nil
}

func plainList(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '_', r == '-', r == ' ', r == '|', r == ',':
		default:
			return false
		}
	}
	return true
}

func (p pattern) match(target string) bool {
	switch {
	case p.all:
		return true
	case p.re != nil:
		return p.re.MatchString(target)
	}
	for _, n := range p.names {
		if n == target {
			return true
		}
	}
	return false
}
