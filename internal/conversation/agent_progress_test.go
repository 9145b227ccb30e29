package conversation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// A subagent's task lines carry one run_id, and each of its tool calls is
// told by a task_progress line just before the call's own line, as the
// reference's (cmd/agentloop testdata/interrupts/subagent): the task, the
// call's activity, the tool, the calls so far.
func TestSubagentTaskProgress(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review", "prompt": "Review the code.",
			"subagent_type": "reviewer", "run_in_background": false}),
		agentlooptest.Text("Done."))
	srv.Route(isReviewer, withUsage(agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}), 300, 20),
		agentlooptest.Text("Looks fine."))
	g := newGate()
	g.open()
	r := runWithSubagent(t, context.Background(), "review please", subagentTranscriptOpts(t, srv, g.tool()), nil)
	runIDs := map[string]bool{}
	var seq []string
	var progress *agentloop.SystemMessage
	for _, m := range r.msgs {
		switch m := m.(type) {
		case *agentloop.SystemMessage:
			if id, ok := m.Data["run_id"]; ok {
				runIDs[string(id)] = true
			}
			switch m.Subtype {
			case "task_started", "task_progress", "task_updated", "task_notification":
				seq = append(seq, m.Subtype)
				if m.Data["run_id"] == nil {
					t.Errorf("%s has no run_id", m.Subtype)
				}
			}
			if m.Subtype == "task_progress" {
				progress = m
			}
		case *agentloop.AssistantMessage:
			if m.ParentToolUseID != nil {
				seq = append(seq, "@sub "+label(m))
			}
		}
	}
	want := []string{"task_started", "task_progress", "@sub assistant:tool_use", "task_updated", "task_notification"}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Errorf("task lines (-want +got):\n%s", diff)
	}
	if len(runIDs) != 1 || runIDs[`""`] {
		t.Errorf("run ids = %v, want one for all the task's lines", runIDs)
	}
	if progress == nil {
		t.Fatal("no task_progress")
	}
	var usage struct {
		TotalTokens int64 `json:"total_tokens"`
		ToolUses    int64 `json:"tool_uses"`
	}
	_ = json.Unmarshal(progress.Data["usage"], &usage)
	got := map[string]string{"task_id": sysField(progress, "task_id"), "tool_use_id": sysField(progress, "tool_use_id"),
		"description": sysField(progress, "description"), "subagent_type": sysField(progress, "subagent_type"),
		"last_tool_name": sysField(progress, "last_tool_name")}
	wantFields := map[string]string{"task_id": r.agentID, "tool_use_id": "toolu_a", "description": "gate",
		"subagent_type": "reviewer", "last_tool_name": "gate"}
	if diff := cmp.Diff(wantFields, got); diff != "" || usage.ToolUses != 1 || usage.TotalTokens < 300 {
		t.Errorf("task_progress (-want +got):\n%s\nusage %+v, want 1 call and at least the reply's 300 input tokens", diff, usage)
	}
}
