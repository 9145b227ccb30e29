package conversation_test

import (
	"context"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// TestForwardSubagentText: by default the stream shows a subagent's tool
// calls and results only; with ForwardSubagentText its text too, under
// the Agent call's id.
func TestForwardSubagentText(t *testing.T) {
	for _, tc := range []struct {
		forward bool
		want    []string
	}{
		{false, []string{"system/init", "assistant:tool_use", "system/task_started", "user:text@sub",
			"system/task_updated", "system/task_notification", "user:tool_result", "assistant:text", "result:success"}},
		{true, []string{"system/init", "assistant:tool_use", "system/task_started", "user:text@sub", "assistant:text@sub",
			"system/task_updated", "system/task_notification", "user:tool_result", "assistant:text", "result:success"}},
	} {
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Look", "prompt": "Look around.",
				"subagent_type": "general-purpose"}),
			agentlooptest.Text("Nothing to see."),
			agentlooptest.Text("Done."))
		opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ForwardSubagentText: tc.forward,
			SettingSources: []settings.SettingSource{}, Tools: []string{"Agent", "Read"}}
		msgs, err := agentloop.Query(context.Background(), "go", opts).Collect()
		if err != nil {
			t.Fatal(err)
		}
		var seq []string
		for _, m := range msgs {
			l := label(m)
			if u, ok := m.(*agentloop.UserMessage); ok && u.ParentToolUseID != nil {
				l += "@sub"
			}
			if a, ok := m.(*agentloop.AssistantMessage); ok && a.ParentToolUseID != nil {
				if *a.ParentToolUseID != "toolu_a" {
					t.Errorf("subagent text under %q, want toolu_a", *a.ParentToolUseID)
				}
				l += "@sub"
			}
			seq = append(seq, l)
		}
		if diff := cmp.Diff(tc.want, seq); diff != "" {
			t.Errorf("forward %v: sequence (-want +got):\n%s", tc.forward, diff)
		}
	}
}
