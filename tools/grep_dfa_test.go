package tools

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestGrepMatcherAgreesWithRegexp checks the fast paths of the matcher (the
// literal scan, pure literals and the automaton) against the regexp run
// over the whole text, on random patterns and texts.
func TestGrepMatcherAgreesWithRegexp(t *testing.T) {
	// GREP_MATCHER_PATTERNS=n tries n patterns from a seed that changes,
	// for a longer search than the usual run's.
	n, seed := 80, uint64(1)
	if v, err := strconv.Atoi(os.Getenv("GREP_MATCHER_PATTERNS")); err == nil && v > 0 {
		n, seed = v, uint64(time.Now().UnixNano())
		t.Logf("seed %d", seed)
	}
	// The long-line threshold at 1 sends every line that holds the
	// literal to the automaton.
	for _, long := range []int{grepLongLine, 1} {
		t.Run(fmt.Sprintf("long_line_%d", long), func(t *testing.T) {
			defer func(n int) { grepLongLine = n }(grepLongLine)
			grepLongLine = long
			r := rand.New(rand.NewPCG(seed, 2))
			atoms := []string{"a", "b", "ab", "Ab", "K", "s", "é", "1", " ", "_", ".", `\w`, `\W`, `\d`, `\s`,
				`[a-c]`, `[^a]`, `[^\n]`, `\b`, `\B`, "^", "$", `\.`, "x", "[ÉéK]", `\p{Greek}`, "(?i:b)", "(?i:é)"}
			var pattern func(depth int) string
			pattern = func(depth int) string {
				var b strings.Builder
				for range 1 + r.IntN(4) {
					switch x := r.IntN(10); {
					case x < 6 || depth > 2:
						b.WriteString(atoms[r.IntN(len(atoms))])
					case x == 6:
						b.WriteString("(" + pattern(depth+1) + "|" + pattern(depth+1) + ")")
					default:
						b.WriteString("(?:" + pattern(depth+1) + ")")
					}
					if r.IntN(3) == 0 {
						b.WriteString([]string{"*", "+", "?", "{2}", "{1,3}", "*?"}[r.IntN(6)])
					}
				}
				return b.String()
			}
			alphabet := []string{"a", "b", "A", "B", "K", "k", "\u212a", "s", "ſ", "é", "É", "1", " ", "_", ".", "x", "\n", "\n", "\r", "\t", "\xff", "\xc3", "ab", "aB"}
			text := func() string {
				var b strings.Builder
				for range r.IntN([]int{40, 400}[r.IntN(2)]) {
					b.WriteString(alphabet[r.IntN(len(alphabet))])
				}
				return b.String()
			}
			paths := map[string]int{}
			for range n {
				p := pattern(0)
				m, err := newGrepMatcher(p, r.IntN(3) == 0, false)
				if err != nil {
					continue
				}
				switch {
				case m.pure:
					paths["pure"]++
				case m.lit != nil:
					paths["literal"]++
				case m.dfa != nil:
					paths["dfa"]++
				}
				for range 60 {
					data := []byte(text())
					want := m.re.FindAllIndex(data, -1)
					if len(want) > 0 && phantom(data, want[len(want)-1][0]) {
						want = want[:len(want)-1]
					}
					if got := m.matches(data, false); !sameLocs(got, want) {
						t.Fatalf("pattern %q (literal %q, fold %v) on %q: found %v, the regexp finds %v", p, m.lit, m.fold, data, got, want)
					}
					if got := m.matches(data, true); !sameLocs(got, want[:min(1, len(want))]) {
						t.Fatalf("pattern %q (literal %q, fold %v) on %q: first match %v, the regexp finds %v", p, m.lit, m.fold, data, got, want)
					}
				}
			}
			for _, path := range []string{"pure", "literal", "dfa"} {
				if paths[path] < n/30 {
					t.Errorf("only %d patterns took the %s path", paths[path], path)
				}
			}
		})
	}
}

// sameLocs compares match offsets; nil and empty are the same.
func sameLocs(a, b [][]int) bool {
	return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
}

// TestGrepDFAGivesUp checks that a pattern whose automaton has too many
// states still finds its matches, through the regexp.
func TestGrepDFAGivesUp(t *testing.T) {
	m, err := newGrepMatcher(`[ab]*[ac][ab]{14}[cd]`, false, false)
	if err != nil || m.dfa == nil {
		t.Fatalf("no automaton: %v", err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	var b strings.Builder
	for range 200 {
		for range 200 {
			b.WriteByte("ab"[r.IntN(2)])
		}
		b.WriteString("c\n")
	}
	data := []byte(b.String())
	want := m.re.FindAllIndex(data, -1)
	if got := m.matches(data, false); !cmp.Equal(got, want) {
		t.Errorf("found %d matches, the regexp %d", len(got), len(want))
	}
	if !m.dfa.failed.Load() {
		t.Error("the automaton was not given up")
	}
}

// TestGrepContentLinesAgree checks the rendering of content mode, which
// finds line numbers and context lines by searching from match to match,
// against a plain rendering from a table of every line's start.
func TestGrepContentLinesAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	patterns := []string{"a", "ab", "^", "$", "b*", `a\nb`, "(?s)a.b", "x", `\w+`, "(?i)B"}
	// reference renders as Grep did before line numbers were counted
	// incrementally.
	reference := func(s *grepSearch, data []byte) []string {
		locs := s.m.matches(data, false)
		if len(locs) == 0 {
			return nil
		}
		starts := []int{0}
		for i, c := range data {
			if c == '\n' && i+1 < len(data) {
				starts = append(starts, i+1)
			}
		}
		lineOf := func(pos int) int {
			n := 0
			for n+1 < len(starts) && starts[n+1] <= pos {
				n++
			}
			return n
		}
		text := func(l int) string {
			end := len(data)
			if l+1 < len(starts) {
				end = starts[l+1]
			}
			return strings.TrimSuffix(strings.TrimSuffix(string(data[starts[l]:end]), "\n"), "\r")
		}
		matched := map[int]bool{}
		var lines []int
		var out []string
		last := -1
		for _, loc := range locs {
			first, end := lineOf(loc[0]), lineOf(loc[0])
			if loc[1] > loc[0] {
				end = lineOf(loc[1] - 1)
			}
			for l := max(first, last+1); l <= end; l++ {
				lines = append(lines, l)
				matched[l] = true
			}
			last = max(last, end)
			if loc[1] > loc[0] && s.onlyMatching {
				out = append(out, fmt.Sprintf("%d:%s", first+1, clipColumns(data[loc[0]:loc[1]])))
			}
		}
		if s.onlyMatching {
			return out
		}
		printed := -1
		for _, l := range lines {
			from, to := max(0, l-s.before, printed+1), min(len(starts)-1, l+s.after)
			if from > to {
				continue
			}
			if printed >= 0 && from > printed+1 && (s.before > 0 || s.after > 0) {
				out = append(out, "--")
			}
			for k := from; k <= to; k++ {
				sep := "-"
				if matched[k] {
					sep = ":"
				}
				out = append(out, fmt.Sprintf("%d%s%s", k+1, sep, clipColumns([]byte(text(k)))))
			}
			printed = to
		}
		return out
	}
	// Every other text goes to the automaton as a long line.
	defer func(n int) { grepLongLine = n }(grepLongLine)
	for i := range 3000 {
		grepLongLine = []int{64 << 10, 1}[i%2]
		multiline := r.IntN(3) == 0
		p := patterns[r.IntN(len(patterns))]
		m, err := newGrepMatcher(p, false, multiline)
		if err != nil {
			continue
		}
		s := &grepSearch{m: m, before: r.IntN(4), after: r.IntN(4), lineNumbers: true, onlyMatching: r.IntN(5) == 0}
		var b strings.Builder
		for range r.IntN(30) {
			b.WriteString([]string{"a", "b", "x", "\n", "\n", "\r\n", " "}[r.IntN(7)])
		}
		data := []byte(b.String())
		var got []string
		if fm, _ := s.find(context.Background(), data); fm != nil {
			got = s.contentLines("", data, fm)
		}
		if want := reference(s, data); !slices.Equal(got, want) {
			t.Fatalf("%q (multiline %v, -B %d -A %d, -o %v) on %q:\n got %q\nwant %q", p, multiline, s.before, s.after, s.onlyMatching, data, got, want)
		}
	}
}
