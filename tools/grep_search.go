package tools

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// grepMaxColumns is the length past which a printed line is cut.
const grepMaxColumns = 500

var errNewlineInPattern = errors.New("the pattern contains a line break, but lines are searched one at a time; set multiline to true to match across lines")

// compileGrep compiles a ripgrep-style pattern to a Go regexp that can run
// over a whole file at once. As in ripgrep, ^ and $ match at line
// boundaries. Without multiline, matches never cross a line break: "." and
// character classes lose "\n" (so [^a] or \s stop at the end of the line),
// and a literal line break is an error. With multiline, "." matches
// newlines too (ripgrep's -U --multiline-dotall).
func compileGrep(pattern string, ignoreCase, multiline bool) (*regexp.Regexp, error) {
	s, err := newGrepMatcher(pattern, ignoreCase, multiline)
	return s.re, err
}

// grepMatcher is a compiled pattern with the literal every match contains,
// used to skip files and lines that cannot match before the regexp runs.
type grepMatcher struct {
	re        *regexp.Regexp
	multiline bool
	lit       []byte // required literal; nil when there is none
	fold      bool   // lit is lower-case ASCII, to be found case-insensitively
	// pure is set when the pattern is lit and nothing else: its matches
	// are then the occurrences of lit, and the regexp need not run.
	pure bool
	litPlan
	// dfa decides quickly whether a line matches when there is no literal
	// to look for; nil when it cannot be used.
	dfa *grepDFA
}

func newGrepMatcher(pattern string, ignoreCase, multiline bool) (grepMatcher, error) {
	flags := syntax.Perl &^ syntax.OneLine
	if ignoreCase {
		flags |= syntax.FoldCase
	}
	if multiline {
		flags |= syntax.DotNL
	}
	tree, err := syntax.Parse(pattern, flags)
	if err != nil {
		return grepMatcher{}, err
	}
	if !multiline {
		if err := stripNewlines(tree); err != nil {
			return grepMatcher{}, err
		}
	}
	expr := tree.String()
	re, err := regexp.Compile(expr)
	if err != nil {
		return grepMatcher{}, err
	}
	m := grepMatcher{re: re, multiline: multiline}
	// Lines are matched one by one when there is a literal; \A and \z
	// would then match at every line, so such patterns go without.
	if lit, fold := requiredLiteral(tree); lit != "" && !hasTextAnchor(tree) {
		m.lit, m.fold = []byte(lit), fold
		m.pure = tree.Op == syntax.OpLiteral && len(lit) == len(string(tree.Rune))
		m.litPlan = newLitPlan(m.lit, fold)
	} else if !multiline && !hasTextAnchor(tree) {
		m.dfa = newGrepDFA(expr)
	}
	return m, nil
}

// requiredLiteral returns a string that every match of re contains, the
// best prefilter it finds (see betterLiteral), or "". A case-folded
// literal is returned in lower case with fold set, and only when plain
// ASCII lower-casing finds all its matches: Unicode folding also maps k
// and s to the Kelvin sign and the long s, so runs with those letters are
// left out. (Those are the only ASCII letters that fold to other runes.)
func requiredLiteral(re *syntax.Regexp) (string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase == 0 {
			for _, r := range re.Rune {
				if r == utf8.RuneError {
					return "", false
				}
			}
			return string(re.Rune), false
		}
		best, cur := "", []byte{}
		flush := func() {
			if len(cur) > len(best) {
				best = string(cur)
			}
			cur = cur[:0]
		}
		for _, r := range re.Rune {
			l := unicode.ToLower(r)
			if r >= utf8.RuneSelf || l == 'k' || l == 's' {
				flush()
				continue
			}
			cur = append(cur, byte(l))
		}
		flush()
		return best, best != ""
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLiteral(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLiteral(re.Sub[0])
		}
	case syntax.OpConcat:
		best, bestFold := "", false
		for _, sub := range re.Sub {
			if lit, fold := requiredLiteral(sub); betterLiteral(lit, fold, best, bestFold) {
				best, bestFold = lit, fold
			}
		}
		return best, bestFold
	}
	return "", false
}

func hasTextAnchor(re *syntax.Regexp) bool {
	if re.Op == syntax.OpBeginText || re.Op == syntax.OpEndText {
		return true
	}
	for _, sub := range re.Sub {
		if hasTextAnchor(sub) {
			return true
		}
	}
	return false
}

