package permission

import "strings"

// wildcard is a pattern in which '*' matches any run of characters,
// spaces included, and everything else matches itself.
type wildcard struct {
	parts []string // the literal pieces between the stars
}

func newWildcard(p string) wildcard { return wildcard{parts: strings.Split(p, "*")} }

func (w wildcard) hasStar() bool { return len(w.parts) > 1 }

func (w wildcard) String() string { return strings.Join(w.parts, "*") }

// match reports whether all of s matches w. A byte of s that stands for an
// unknown word (unknownWord) can only be covered by a star, so a match
// means every value the unknown word could take matches too.
func (w wildcard) match(s string) bool {
	if len(w.parts) == 1 {
		return s == w.parts[0]
	}
	first, last := w.parts[0], w.parts[len(w.parts)-1]
	if len(s) < len(first)+len(last) || !strings.HasPrefix(s, first) || !strings.HasSuffix(s, last) {
		return false
	}
	mid := s[len(first) : len(s)-len(last)]
	for _, p := range w.parts[1 : len(w.parts)-1] {
		i := strings.Index(mid, p)
		if i < 0 {
			return false
		}
		mid = mid[i+len(p):]
	}
	return true
}

// mayMatch reports whether some value of s matches w, where each
// unknownWord byte of s may stand for any text at all. It is the test for
// deny and ask rules: a command whose words cannot be known is caught by
// every rule it might match.
func (w wildcard) mayMatch(s string) bool {
	if !strings.Contains(s, unknownWord) {
		return w.match(s)
	}
	p := w.String()
	// Both sides are star patterns; look for a common string with a table
	// over (position in p, position in s).
	n, m := len(p), len(s)
	if n*m > 4<<20 {
		return true // too large to decide: assume it may match
	}
	prev := make([]bool, m+1)
	cur := make([]bool, m+1)
	// reach[i][j]: p[:i] and s[:j] can produce the same text.
	prev[0] = true
	for j := 1; j <= m; j++ {
		prev[j] = prev[j-1] && s[j-1] == unknownWord[0]
	}
	for i := 1; i <= n; i++ {
		starP := p[i-1] == '*'
		cur[0] = prev[0] && starP
		for j := 1; j <= m; j++ {
			starS := s[j-1] == unknownWord[0]
			switch {
			case starP && starS:
				cur[j] = prev[j] || cur[j-1] || prev[j-1]
			case starP:
				cur[j] = prev[j] || cur[j-1]
			case starS:
				cur[j] = cur[j-1] || prev[j]
			default:
				cur[j] = prev[j-1] && p[i-1] == s[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[m]
}

// namePattern matches a name-like specifier (Agent, Skill): a wildcard
// whose trailing " *" may also match nothing, as for Bash.
type namePattern struct {
	full, head wildcard
	tail       bool
}

func newNamePattern(s string) namePattern {
	s = strings.TrimSpace(s)
	if base, ok := strings.CutSuffix(s, ":*"); ok {
		return namePattern{full: newWildcard(base + " *"), head: newWildcard(base), tail: true}
	}
	if base, ok := strings.CutSuffix(s, " *"); ok {
		return namePattern{full: newWildcard(s), head: newWildcard(strings.TrimRight(base, " ")), tail: true}
	}
	return namePattern{full: newWildcard(s)}
}

func (p namePattern) match(s string) bool {
	return p.full.match(s) || p.tail && p.head.match(s)
}

func (p namePattern) mayMatch(s string) bool {
	return p.full.mayMatch(s) || p.tail && p.head.mayMatch(s)
}

func (p namePattern) hasStar() bool { return p.full.hasStar() || p.head.hasStar() }
