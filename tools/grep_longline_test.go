package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// longLine returns a single line of about size bytes (no line break) in
// which needle occurs every gap bytes.
func longLine(size, gap int, needle string) []byte {
	var b strings.Builder
	b.Grow(size + gap)
	filler := strings.Repeat("lorem ipsum ", gap/12+1)[:gap-len(needle)]
	for b.Len() < size {
		b.WriteString(filler)
		b.WriteString(needle)
	}
	return []byte(b.String())
}

// TestGrepLineCursorLinear checks that finding the lines of k offsets on
// one 4 MB line examines each byte a bounded number of times, where
// counting from the start of the line for every offset, as Grep did,
// examines about k × 2 MB.
func TestGrepLineCursorLinear(t *testing.T) {
	data := longLine(4<<20, 100, "needle")
	data = append(data, "\nsecond\n\nfourth"...)
	c := newLineCursor(data)
	k := 0
	for pos := 0; pos < len(data)-20; pos += 97 {
		if l := c.at(pos); l.n != 0 || l.start != 0 || l.end != len(data)-15 {
			t.Fatalf("at(%d) = %+v, want line 0 ending at %d", pos, l, len(data)-15)
		}
		k++
	}
	if l := c.at(len(data) - 1); l.n != 3 || data[l.start] != 'f' || l.end != len(data) {
		t.Errorf("last line = %+v", l)
	}
	if limit := 3 * len(data); c.work > limit {
		t.Errorf("%d offsets on a %d-byte line: %d bytes examined, want at most %d", k, len(data), c.work, limit)
	}
}

// TestGrepLineCursorAgrees checks lineCursor against a table of every
// line's start, on random texts and offsets.
func TestGrepLineCursorAgrees(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 2000 {
		var b strings.Builder
		for range r.IntN(40) {
			b.WriteString([]string{"a", "bc", "\n", "\n\n", "\r\n", "xyz"}[r.IntN(6)])
		}
		data := []byte(b.String())
		starts := []int{0}
		for i, ch := range data {
			if ch == '\n' && i+1 < len(data) {
				starts = append(starts, i+1)
			}
		}
		c := newLineCursor(data)
		for pos := 0; pos <= len(data); pos += r.IntN(4) {
			n := 0
			for n+1 < len(starts) && starts[n+1] <= pos {
				n++
			}
			end := len(data)
			if n+1 < len(starts) {
				end = starts[n+1] - 1
			} else if end > 0 && data[end-1] == '\n' {
				end-- // the final line break ends the last line
			}
			if pos == len(data) && len(data) > 0 && data[len(data)-1] == '\n' {
				break // the phantom line after a final break: never asked for
			}
			want := grepLine{n, starts[n], end}
			if got := c.at(pos); got != want {
				t.Fatalf("%q at %d: got %+v, want %+v", data, pos, got, want)
			}
		}
	}
}

// TestGrepFindLongLine checks the searches of a file of one 4 MB line with
// some 40 000 matches: a matched line is found by its first match only, in
// only-matching output a line shows its first grepMaxLineMatches matches
// and says that there are more, and the line accounting stays linear in
// every mode (multiline mode keeps every match).
func TestGrepFindLongLine(t *testing.T) {
	data := longLine(4<<20, 100, "needle")
	data = append(data, "\nneedle again\n"...)
	for _, tc := range []struct {
		name      string
		pattern   string
		only      bool
		multiline bool
		lines     int
		parts     int
		capped    []int
	}{
		{"lines", "needle", false, false, 2, 2, nil},
		{"lines_regex", `ne+dle`, false, false, 2, 2, nil},
		{"lines_dfa", `n[e]{2}dl?e`, false, false, 2, 2, nil},
		{"only_matching", "needle", true, false, 2, grepMaxLineMatches + 1, []int{0}},
		{"only_matching_regex", `ne+dle`, true, false, 2, grepMaxLineMatches + 1, []int{0}},
		{"only_matching_dfa", `n[e]{2}dl?e`, true, false, 2, grepMaxLineMatches + 1, []int{0}},
		{"multiline", `needle\s?`, true, true, 2, grepMaxLineMatches + 1, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := newGrepMatcher(tc.pattern, false, tc.multiline)
			if err != nil {
				t.Fatal(err)
			}
			s := &grepSearch{m: m, onlyMatching: tc.only, lineNumbers: true}
			fm, err := s.find(context.Background(), data)
			if err != nil || fm == nil {
				t.Fatalf("find = %v, %v", fm, err)
			}
			if len(fm.lines) != tc.lines || len(fm.parts) != tc.parts || !cmp.Equal(fm.capped, tc.capped) {
				t.Errorf("%d lines, %d parts, capped %v; want %d, %d, %v", len(fm.lines), len(fm.parts), fm.capped, tc.lines, tc.parts, tc.capped)
			}
			if limit := 3 * len(data); fm.lineWork > limit {
				t.Errorf("line accounting examined %d bytes of %d, want at most %d", fm.lineWork, len(data), limit)
			}
			if !tc.only {
				return
			}
			out := s.contentLines("", data, fm)
			want := []string{"1:needle", "1:[... more matches on this line: only the first 1000 are shown]", "2:needle"}
			if tc.multiline {
				want = []string{"1:needle", "1:[... more matches on this line: only the first 1000 are shown]", "2:needle "}
			}
			if len(out) != grepMaxLineMatches+2 || out[0] != want[0] || out[len(out)-2] != want[1] || out[len(out)-1] != want[2] {
				t.Errorf("output: %d lines, first %q, last two %q; want %d, %q", len(out), out[0], out[len(out)-2:], grepMaxLineMatches+2, want)
			}
		})
	}
}

