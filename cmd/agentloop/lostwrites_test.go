package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	rec "github.com/agentloop/agentloop/internal/transcript"
)

// A transcript that cannot be written (a full disk, injected) is reported
// in every output format: exit status 1, a stderr line in text and json,
// the session_writes_lost field on the json result, and the
// session_writes_lost message plus the result field in stream-json.
func TestCLISessionWritesLost(t *testing.T) {
	t.Cleanup(rec.SetWriteFaultForTest(func() error { return fmt.Errorf("write: %w", syscall.ENOSPC) }))
	for _, format := range []string{"text", "json", "stream-json"} {
		t.Run(format, func(t *testing.T) {
			t.Setenv("CLAUDE_CONFIG_DIR", t.TempDir())
			srv := agentlooptest.NewTB(t, agentlooptest.Text("Answer."))
			args := []string{"-p", "hello", "--output-format", format}
			if format == "stream-json" {
				args = append(args, "--verbose")
			}
			code, out, errOut := runCLI(t, srv, "", args...)
			t.Logf("stderr: %s", errOut)
			if code != 1 {
				t.Errorf("exit status %d, want 1", code)
			}
			wantLine := "agentloop: session writes lost (ENOSPC): the transcript was not fully written"
			switch format {
			case "text":
				if out != "Answer.\n" || !strings.Contains(errOut, wantLine) {
					t.Errorf("stdout %q, stderr %q; want the answer and a line with %q", out, errOut, wantLine)
				}
			case "json":
				var res agentloop.ResultMessage
				if err := json.Unmarshal([]byte(out), &res); err != nil {
					t.Fatalf("output %q: %v", out, err)
				}
				if res.SessionWritesLost == nil || res.SessionWritesLost.ErrorCode != "ENOSPC" || !strings.Contains(errOut, wantLine) {
					t.Errorf("result session_writes_lost %+v, stderr %q", res.SessionWritesLost, errOut)
				}
			case "stream-json":
				var sawMessage, sawField bool
				for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
					m, err := agentloop.DecodeMessage([]byte(line))
					if err != nil {
						t.Fatalf("line %q: %v", line, err)
					}
					if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "session_writes_lost" {
						sawMessage = true
					}
					if r, ok := m.(*agentloop.ResultMessage); ok && r.SessionWritesLost != nil {
						sawField = true
					}
				}
				if !sawMessage || !sawField {
					t.Errorf("stream-json: session_writes_lost message %v, result field %v; output:\n%s", sawMessage, sawField, out)
				}
			}
		})
	}
}