// matches returns the matches of the pattern in data, as FindAllIndex
// would, without those on the empty "line" after a final line break. With
// first set it stops at the first. Lines without the required literal are
// skipped (in multiline mode, only whole files are); without a literal,
// the automaton, when there is one, picks the lines for the regexp.
func (m *grepMatcher) matches(data []byte, first bool) [][]int {
	n := -1
	if first {
		n = 1
	}
	var locs [][]int
	switch {
	case m.lit == nil && m.dfa != nil:
		return m.dfa.matches(m.re, data, first)
	case m.lit == nil:
		locs = m.re.FindAllIndex(data, n)
	case m.pure:
		// The literal is not empty, so none of its occurrences is on
		// the "line" after a final line break.
		s := m.scanner(data)
		for pos := 0; ; {
			i := s.index(pos)
			if i < 0 {
				break
			}
			pos = i + len(m.lit)
			locs = append(locs, []int{i, pos})
			if first {
				break
			}
		}
		return locs
	case m.multiline:
		s := m.scanner(data)
		if s.index(0) < 0 {
			return nil
		}
		locs = m.re.FindAllIndex(data, n)
	default:
		s := m.scanner(data)
		for pos := 0; pos < len(data); {
			i := s.index(pos)
			if i < 0 {
				break
			}
			start := bytes.LastIndexByte(data[:i], '\n') + 1
			end := len(data)
			if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
				end = i + j
			}
			if first {
				if loc := m.re.FindIndex(data[start:end]); loc != nil {
					return [][]int{{start + loc[0], start + loc[1]}}
				}
			} else {
				for _, loc := range m.re.FindAllIndex(data[start:end], -1) {
					locs = append(locs, []int{start + loc[0], start + loc[1]})
				}
			}
			pos = end + 1
		}
	}
	if len(locs) > 0 && phantom(data, locs[len(locs)-1][0]) {
		locs = locs[:len(locs)-1]
	}
	return locs
}

// stripNewlines rewrites re in place so that it cannot match "\n".
func stripNewlines(re *syntax.Regexp) error {
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			if r == '\n' {
				return errNewlineInPattern
			}
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpCharClass:
		var out []rune
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= '\n' && '\n' <= hi {
				if lo < '\n' {
					out = append(out, lo, '\n'-1)
				}
				if hi > '\n' {
					out = append(out, '\n'+1, hi)
				}
				continue
			}
			out = append(out, lo, hi)
		}
		if len(out) == 0 {
			*re = syntax.Regexp{Op: syntax.OpNoMatch}
			return nil
		}
		re.Rune = out
	}
	for _, sub := range re.Sub {
		if err := stripNewlines(sub); err != nil {
			return err
		}
	}
	return nil
}

// grepSearch holds what a search looks for and how it prints matches.
type grepSearch struct {
	m            grepMatcher
	before       int
	after        int
	lineNumbers  bool
	onlyMatching bool
}

// hasMatch reports whether data holds a match on a real line.
func (s *grepSearch) hasMatch(data []byte) bool {
	return len(s.m.matches(data, true)) > 0
}

// phantom reports whether a match at pos lies on the empty "line" after a
// final line break (or in an empty file), which is no line at all.
func phantom(data []byte, pos int) bool {
	return pos >= len(data) && (len(data) == 0 || data[len(data)-1] == '\n')
}

// fileMatches holds the matches of one file: the matched lines (ascending,
// unique) and, for only-matching output, each non-empty match with the
// line it starts on.
type fileMatches struct {
	lines []grepLine
	parts []matchPart
}

// grepLine is a line of a file: its number (0-based) and where its text
// is, without the line break.
type grepLine struct {
	n          int
	start, end int
}

type matchPart struct {
	line       int
	start, end int
}

// lineFrom returns the line of data that starts at offset start and has
// number n.
func lineFrom(data []byte, n, start int) grepLine {
	end := len(data)
	if i := bytes.IndexByte(data[start:], '\n'); i >= 0 {
		end = start + i
	}
	return grepLine{n, start, end}
}

// nextLine returns the line after l, if there is one: a final line break
// ends the last line, it does not start another.
func nextLine(data []byte, l grepLine) (grepLine, bool) {
	if l.end+1 >= len(data) {
		return grepLine{}, false
	}
	return lineFrom(data, l.n+1, l.end+1), true
}

// prevLine returns the line before l, if there is one.
func prevLine(data []byte, l grepLine) (grepLine, bool) {
	if l.n == 0 {
		return grepLine{}, false
	}
	start := bytes.LastIndexByte(data[:l.start-1], '\n') + 1
	return grepLine{l.n - 1, start, l.start - 1}, true
}