// TestGrepLongLineOutput checks that every output mode prints a bounded
// amount for a file of one 1 MB line: matched and context lines are cut
// at grepMaxColumns characters with a note of the rest.
func TestGrepLongLineOutput(t *testing.T) {
	dir := ftTempDir(t)
	long := string(longLine(1<<20, 100, "needle"))
	ftWriteFile(t, dir, "one.txt", "before "+long+"\nshort needle\n"+long+"\nafter\n")
	ftWriteFile(t, dir, "é.txt", strings.Repeat("é", 2000)+"needle\n")
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  []string // lines of the result, a long line by its start and note
	}{
		{"content", map[string]any{"pattern": "needle", "output_mode": "content", "path": "one.txt"},
			[]string{"1:before lorem ", "2:short needle", "3:lorem ipsum "}},
		{"content_context", map[string]any{"pattern": "short", "output_mode": "content", "-C": 1, "path": "one.txt"},
			[]string{"1-before lorem ", "2:short needle", "3-lorem ipsum "}},
		{"content_multibyte", map[string]any{"pattern": "needle", "output_mode": "content", "path": "é.txt"},
			[]string{"1:" + strings.Repeat("é", 500) + " [... 1506 more characters]"}},
		{"count", map[string]any{"pattern": "needle", "output_mode": "count"},
			[]string{"one.txt:3", "é.txt:1", "", "Total: 4 matching lines in 2 files."}},
		{"files", map[string]any{"pattern": "needle"},
			[]string{"Found 2 files", "one.txt", "é.txt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ftRun(t, Grep(), ftEnv(dir), tc.input)
			text := ftText(r)
			if r.IsError || len(text) > 4000 {
				t.Fatalf("result of %d bytes (error %v): %.300q", len(text), r.IsError, text)
			}
			got := strings.Split(text, "\n")
			if tc.name == "files" {
				got[1], got[2] = min(got[1], got[2]), max(got[1], got[2]) // by mtime: either order
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want lines starting %q", got, tc.want)
			}
			for i, line := range got {
				if !strings.HasPrefix(line, tc.want[i]) || utf8.RuneCountInString(line) > grepMaxColumns+60 {
					t.Errorf("line %d = %.80q…, want it to start %q and be cut", i+1, line, tc.want[i])
				}
				if len(line) > 600 && !strings.HasSuffix(line, " more characters]") {
					t.Errorf("line %d is cut without a note: …%q", i+1, line[len(line)-40:])
				}
			}
		})
	}
}

// TestGrepClipColumns checks the cutting of printed lines, invalid UTF-8
// included.
func TestGrepClipColumns(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("a", 500), strings.Repeat("a", 500)},
		{strings.Repeat("a", 501), strings.Repeat("a", 500) + " [... 1 more characters]"},
		{strings.Repeat("é", 600), strings.Repeat("é", 500) + " [... 100 more characters]"},
		{"\xff" + strings.Repeat("b", 499) + "\xfe\xfd", "\uFFFD" + strings.Repeat("b", 499) + " [... 2 more characters]"},
		{"ok\xffok", "ok\uFFFDok"},
	} {
		if got := clipColumns([]byte(tc.in)); got != tc.want {
			t.Errorf("clipColumns(%.20q…) = %.40q…, want %.40q…", tc.in, got, tc.want)
		}
	}
	// A 16 MB line costs what is kept, not a copy of the line.
	line := longLine(16<<20, 100, "needle")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := clipColumns(line)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 || len(out) > 600 {
		t.Errorf("clipping a 16 MB line allocated %d bytes and returned %d, want at most 64 KiB and 600", n, len(out))
	}
}

