//go:build unix

package tools

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// failureReference is failureText computed on the whole stream at once.
func failureReference(s string, budget int, lead bashLead) string {
	s = strings.TrimRightFunc(s, bashIsSpace)
	if i := strings.IndexFunc(s, bashNotSpace); i < 0 {
		s = ""
	} else if lead == bashLeadSpace {
		s = s[i:]
	} else if nl := strings.LastIndexByte(s[:i], '\n'); nl >= 0 {
		s = s[nl+1:]
	}
	r := []rune(s)
	if len(r) <= budget {
		return s
	}
	h := string(r[:budget/2])
	if i := strings.LastIndexByte(h, '\n'); i > len(h)/2 {
		h = h[:i]
	}
	t := string(r[len(r)-(budget-budget/2):])
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)/2 {
		t = t[i+1:]
	}
	middle := s[len(h) : len(s)-len(t)]
	return h + fmt.Sprintf("\n\n... [%d lines truncated] ...\n\n", max(strings.Count(middle, "\n")-1, 1)) + t
}

// failureCapture writes in to a capture in chunks of chunk bytes. Its head
// keeps limit characters and its end window lastKeep bytes.
func failureCapture(in string, limit, lastKeep, chunk int, lead bashLead) *bashCapture {
	c := newBashCapture(limit, lead)
	c.lastKeep = lastKeep
	for b := []byte(in); len(b) > 0; {
		n := min(chunk, len(b))
		_, _ = c.Write(b[:n])
		b = b[n:]
	}
	return c
}

// TestBashFailureText: the head and tail of a failed command's stream are
// those of the whole stream, however it was written and whether or not the
// capture still holds all of it (the gap between head and end window is
// counted in the note).
func TestBashFailureText(t *testing.T) {
	var long []string
	for i := range 3 {
		var b strings.Builder
		for j := range 60 + 40*i {
			fmt.Fprintf(&b, "line %d of %d%s\n", j, i, strings.Repeat("é", j%5))
		}
		long = append(long, b.String())
	}
	inputs := append([]string{
		"", "\n\n", "abc", "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n", "\n\n  x\ny\n", strings.Repeat("x", 500),
		strings.Repeat("ab\n", 200) + strings.Repeat(" \n", 30), strings.Repeat("こんにちは\n", 80) + "end",
		strings.Repeat("\n ", 20) + "   late\nlater", "error: " + strings.Repeat("y", 300) + "\nfinal error line\n",
	}, long...)
	for _, in := range inputs {
		for _, budget := range []int{10, 21, 60, 200} {
			limit := budget/2 + 3
			lastKeep := (budget-budget/2)*utf8.UTFMax + 80
			for _, chunk := range []int{1, 7, 64, 100_000} {
				for _, lead := range []bashLead{bashLeadBlankLines, bashLeadSpace} {
					got := failureCapture(in, limit, lastKeep, chunk, lead).failureText(budget)
					if want := failureReference(in, budget, lead); got != want {
						t.Errorf("%.40q… budget %d chunk %d lead %d:\n got %q\nwant %q", in, budget, chunk, lead, got, want)
					}
				}
			}
		}
	}
}

func FuzzBashFailureText(f *testing.F) {
	f.Add("a\nb\nc\nd\ne\nf\ng\nh\n", uint8(3), uint8(10))
	f.Add(strings.Repeat("é\n", 100), uint8(7), uint8(21))
	f.Fuzz(func(t *testing.T, in string, chunk, budget uint8) {
		b := max(int(budget), 2)
		c := failureCapture(in, b/2+3, (b-b/2)*utf8.UTFMax+len(in)/2+8, max(int(chunk), 1), bashLeadBlankLines)
		got := c.failureText(b)
		// Trailing whitespace longer than the end window is the one case
		// the capture cannot follow; keep the comparison to the rest.
		trimmed := strings.TrimRightFunc(in, bashIsSpace)
		if len(in)-len(trimmed) > len(in)/2 || !utf8.ValidString(in) {
			return
		}
		if want := failureReference(in, b, bashLeadBlankLines); got != want {
			t.Errorf("budget %d chunk %d:\n got %q\nwant %q", b, chunk, got, want)
		}
	})
}

// TestBashFailureStreams: a failed command shows at most bashFailureChars
// characters of output; stderr keeps half of them when both streams are
// long, and takes what stdout leaves when that is short.
func TestBashFailureStreams(t *testing.T) {
	for _, tc := range []struct {
		name              string
		out, errs         int // characters written to each stream
		wantOut, wantErrs int // characters shown (before the notes)
	}{
		{"both short", 100, 200, 100, 200},
		{"both long", 50_000, 50_000, bashFailureChars / 2, bashFailureChars / 2},
		{"short stdout", 10, 50_000, 10, bashFailureChars - 10},
		{"short stderr", 50_000, 10, bashFailureChars - 10, 10},
		{"no stderr", 50_000, 0, bashFailureChars, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, e := newBashCapture(bashMaxOutputChars, bashLeadBlankLines), newBashCapture(bashMaxOutputChars, bashLeadSpace)
			_, _ = o.Write([]byte(strings.Repeat("o", tc.out)))
			_, _ = e.Write([]byte(strings.Repeat("e", tc.errs)))
			out, errs := bashFailureStreams(o, e)
			if n := strings.Count(out, "o"); n != tc.wantOut {
				t.Errorf("stdout shows %d characters, want %d", n, tc.wantOut)
			}
			if n := strings.Count(errs, "e") - 2*strings.Count(errs, "lines truncated"); n != tc.wantErrs {
				t.Errorf("stderr shows %d characters, want %d", n, tc.wantErrs)
			}
		})
	}
}

// TestBashFailureKeepsTail: a failed command whose output is longer than
// the failure limit shows its beginning and its end, where the error is,
// within about bashFailureChars characters.
func TestBashFailureKeepsTail(t *testing.T) {
	r := bashCall(t, t.Context(), Bash(), bashTestEnv(t), map[string]any{
		"command": "seq 1 100000; echo 'FATAL: the build failed' >&2; exit 3"})
	text := r.Text()
	if !r.IsError || !strings.HasPrefix(text, "Exit code 3\n1\n2\n3\n") || !strings.Contains(text, "\n99999\n100000\nFATAL: the build failed") {
		t.Fatalf("error %v, text %q … %q", r.IsError, text[:min(len(text), 80)], text[max(len(text)-120, 0):])
	}
	if n := utf8.RuneCountInString(text); n > bashFailureChars+100 {
		t.Errorf("failure text is %d characters, want about %d at most", n, bashFailureChars)
	}
	if !strings.Contains(text, "lines truncated] ...") {
		t.Error("no truncation note")
	}
}
