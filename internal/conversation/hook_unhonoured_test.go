package conversation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
)

// TestUnhonouredHookOutputsReported: the hook outputs agentloop does not
// act on (SessionStart initialUserMessage and sessionTitle,
// UserPromptSubmit sessionTitle) are reported, not silently dropped.
func TestUnhonouredHookOutputsReported(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	out := func(h hooks.HookSpecificOutput) []hooks.Matcher {
		return []hooks.Matcher{{Hooks: []hooks.Callback{func(context.Context, hooks.Input, string) (hooks.Output, error) {
			return hooks.Output{HookSpecificOutput: &h}, nil
		}}}}
	}
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), NoSessionPersistence: true,
		Hooks: map[hooks.Event][]hooks.Matcher{
			hooks.SessionStart:     out(hooks.HookSpecificOutput{HookEventName: "SessionStart", SessionTitle: "T1", InitialUserMessage: "hi"}),
			hooks.UserPromptSubmit: out(hooks.HookSpecificOutput{HookEventName: "UserPromptSubmit", SessionTitle: "T2"}),
		}}
	var got []string
	for m, err := range agentloop.Query(context.Background(), "go", opts) {
		if err != nil {
			t.Fatal(err)
		}
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagHook {
			got = append(got, d.Text)
		}
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{"SessionStart (source startup): initialUserMessage", "SessionStart (source startup): sessionTitle", "UserPromptSubmit: sessionTitle"} {
		if !strings.Contains(all, want) {
			t.Errorf("no diagnostic %q in:\n%s", want, all)
		}
	}
}