// cancelLaterCtx is a context that reports itself cancelled from the
// after+1st call of Err on: a search that looks at it while scanning is
// then cancelled in the middle, whatever the machine's speed.
type cancelLaterCtx struct {
	context.Context
	after int64
	calls atomic.Int64
}

func (c *cancelLaterCtx) Err() error {
	if c.calls.Add(1) > c.after {
		return context.Canceled
	}
	return nil
}

// grepRunCtx runs Grep with ctx as the loop would, returning Run's error.
func grepRunCtx(t *testing.T, ctx context.Context, dir string, input map[string]any) (tool.Result, error) {
	t.Helper()
	tl := Grep()
	raw, _ := json.Marshal(input)
	schema, err := tool.CompileSchema(tl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	valid, err := schema.Validate("Grep", raw)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(ctx, &tool.Call{ID: "toolu_test", Input: valid, Env: ftEnv(dir)})
}

// TestGrepCancelLongLine checks that a search of a 16 MB single-line file
// looks at its context while it scans the line, and stops at the next look
// once the context is done, returning the cancellation as an error rather
// than a partial result; in a walk too.
func TestGrepCancelLongLine(t *testing.T) {
	dir := ftTempDir(t)
	ftWriteFile(t, dir, "big.txt", string(longLine(16<<20, 100, "needle"))+"\nA123b\nneedle7\n")
	for _, tc := range []struct {
		name  string
		input map[string]any
	}{
		{"automaton", map[string]any{"pattern": `[A-Z][0-9]{3}[a-z]`, "path": "big.txt"}},
		{"automaton_content", map[string]any{"pattern": `[A-Z][0-9]{3}[a-z]`, "output_mode": "content", "path": "big.txt"}},
		{"literal", map[string]any{"pattern": "needle", "output_mode": "content", "-o": true, "multiline": true, "path": "big.txt"}},
		// The line holds the literal, but the regexp does not match it.
		{"literal_then_regexp", map[string]any{"pattern": `needle\d`, "output_mode": "content", "path": "big.txt"}},
		{"walk", map[string]any{"pattern": `[A-Z][0-9]{3}[a-z]`, "output_mode": "count"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Uncancelled, the search finds its match after looking at
			// the context at least once per MB.
			never := &cancelLaterCtx{Context: context.Background(), after: 1 << 40}
			r, err := grepRunCtx(t, never, dir, tc.input)
			if err != nil || r.IsError || strings.HasPrefix(ftText(r), "No ") {
				t.Fatalf("uncancelled: %v %q", err, ftText(r))
			}
			if n := never.calls.Load(); n < 16 {
				t.Fatalf("uncancelled search looked at its context %d times, want ≥ 16", n)
			}
			// Cancelled in the middle of the line (after 8 looks), it
			// stops soon after: the walk's goroutines look a few times
			// more, but the line is not scanned to its end.
			ctx := &cancelLaterCtx{Context: context.Background(), after: 8}
			r, err = grepRunCtx(t, ctx, dir, tc.input)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("cancelled search: err %v, result %q; want context.Canceled", err, ftText(r))
			}
			if n := ctx.calls.Load(); n > 8+6 {
				t.Errorf("cancelled search looked at its context %d times, want it to stop soon after the 8th", n)
			}
		})
	}
}

