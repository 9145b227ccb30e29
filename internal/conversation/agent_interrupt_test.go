package conversation_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// An interrupt while a foreground subagent runs ends the subagent's run
// as an interrupted one (its own marker goes to its history, not to the
// stream, as the reference), answers the Agent call as stopped, then
// tells the task's end (stopped) and writes the parent's marker and the
// error result: the reference's order (cmd/agentloop
// testdata/interrupts/subagent).
func TestInterruptForegroundSubagent(t *testing.T) {
	arrived := make(chan struct{})
	held := agentlooptest.Text("never")
	held.Delay = time.Hour
	held.Expect = func(*agentlooptest.Request) error { close(arrived); return nil }
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review", "prompt": "Review the code.",
			"subagent_type": "reviewer"}),
		held)
	srv.AllowExhausted()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, Tools: []string{"Agent"},
		Agents: map[string]agentloop.AgentDefinition{"reviewer": {Description: "Reviews code", Prompt: "You review code.", Tools: []string{"Read"}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-arrived; cancel() }()
	var seq []string
	for m := range agentloop.Query(ctx, "review please", opts) {
		switch m := m.(type) {
		case *agentloop.SystemMessage:
			if m.Subtype == "task_notification" {
				var st string
				_ = json.Unmarshal(m.Data["status"], &st)
				seq = append(seq, "task_notification "+st)
			}
		case *agentloop.UserMessage:
			for _, b := range m.Message.Content {
				sub := ""
				if m.ParentToolUseID != nil {
					sub = "@sub "
				}
				switch b.Type {
				case model.TypeToolResult:
					if b.ResultText() == engine.StoppedText {
						seq = append(seq, sub+"Agent call stopped")
					} else {
						seq = append(seq, sub+"tool result: "+b.ResultText())
					}
				case model.TypeText:
					seq = append(seq, sub+b.Text)
				}
			}
		case *agentloop.ResultMessage:
			seq = append(seq, "result "+m.Subtype+" "+m.TerminalReason)
		}
	}
	want := []string{"@sub Review the code.", "Agent call stopped", "task_notification stopped", engine.Interrupted,
		"result error_during_execution aborted_tools"}
	if diff := cmp.Diff(want, seq); diff != "" {
		t.Errorf("the interrupted run (-want +got):\n%s", diff)
	}
}
