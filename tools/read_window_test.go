package tools

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/tool"
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

// TestNumberedSize checks numberedSize against writing the numbers out.
func TestNumberedSize(t *testing.T) {
	for _, r := range [][2]int{{1, 1}, {1, 9}, {1, 10}, {5, 123}, {9, 10}, {99, 101}, {1, 2000}, {950, 12345}, {10, 9}} {
		want := 0
		for i := r[0]; i <= r[1]; i++ {
			want += len(strconv.Itoa(i)) + 1
		}
		if got := numberedSize(r[0], r[1]); got != want {
			t.Errorf("numberedSize(%d, %d) = %d, want %d", r[0], r[1], got, want)
		}
	}
}

// TestReadAllocatesLittle: a Read of a text file allocates its bytes once
// for the read and once for the numbered output, sized exactly, and not a
// third time for a string of the text. Measured beyond what a Read of a
// one-line file allocates: a text copied out of the buffer read costs the
// file's size again (long lines show it), an output sized by guess several
// bytes a line (short lines show it).
func TestReadAllocatesLittle(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	rd := Read()
	env := &tool.Env{Cwd: dir, Home: dir, SessionID: "allocs", State: &tool.State{}}
	allocs := func(name, src string) float64 {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		input, _ := json.Marshal(map[string]string{"file_path": p})
		read := func() {
			r, err := rd.Run(context.Background(), &tool.Call{ID: "t", Input: input, Env: env})
			if err != nil || r.IsError {
				t.Fatalf("%v %+v", err, r)
			}
		}
		read()
		// The least of three measures: what other goroutines of the test
		// binary allocate meanwhile can only add to one.
		const n = 20
		least := math.Inf(1)
		for range 3 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range n {
				read()
			}
			runtime.ReadMemStats(&after)
			least = min(least, float64(after.TotalAlloc-before.TotalAlloc)/n)
		}
		return least
	}
	base := allocs("one.txt", "x\n")
	long := strings.Repeat("0123456789 the quick brown fox jumps over the lazy dog 0123\n", 1500)
	short := strings.Repeat("ab\n", 2000)
	for _, tc := range []struct {
		name, src string
		want      float64 // the buffer read (with its 512 spare bytes) and the output
	}{
		{"long.txt", long, float64(2*len(long) + 512 + numberedSize(1, 1500))},
		{"short.txt", short, float64(2*len(short) + 512 + numberedSize(1, 2000))},
	} {
		got := allocs(tc.name, tc.src) - base
		t.Logf("%s: %.0f bytes allocated beyond a one-line Read, want about %.0f", tc.name, got, tc.want)
		if got > 1.1*tc.want {
			t.Errorf("a Read of %s (%d bytes) allocates %.0f bytes beyond a one-line Read, want about %.0f", tc.name, len(tc.src), got, tc.want)
		}
	}
}