// TestGrepReportsLargeFiles checks that files over the size limit are
// left out of a walk with a note in every mode, and that a file named by
// path is searched whatever its size.
func TestGrepReportsLargeFiles(t *testing.T) {
	defer func(n int) { grepMaxFileSize = n }(grepMaxFileSize)
	grepMaxFileSize = 1000
	dir := ftTempDir(t)
	ftWriteFile(t, dir, "small.txt", "needle\n")
	ftWriteFile(t, dir, "big.log", strings.Repeat("needle\n", 200))
	ftWriteFile(t, dir, "sub/huge.txt", strings.Repeat("x", 5000))
	note := "[Skipped 2 files larger than 1000 bytes, not searched: big.log, sub/huge.txt.]"
	for _, tc := range []struct {
		input map[string]any
		want  string
	}{
		{map[string]any{"pattern": "needle"}, "Found 1 file\nsmall.txt\n\n" + note},
		{map[string]any{"pattern": "needle", "output_mode": "content"}, "small.txt:1:needle\n\n" + note},
		{map[string]any{"pattern": "needle", "output_mode": "count"}, "small.txt:1\n\nTotal: 1 matching line in 1 file.\n\n" + note},
		{map[string]any{"pattern": "zebra"}, "No files found\n\n" + note},
		{map[string]any{"pattern": "needle", "output_mode": "content", "offset": 5}, "[No lines at offset 5: there are 1 in all.]\n\n" + note},
		{map[string]any{"pattern": "needle", "output_mode": "count", "path": "big.log"}, "200\n\nTotal: 200 matching lines in 1 file."},
	} {
		if got := ftText(ftRun(t, Grep(), ftEnv(dir), tc.input)); got != tc.want {
			t.Errorf("%v:\n got %q\nwant %q", tc.input, got, tc.want)
		}
	}
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("big%02d.txt", i)
		ftWriteFile(t, filepath.Join(dir, "many"), names[i], strings.Repeat("y", 2000))
	}
	got := ftText(ftRun(t, Grep(), ftEnv(filepath.Join(dir, "many")), map[string]any{"pattern": "y"}))
	want := "No files found\n\n[Skipped 12 files larger than 1000 bytes, not searched: " + strings.Join(names[:10], ", ") + " and 2 more.]"
	if got != want {
		t.Errorf("many large files:\n got %q\nwant %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "many", "big00.txt")); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkGrepLongLine runs Grep on a file of a single line of 1, 4 and
// 16 MB with a match every 100 bytes, in each output mode: the time per
// MB (b.SetBytes) stays flat as the line grows.
func BenchmarkGrepLongLine(b *testing.B) {
	dir := ftTempDir(b)
	for _, mb := range []int{1, 4, 16} {
		name := fmt.Sprintf("%dMB.txt", mb)
		ftWriteFile(b, dir, name, string(longLine(mb<<20, 100, "ErrUnexpectedEOF")))
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			for _, bc := range []struct {
				name  string
				input map[string]any
			}{
				{"files", map[string]any{"pattern": "ErrUnexpectedEOF"}},
				{"content", map[string]any{"pattern": "ErrUnexpectedEOF", "output_mode": "content", "-C": 1}},
				{"count", map[string]any{"pattern": "ErrUnexpectedEOF", "output_mode": "count"}},
				{"only_matching", map[string]any{"pattern": "ErrUnexpectedEOF", "output_mode": "content", "-o": true}},
				{"regex", map[string]any{"pattern": `Err\w+EOF`, "output_mode": "content"}},
				{"no_literal", map[string]any{"pattern": `[A-Z][a-z]+[A-Z]`, "output_mode": "content"}},
			} {
				bc.input["path"] = name
				b.Run(bc.name, func(b *testing.B) {
					b.SetBytes(int64(mb << 20))
					for b.Loop() {
						if r := ftRun(b, Grep(), ftEnv(dir), bc.input); r.IsError {
							b.Fatal(ftText(r))
						}
					}
				})
			}
		})
	}
}

// TestGrepMappedFileShrinks checks that a mapped file that shrinks while it
// is searched makes the search fail with errGrepFault instead of a crash.
func TestGrepMappedFileShrinks(t *testing.T) {
	if grepMapMin > 1<<30 {
		t.Skip("files are not mapped on this system")
	}
	dir := ftTempDir(t)
	p := ftWriteFile(t, dir, "big.txt", string(longLine(4<<20, 100, "needle")))
	data, _, mapped, err := grepReadFile(p, nil)
	if err != nil || !mapped {
		t.Fatalf("grepReadFile: mapped %v, err %v; want a mapping", mapped, err)
	}
	defer grepUnmap(data)
	if err := os.Truncate(p, 0); err != nil {
		t.Fatal(err)
	}
	m, _ := newGrepMatcher("needle", false, false)
	s := &grepSearch{m: m, lineNumbers: true}
	err = grepGuardFault(func() error {
		_, err := s.find(context.Background(), data)
		return err
	})
	if !errors.Is(err, errGrepFault) {
		t.Errorf("search of a truncated mapping: %v, want errGrepFault", err)
	}
}

// TestGrepRuneCount checks grepRuneCount against utf8.RuneCount.
func TestGrepRuneCount(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 500 {
		var b []byte
		for range r.IntN(200) {
			b = append(b, []string{"a", "abcdefgh", strings.Repeat("x", 40), strings.Repeat("y", 130), "é", "€", "\xff", "\xe2\x82", "𝄞"}[r.IntN(9)]...)
		}
		if got, want := grepRuneCount(b), utf8.RuneCount(b); got != want {
			t.Fatalf("grepRuneCount(%q) = %d, want %d", b, got, want)
		}
	}
}
