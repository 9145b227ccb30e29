package main

import (
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// Text and json output print one stderr line per retry; stream-json carries
// the api_retry messages instead.
func TestRetriesPrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("waits the real retry delays; go test without -short runs it")
	}
	for _, tt := range []struct {
		format    string
		wantLines int
	}{{"text", 2}, {"json", 2}, {"stream-json", 0}} {
		t.Run(tt.format, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.ServerError(), agentlooptest.RateLimited(), agentlooptest.Text("At last."))
			code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--output-format", tt.format, "--verbose")
			if code != 0 || !strings.Contains(out, "At last.") {
				t.Fatalf("code %d stdout %q stderr %q", code, out, errOut)
			}
			var lines []string
			for _, l := range strings.Split(errOut, "\n") {
				if strings.HasPrefix(l, "agentloop: retry ") {
					lines = append(lines, l)
				}
			}
			if len(lines) != tt.wantLines {
				t.Fatalf("stderr has %d retry lines, want %d:\n%s", len(lines), tt.wantLines, errOut)
			}
			if tt.wantLines == 0 {
				if n := strings.Count(out, `"subtype":"api_retry"`); n != 2 {
					t.Errorf("stream-json has %d api_retry lines, want 2", n)
				}
				return
			}
			t.Log(strings.Join(lines, "\n"))
			for i, want := range []string{"retry 1/10 in ", "retry 2/10 in "} {
				if !strings.Contains(lines[i], want) {
					t.Errorf("line %d = %q, want %q in it", i, lines[i], want)
				}
			}
			if !strings.Contains(lines[0], "500") || !strings.Contains(lines[0], "Internal server error") ||
				!strings.Contains(lines[1], "429") {
				t.Errorf("retry lines do not say what failed:\n%s", strings.Join(lines, "\n"))
			}
		})
	}
}
