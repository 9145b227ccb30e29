package tools

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
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
	// to look for, or when a line that holds the literal is long (see
	// grepLongLine); nil when it cannot be used.
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
	}
	if !m.pure && !multiline && !hasTextAnchor(tree) {
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
// first set it stops at the first.
func (m *grepMatcher) matches(data []byte, first bool) [][]int {
	locs, _ := m.search(context.Background(), data, first, 0)
	return locs
}

// search finds the matches of the pattern in data, as matches does, with
// two bounds on the work. perLine > 0 keeps at most that many matches of a
// line (the first ones) and moves on to the next line once it has them;
// it is ignored in multiline mode, where matches may span lines. A match
// is then given as {start, end, line start, line end}, the line's bounds
// being those of lineFrom, which saves its caller finding them. And ctx
// is checked every grepCancelEvery bytes of progress: once it is done,
// search returns ctx.Err() with the matches found so far. A single regexp
// call on one line (or, in multiline mode or without a prefilter, on the
// whole file) is not interrupted.
//
// Lines without the required literal are skipped (in multiline mode, only
// whole files are); without a literal, the automaton, when there is one,
// picks the lines for the regexp.
func (m *grepMatcher) search(ctx context.Context, data []byte, first bool, perLine int) ([][]int, error) {
	if first || m.multiline {
		perLine = 0
	}
	cc := cancelCheck{ctx: ctx}
	var locs [][]int
	switch {
	case m.lit == nil && m.dfa != nil:
		return m.dfa.search(&cc, m.re, data, first, perLine)
	case m.lit == nil:
		locs = m.re.FindAllIndex(data, grepFindN(first))
	case m.pure:
		// The literal is not empty, so none of its occurrences is on
		// the "line" after a final line break.
		s := m.scanner(data)
		// The line of the last match, and its matches so far.
		lineStart, lineEnd, onLine := 0, -1, 0
		for pos := 0; pos < len(data); {
			if cc.stop(pos) {
				return locs, ctx.Err()
			}
			i := s.index(pos)
			if i < 0 {
				break
			}
			pos = i + len(m.lit)
			if first {
				locs = append(locs, []int{i, pos})
				break
			}
			if perLine == 0 {
				locs = append(locs, []int{i, pos})
				continue
			}
			if i > lineEnd {
				from := lineEnd + 1 // the start of the line after the last match's
				lineStart = from + bytes.LastIndexByte(data[from:i], '\n') + 1
				lineEnd, onLine = lineEndAt(data, i), 0
			}
			locs = append(locs, []int{i, pos, lineStart, lineEnd})
			if onLine++; onLine == perLine {
				pos = max(pos, lineEnd+1)
			}
		}
		return locs, nil
	case m.multiline:
		s := m.scanner(data)
		if s.index(0) < 0 {
			return nil, nil
		}
		locs = m.re.FindAllIndex(data, grepFindN(first))
	default:
		s := m.scanner(data)
		for pos := 0; pos < len(data); {
			if cc.stop(pos) {
				return locs, ctx.Err()
			}
			i := s.index(pos)
			if i < 0 {
				break
			}
			start := bytes.LastIndexByte(data[:i], '\n') + 1
			end := lineEndAt(data, i)
			if m.dfa != nil && end-start >= grepLongLine {
				// The automaton decides, and can be interrupted, where
				// the regexp would run over the whole line at once.
				lc := cancelCheck{ctx: ctx}
				found, err := m.dfa.search(&lc, m.re, data[start:end], first, perLine)
				for _, loc := range found {
					for k := range loc {
						loc[k] += start
					}
				}
				if locs = append(locs, found...); err != nil || first && len(locs) > 0 {
					return locs, err
				}
			} else if locs = appendLineMatches(locs, m.re, data, start, end, first, perLine); first && len(locs) > 0 {
				return locs, nil
			}
			pos = end + 1
		}
	}
	if len(locs) > 0 && phantom(data, locs[len(locs)-1][0]) {
		locs = locs[:len(locs)-1]
	}
	return locs, nil
}

// grepLongLine is the length from which a line that holds the required
// literal is left to the automaton rather than to the regexp: Go's regexp
// scans a long text at some 30 MB/s, in one call that cannot be stopped.
// A variable so that tests can lower it.
var grepLongLine = 64 << 10

// grepFindN is the n argument of FindAllIndex for a search that wants the
// first match only, or all.
func grepFindN(first bool) int {
	if first {
		return 1
	}
	return -1
}

// lineEndAt returns the offset of the line break that ends the line
// holding offset i, or len(data) for the last line.
func lineEndAt(data []byte, i int) int {
	if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(data)
}

// appendLineMatches appends to locs the matches of re on the line
// data[start:end], as offsets in data: the first only when first is set,
// at most perLine of them, with the line's bounds, when perLine > 0.
func appendLineMatches(locs [][]int, re *regexp.Regexp, data []byte, start, end int, first bool, perLine int) [][]int {
	line := data[start:end]
	if first {
		if loc := re.FindIndex(line); loc != nil {
			locs = append(locs, []int{start + loc[0], start + loc[1]})
		}
		return locs
	}
	if perLine == 1 {
		if loc := re.FindIndex(line); loc != nil {
			locs = append(locs, []int{start + loc[0], start + loc[1], start, end})
		}
		return locs
	}
	if perLine == 0 {
		for _, loc := range re.FindAllIndex(line, -1) {
			locs = append(locs, []int{start + loc[0], start + loc[1]})
		}
		return locs
	}
	for _, loc := range re.FindAllIndex(line, perLine) {
		locs = append(locs, []int{start + loc[0], start + loc[1], start, end})
	}
	return locs
}

// grepCancelEvery is how many bytes a search scans between two looks at
// its context.
const grepCancelEvery = 1 << 20

// cancelCheck looks at a context now and then during a scan.
type cancelCheck struct {
	ctx  context.Context
	next int // the offset at which to look next
}

// stop reports whether the scan, now at offset pos, must stop because the
// context is done. It looks at the context once per grepCancelEvery bytes
// of progress, and always on the first call.
func (c *cancelCheck) stop(pos int) bool {
	if pos < c.next {
		return false
	}
	c.next = pos + grepCancelEvery
	return c.ctx.Err() != nil
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

// hasMatch reports whether data holds a match on a real line. It returns
// ctx.Err() when ctx is done before it knows.
func (s *grepSearch) hasMatch(ctx context.Context, data []byte) (bool, error) {
	locs, err := s.m.search(ctx, data, true, 0)
	return len(locs) > 0, err
}

// phantom reports whether a match at pos lies on the empty "line" after a
// final line break (or in an empty file), which is no line at all.
func phantom(data []byte, pos int) bool {
	return pos >= len(data) && (len(data) == 0 || data[len(data)-1] == '\n')
}

// grepMaxLineMatches is the most matches of one line that only-matching
// output shows; a line with more ends with a line that says so.
const grepMaxLineMatches = 1000

// fileMatches holds the matches of one file: the matched lines (ascending,
// unique) and, for only-matching output, each non-empty match with the
// line it starts on, at most grepMaxLineMatches per line.
type fileMatches struct {
	lines  []grepLine
	parts  []matchPart
	capped []int // lines with more matches than parts holds, ascending
	// lineWork is how many bytes finding the line numbers examined.
	lineWork int
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

// lineCursor finds the lines that hold a series of offsets that never
// decrease. Every byte of the text is examined a bounded number of times
// over the whole series, however many offsets fall on one line: an offset
// on the current line costs nothing, and one past it is reached by
// counting line breaks from the end of the current line only.
type lineCursor struct {
	data []byte
	cur  grepLine // the line of the last offset; cur.end < 0 before the first
	work int      // bytes examined so far
}

func newLineCursor(data []byte) *lineCursor {
	return &lineCursor{data: data, cur: grepLine{0, 0, -1}}
}

// at returns the line holding offset pos, which must not be before the
// offset of the previous call. An offset at a line break is on the line
// that the break ends; len(data) is on the last line.
func (c *lineCursor) at(pos int) grepLine {
	if c.cur.end >= 0 && pos <= c.cur.end {
		return c.cur
	}
	from, n := 0, 0 // where counting starts, and the number of its line
	if c.cur.end >= 0 {
		from, n = c.cur.end+1, c.cur.n+1
	}
	gap := c.data[from:pos]
	start := from
	if nl := bytes.Count(gap, []byte{'\n'}); nl > 0 {
		n += nl
		start = from + bytes.LastIndexByte(gap, '\n') + 1
		c.work += len(gap)
	}
	c.cur = lineFrom(c.data, n, start)
	c.work += len(gap) + c.cur.end - start
	return c.cur
}

// atLine returns the line that starts at offset start and ends at end,
// which must not be before the line of the previous call, as at does but
// without looking for the line's bounds.
func (c *lineCursor) atLine(start, end int) grepLine {
	if c.cur.end >= 0 && start <= c.cur.end {
		return c.cur
	}
	from, n := 0, 0
	if c.cur.end >= 0 {
		from, n = c.cur.end+1, c.cur.n+1
	}
	n += bytes.Count(c.data[from:start], []byte{'\n'})
	c.work += start - from
	c.cur = grepLine{n, start, end}
	return c.cur
}

// find finds the matches of one file: in only-matching output the first
// grepMaxLineMatches of each line, else the lines that match. It returns
// nil when there are none, and ctx.Err() when ctx is done first. Line
// numbers are counted from one match to the next (see lineCursor), so
// that a file is not scanned byte by byte for its lines, and a long line
// is scanned once however many matches it holds.
func (s *grepSearch) find(ctx context.Context, data []byte) (*fileMatches, error) {
	perLine := 1 // a line matches or not: its first match is enough
	if s.onlyMatching {
		perLine = grepMaxLineMatches + 1 // one more, to know there are more
	}
	locs, err := s.m.search(ctx, data, false, perLine)
	if err != nil {
		return nil, err
	}
	if len(locs) == 0 {
		return nil, nil
	}
	fm := &fileMatches{}
	lines := newLineCursor(data)
	matchLine, onLine := -1, 0 // the line of the last match, and its matches
	for _, loc := range locs {
		var first grepLine
		if len(loc) == 4 {
			first = lines.atLine(loc[2], loc[3])
		} else {
			first = lines.at(loc[0])
		}
		last := first
		if loc[1] > loc[0] {
			last = lines.at(loc[1] - 1)
		}
		// Add the lines from first to last not added yet.
		l, add := first, true
		if n := len(fm.lines); n > 0 && fm.lines[n-1].n >= first.n {
			prev := fm.lines[n-1]
			if add = prev.n < last.n; add {
				l, add = nextLine(data, prev)
			}
		}
		for add {
			fm.lines = append(fm.lines, l)
			if l.n >= last.n {
				break
			}
			l, add = nextLine(data, l)
		}
		if first.n != matchLine {
			matchLine, onLine = first.n, 0
		}
		if onLine++; onLine > grepMaxLineMatches {
			if k := len(fm.capped); k == 0 || fm.capped[k-1] != first.n {
				fm.capped = append(fm.capped, first.n)
			}
			continue
		}
		if loc[1] > loc[0] {
			fm.parts = append(fm.parts, matchPart{first.n, loc[0], loc[1]})
		}
	}
	fm.lineWork = lines.work
	return fm, nil
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
		capped := fm.capped
		// more notes the capped lines before line n.
		more := func(n int) {
			for ; len(capped) > 0 && capped[0] < n; capped = capped[1:] {
				out = append(out, prefix(capped[0], ':')+fmt.Sprintf("[... more matches on this line: only the first %d are shown]", grepMaxLineMatches))
			}
		}
		for _, p := range fm.parts {
			more(p.line)
			out = append(out, prefix(p.line, ':')+clipColumns(data[p.start:p.end]))
		}
		more(math.MaxInt)
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
			out = append(out, prefix(g.n, sep)+clipColumns(g.text(data)))
		}
		printed = group[len(group)-1].n
	}
	return out
}

// clipColumns returns text as valid UTF-8 (an invalid byte becoming
// U+FFFD), cut after grepMaxColumns characters with a note of how many
// more there were. Only the part kept is copied, so that a long line costs
// one pass to count its characters and no more memory than what is shown.
func clipColumns(text []byte) string {
	i, n := 0, 0
	for ; i < len(text) && n < grepMaxColumns; n++ {
		if text[i] < utf8.RuneSelf {
			i++
			continue
		}
		_, w := utf8.DecodeRune(text[i:])
		i += w
	}
	kept := toValidUTF8(string(text[:i]))
	if i == len(text) {
		return kept
	}
	return kept + fmt.Sprintf(" [... %d more characters]", grepRuneCount(text[i:]))
}

// grepRuneCount is utf8.RuneCount, eight bytes at a time over ASCII, which
// most of a long line is.
func grepRuneCount(b []byte) int {
	const high = 0x8080808080808080
	n, i := 0, 0
	for i < len(b) {
		for ; i+64 <= len(b); i += 64 {
			k := b[i : i+64 : i+64]
			le := binary.LittleEndian
			if (le.Uint64(k)|le.Uint64(k[8:])|le.Uint64(k[16:])|le.Uint64(k[24:])|
				le.Uint64(k[32:])|le.Uint64(k[40:])|le.Uint64(k[48:])|le.Uint64(k[56:]))&high != 0 {
				break
			}
			n += 64
		}
		if i == len(b) {
			break
		}
		w := 1
		if b[i] >= utf8.RuneSelf {
			_, w = utf8.DecodeRune(b[i:])
		}
		i += w
		n++
	}
	return n
}
