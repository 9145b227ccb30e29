package tools

import (
	"strings"
	"testing"
)

// FuzzLineWindow checks lineWindow against splitting the text into lines
// and joining the window's again, for every window of the text.
func FuzzLineWindow(f *testing.F) {
	for _, s := range []string{"", "a", "a\n", "\n", "a\nb", "a\n\nb\n", "\n\n\n", "x\r\ny\n\nz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		lines := strings.Split(text, "\n")
		total := len(lines)
		if total > 40 {
			return
		}
		if n := strings.Count(text, "\n") + 1; n != total {
			t.Fatalf("%q: counted %d lines, split %d", text, n, total)
		}
		for start := 0; start < total; start++ {
			for end := start + 1; end <= total; end++ {
				want := strings.Join(lines[start:end], "\n")
				if got := lineWindow(text, start, end, total); got != want {
					t.Fatalf("%q lines [%d,%d): got %q, want %q", text, start, end, got, want)
				}
			}
		}
	})
}
