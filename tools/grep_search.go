package tools

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	re, err := regexp.Compile(tree.String())
	if err != nil {
		return grepMatcher{}, err
	}
	m := grepMatcher{re: re, multiline: multiline}
	// Lines are matched one by one when there is a literal; \A and \z
	// would then match at every line, so such patterns go without.
	if lit, fold := requiredLiteral(tree); lit != "" && !hasTextAnchor(tree) {
		m.lit, m.fold = []byte(lit), fold
	}
	return m, nil
}

// requiredLiteral returns a string that every match of re contains, the
// longest it finds, or "". A case-folded literal is returned in lower case
// with fold set, and only when plain ASCII lower-casing finds all its
// matches: Unicode folding also maps k and s to the Kelvin sign and the
// long s, so runs with those letters are left out.
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
			if lit, fold := requiredLiteral(sub); len(lit) > len(best) {
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

// index finds the required literal in data at or after from; -1 when it
// is not there. lower is data lower-cased, for folded literals.
func (m *grepMatcher) index(data, lower []byte, from int) int {
	hay := data
	if m.fold {
		hay = lower
	}
	i := bytes.Index(hay[from:], m.lit)
	if i < 0 {
		return -1
	}
	return from + i
}

// lowerASCII returns data with ASCII letters lower-cased, in buf if it is
// large enough.
func lowerASCII(data, buf []byte) []byte {
	buf = append(buf[:0], data...)
	for i, c := range buf {
		if 'A' <= c && c <= 'Z' {
			buf[i] = c + 'a' - 'A'
		}
	}
	return buf
}

var lowerPool = sync.Pool{New: func() any { return new([]byte) }}

// matches returns the matches of the pattern in data, as FindAllIndex
// would, without those on the empty "line" after a final line break. With
// first set it stops at the first. Lines without the required literal are
// skipped; in multiline mode, only whole files are.
func (m *grepMatcher) matches(data []byte, first bool) [][]int {
	n := -1
	if first {
		n = 1
	}
	var locs [][]int
	if m.lit == nil {
		locs = m.re.FindAllIndex(data, n)
	} else {
		var lower []byte
		if m.fold {
			bp := lowerPool.Get().(*[]byte)
			lower = lowerASCII(data, *bp)
			defer func() { *bp = lower; lowerPool.Put(bp) }()
		}
		if m.multiline {
			if m.index(data, lower, 0) < 0 {
				return nil
			}
			locs = m.re.FindAllIndex(data, n)
		} else {
			for pos := 0; pos < len(data); {
				i := m.index(data, lower, pos)
				if i < 0 {
					break
				}
				start := bytes.LastIndexByte(data[:i], '\n') + 1
				end := len(data)
				if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
					end = i + j
				}
				for _, loc := range m.re.FindAllIndex(data[start:end], -1) {
					locs = append(locs, []int{start + loc[0], start + loc[1]})
					if first {
						return locs
					}
				}
				pos = end + 1
			}
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

// fileMatches finds the matches of one file: the matched line numbers
// (0-based, ascending, unique) and, for only-matching output, each
// non-empty match with the line it starts on.
type fileMatches struct {
	grepLineStarts []int // start offset of each line
	lines          []int
	parts          []matchPart
}

type matchPart struct {
	line       int
	start, end int
}

func (s *grepSearch) find(data []byte) *fileMatches {
	locs := s.m.matches(data, false)
	if len(locs) == 0 {
		return nil
	}
	fm := &fileMatches{grepLineStarts: grepLineStarts(data)}
	lineOf := func(pos int) int {
		return sort.SearchInts(fm.grepLineStarts, pos+1) - 1
	}
	last := -1
	for _, loc := range locs {
		first := lineOf(loc[0])
		end := first
		if loc[1] > loc[0] {
			end = lineOf(loc[1] - 1)
		}
		for l := max(first, last+1); l <= end; l++ {
			fm.lines = append(fm.lines, l)
		}
		last = max(last, end)
		if loc[1] > loc[0] {
			fm.parts = append(fm.parts, matchPart{first, loc[0], loc[1]})
		}
	}
	return fm
}

func grepLineStarts(data []byte) []int {
	starts := make([]int, 1, bytes.Count(data, []byte{'\n'})+1)
	for i, c := range data {
		if c == '\n' && i+1 < len(data) {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// lineText returns line l of data without its line break.
func (fm *fileMatches) lineText(data []byte, l int) []byte {
	start := fm.grepLineStarts[l]
	end := len(data)
	if l+1 < len(fm.grepLineStarts) {
		end = fm.grepLineStarts[l+1]
	}
	line := data[start:end]
	line = bytes.TrimSuffix(line, []byte{'\n'})
	return bytes.TrimSuffix(line, []byte{'\r'})
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
	nLines := len(fm.grepLineStarts)
	matched := make(map[int]bool, len(fm.lines))
	for _, l := range fm.lines {
		matched[l] = true
	}
	printed := -1 // last line printed
	for _, l := range fm.lines {
		from, to := max(0, l-s.before), min(nLines-1, l+s.after)
		from = max(from, printed+1)
		if from > to {
			continue
		}
		if printed >= 0 && from > printed+1 && (s.before > 0 || s.after > 0) {
			out = append(out, "--")
		}
		for k := from; k <= to; k++ {
			sep := byte('-')
			if matched[k] {
				sep = ':'
			}
			out = append(out, prefix(k, sep)+clipColumns(string(fm.lineText(data, k))))
		}
		printed = to
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
