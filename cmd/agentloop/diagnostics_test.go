package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestCLIDiagnostics: in text mode a diagnostic reaches stderr; with
// --debug-file it goes to the file instead; in stream-json it is a
// system/informational line.
func TestCLIDiagnostics(t *testing.T) {
	t.Run("text", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		code, out, errOut := runCLI(t, srv, "", "-p", "hi", "--tools", "Read,NoSuchTool")
		if code != 0 || out != "ok\n" || !strings.Contains(errOut, "warning") || !strings.Contains(errOut, "NoSuchTool") {
			t.Errorf("code %d stdout %q stderr %q", code, out, errOut)
		}
	})
	t.Run("debug-file", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		log := filepath.Join(t.TempDir(), "debug.log")
		code, _, errOut := runCLI(t, srv, "", "-p", "hi", "--tools", "Read,NoSuchTool", "--debug-file", log)
		b, err := os.ReadFile(log)
		if code != 0 || err != nil || !strings.Contains(string(b), "NoSuchTool") || strings.Contains(errOut, "NoSuchTool") {
			t.Errorf("code %d stderr %q log %q (%v)", code, errOut, b, err)
		}
	})
	t.Run("stream-json", func(t *testing.T) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		code, out, _ := runCLI(t, srv, "", "-p", "hi", "--tools", "Read,NoSuchTool", "--output-format", "stream-json", "--verbose")
		if code != 0 || !strings.Contains(out, `"subtype":"informational"`) || !strings.Contains(out, `"tag":"unknown_tool"`) {
			t.Errorf("code %d stdout %s", code, out)
		}
	})
}
