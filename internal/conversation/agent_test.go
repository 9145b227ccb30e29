package conversation_test

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

func TestSubagent(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		withUsage(agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review", "prompt": "Review the code.",
			"subagent_type": "reviewer"}), 2000, 60),
		withUsage(agentlooptest.ToolUse("toolu_sub", "Bash", map[string]any{"command": "echo looking"}), 700, 9),
		withUsage(agentlooptest.Text("Looks fine.\nNo issues."), 800, 9),
		withUsage(agentlooptest.Text("The reviewer found no issues."), 2200, 10))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Effort: "low",
		SettingSources: []settings.SettingSource{}, Tools: []string{"Agent", "Bash", "Read"},
		Agents: map[string]agentloop.AgentDefinition{"reviewer": {Description: "Reviews code", Prompt: "You review code.",
			Tools: []string{"Bash"}, Model: "sonnet", Effort: "high"}}}
	msgs, err := agentloop.Query(context.Background(), "review please", opts).Collect()
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
			l += "@sub"
		}
		seq = append(seq, l)
	}
	want := []string{"system/init", "assistant:tool_use", "system/task_started", "user:text@sub", "system/task_progress", "assistant:tool_use@sub",
		"user:tool_result@sub", "system/task_updated", "system/task_notification", "user:tool_result", "assistant:text", "result:success"}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Errorf("sequence (-want +got):\n%s", diff)
	}
	reqs := srv.Requests()
	sub := reqs[1]
	if sub.Params.Model != "claude-sonnet-5-5" || string(sub.Field("output_config")) != `{"effort":"high"}` {
		t.Errorf("subagent request: model %s, output_config %s", sub.Params.Model, sub.Field("output_config"))
	}
	if got := sub.ToolNames(); !cmp.Equal(got, []string{"Bash"}) {
		t.Errorf("subagent tools = %v", got)
	}
	if !strings.Contains(sub.SystemText(), "You review code.") || sub.LastUserText() != "Review the code." {
		t.Errorf("subagent system %q prompt %q", sub.SystemText(), sub.LastUserText())
	}
	if string(reqs[0].Field("output_config")) != `{"effort":"low"}` {
		t.Errorf("main effort = %s", reqs[0].Field("output_config"))
	}
	tr, _ := reqs[3].ToolResult("toolu_a")
	if tr.Blocks == nil || !strings.Contains(tr.ResultText(), "  Looks fine.\n  No issues.") {
		t.Errorf("agent result = %q", tr.ResultText())
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	opusCost := (2000+2200)*4/1e6 + (60+10)*20/1e6
	sonnetCost := (700+800)*2/1e6 + (9+9)*10/1e6
	if math.Abs(res.TotalCostUSD-(opusCost+sonnetCost)) > 1e-12 || res.Usage.InputTokens != 4200 || res.NumTurns != 2 {
		t.Errorf("cost %v (want %v), usage %d, turns %d", res.TotalCostUSD, opusCost+sonnetCost, res.Usage.InputTokens, res.NumTurns)
	}
	if len(res.ModelUsage) != 2 {
		t.Errorf("modelUsage = %v", keys(res.ModelUsage))
	}
}

func TestUnknownSubagent(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "x", "prompt": "y",
		"subagent_type": "nobody"}), agentlooptest.Text("ok"))
	_, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(),
		SettingSources: []settings.SettingSource{}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	tr, _ := srv.Requests()[1].ToolResult("toolu_a")
	if tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "general-purpose") {
		t.Errorf("result = %q", tr.ResultText())
	}
}
