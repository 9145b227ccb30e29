package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/settings"
)

// TestHookOutputSpillsToResultsDir: additionalContext over the 10,000
// characters of hooks.MaxOutputChars reaches the model as a preview whose
// path is in the session's tool-results directory (next to its
// transcript, which the model may Read), and the file holds the whole
// text. Before, the file went to the system's temporary directory.
func TestHookOutputSpillsToResultsDir(t *testing.T) {
	configDir := t.TempDir()
	long := "HOOK-START " + strings.Repeat("context line\n", 1200) + "HOOK-END"
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: configDir,
		SettingSources: []settings.SettingSource{},
		Hooks: map[hooks.Event][]hooks.Matcher{hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{
			func(context.Context, hooks.Input, string) (hooks.Output, error) {
				return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.UserPromptSubmit, AdditionalContext: long}}, nil
			}}}}}}
	if _, err := agentloop.Query(context.Background(), "hi", opts).Collect(); err != nil {
		t.Fatal(err)
	}
	text := allUserText(srv.Requests()[0])
	if strings.Contains(text, "HOOK-END") || !strings.Contains(text, "HOOK-START") {
		t.Fatalf("the request carries the whole hook output, or none of it")
	}
	m := regexp.MustCompile(`the full text is in (\S+)\]`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no overflow path in the request: %.300s", text[strings.Index(text, "hook output truncated"):])
	}
	path := filepath.FromSlash(m[1])
	if filepath.Base(filepath.Dir(path)) != "tool-results" || !strings.HasPrefix(path, configDir) {
		t.Errorf("overflow file %s is not in the session's tool-results directory under %s", path, configDir)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != long {
		t.Errorf("overflow file: %v, %d bytes (want %d)", err, len(b), len(long))
	}
}
