package conversation_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/google/go-cmp/cmp"
)

// TestDiagnostics: what a session accepts but does not honour is reported
// in the stream (system/informational, level warning) and in the
// diagnostics log, each case under its tag.
func TestDiagnostics(t *testing.T) {
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	st := `{"hooks":{
		"NoSuchEvent":[{"hooks":[{"type":"command","command":"true"}]}],
		"PreToolUse":[{"matcher":"Bash(","hooks":[{"type":"command","command":"true"}]},
		              {"matcher":"Bash","hooks":[{"type":"mcp_tool","server":"x","tool":"y"}]}]},
		"permissions":{"deny":["TodoWrite(file_path:x)"]}}`
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(st), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	var log bytes.Buffer
	var got []agentloop.Diagnostic
	for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, Tools: []string{"Read", "NoSuchTool"},
		Logger: slog.New(slog.NewTextHandler(&log, nil))}) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			got = append(got, d)
		}
	}
	want := []struct{ tag, text string }{
		{agentloop.DiagSettings, "NoSuchEvent"},
		{agentloop.DiagHook, "Bash("},
		{agentloop.DiagHook, "mcp_tool"},
		{agentloop.DiagRule, "TodoWrite(file_path:x)"},
		{agentloop.DiagTool, "NoSuchTool"},
	}
	for _, w := range want {
		found := false
		for _, d := range got {
			if d.Tag == w.tag && strings.Contains(d.Text, w.text) {
				found = true
			}
		}
		if !found {
			t.Errorf("no %s diagnostic mentioning %q in the stream; got %+v", w.tag, w.text, got)
		}
		if !strings.Contains(log.String(), w.text) {
			t.Errorf("diagnostics log does not mention %q:\n%s", w.text, log.String())
		}
	}
}

// TestDiagnosticsClean: a clean configuration yields no diagnostics.
func TestDiagnosticsClean(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Read"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			t.Errorf("unexpected diagnostic %+v", d)
		}
	}
}

// TestHookSystemMessageShown: a hook's systemMessage reaches the user as a
// system/informational message.
func TestHookSystemMessageShown(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	cb := func(ctx context.Context, in hooks.Input, id string) (hooks.Output, error) {
		return hooks.Output{SystemMessage: "remember to rotate the keys"}, nil
	}
	var got []agentloop.Diagnostic
	for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Read"},
		Hooks: map[hooks.Event][]hooks.Matcher{hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{cb}}}}}) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok {
			got = append(got, d)
		}
	}
	want := []agentloop.Diagnostic{{Tag: agentloop.DiagHookMessage, Text: "remember to rotate the keys"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}