// find finds the matches of one file. Line numbers are counted from one
// match to the next with bytes.Count, so that a file is not scanned byte
// by byte for its lines.
func (s *grepSearch) find(data []byte) *fileMatches {
	locs := s.m.matches(data, false)
	if len(locs) == 0 {
		return nil
	}
	fm := &fileMatches{}
	// The line holding offset pos; offsets only grow from call to call.
	cur := grepLine{0, 0, -1}
	lineOf := func(pos int) grepLine {
		if nl := bytes.Count(data[cur.start:pos], []byte{'\n'}); nl > 0 || cur.end < 0 {
			start := cur.start
			if nl > 0 {
				start = bytes.LastIndexByte(data[:pos], '\n') + 1
			}
			cur = lineFrom(data, cur.n+nl, start)
		}
		return cur
	}
	for _, loc := range locs {
		first := lineOf(loc[0])
		last := first
		if loc[1] > loc[0] {
			last = lineOf(loc[1] - 1)
		}
		// Add the lines from first to last not added yet.
		l := first
		if n := len(fm.lines); n > 0 && fm.lines[n-1].n >= l.n {
			var ok bool
			if l, ok = nextLine(data, fm.lines[n-1]); !ok {
				l.n = last.n + 1
			}
		}
		for l.n <= last.n {
			fm.lines = append(fm.lines, l)
			var ok bool
			if l, ok = nextLine(data, l); !ok {
				break
			}
		}
		if loc[1] > loc[0] {
			fm.parts = append(fm.parts, matchPart{first.n, loc[0], loc[1]})
		}
	}
	return fm
}

// text returns the text of line l without a carriage return before its
// line break.
func (l grepLine) text(data []byte) []byte {
	return bytes.TrimSuffix(data[l.start:l.end], []byte{'\r'})
}

// contentLines renders the matches of one file as ripgrep does: matched
// lines as "name:N:text", context lines as "name-N-text", and "--" between
// groups of lines that are not adjacent. name is left out when empty.
func (s *grepSearch) contentLines(name string, data []byte, fm *fileMatches) []string {
	prefix := func(line int, sep byte) string {
		var b strings.Builder
		if name != "" {
			b.WriteString(name)
			b.WriteByte(sep)
		}
		if s.lineNumbers {
			b.WriteString(strconv.Itoa(line + 1))
			b.WriteByte(sep)
		}
		return b.String()
	}
	var out []string
	if s.onlyMatching {
		for _, p := range fm.parts {
			out = append(out, prefix(p.line, ':')+clipColumns(string(data[p.start:p.end])))
		}
		return out
	}
	printed := -1 // number of the last line printed
	next := 0     // index in fm.lines of the next matched line to print
	var group []grepLine
	for i, l := range fm.lines {
		if l.n <= printed {
			continue
		}
		// The lines before l, back to the context or the last line printed.
		group = append(group[:0], l)
		for b := l; len(group) <= s.before; {
			var ok bool
			if b, ok = prevLine(data, b); !ok || b.n <= printed {
				break
			}
			group = append(group, b)
		}
		slices.Reverse(group)
		// The lines after l: its context, extended by that of the matched
		// lines in it.
		for a, to, j := l, l.n+s.after, i+1; ; {
			for ; j < len(fm.lines) && fm.lines[j].n <= to; j++ {
				to = max(to, fm.lines[j].n+s.after)
			}
			var ok bool
			if a, ok = nextLine(data, a); !ok || a.n > to {
				break
			}
			group = append(group, a)
		}
		if printed >= 0 && group[0].n > printed+1 && (s.before > 0 || s.after > 0) {
			out = append(out, "--")
		}
		for _, g := range group {
			sep := byte('-')
			for next < len(fm.lines) && fm.lines[next].n < g.n {
				next++
			}
			if next < len(fm.lines) && fm.lines[next].n == g.n {
				sep = ':'
			}
			out = append(out, prefix(g.n, sep)+clipColumns(string(g.text(data))))
		}
		printed = group[len(group)-1].n
	}
	return out
}

// clipColumns makes text valid UTF-8 and cuts it at grepMaxColumns
// characters.
func clipColumns(text string) string {
	text = toValidUTF8(text)
	if len(text) <= grepMaxColumns || utf8.RuneCountInString(text) <= grepMaxColumns {
		return text
	}
	n := 0
	for i := range text {
		if n == grepMaxColumns {
			return text[:i] + fmt.Sprintf(" [... %d more characters]", utf8.RuneCountInString(text[i:]))
		}
		n++
	}
	return text
}
