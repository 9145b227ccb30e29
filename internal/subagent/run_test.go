package subagent

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// TestRunInterrupted: a subagent whose tool runs when its parent is
// interrupted ends its own run as an interrupted one. Its history (what
// the reference's subagent transcript holds) ends with the call's stopped
// result and the marker; the parent's stream gets neither, as the
// reference's stream (cmd/agentloop testdata/interrupts/subagent).
func TestRunInterrupted(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_w", "wait", map[string]any{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	wait := tool.New("wait", "Waits until stopped.", func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
		cancel() // the parent is interrupted while this runs
		<-ctx.Done()
		return tool.Result{}, ctx.Err()
	}, nil)
	child, err := engine.New(engine.Config{Provider: srv.Provider(), Model: "claude-opus-5-5",
		Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"}, Tools: []tool.Tool{wait}})
	if err != nil {
		t.Fatal(err)
	}
	var shown []string
	o := Run(ctx, child, []model.Content{model.TextBlock("Wait.")}, func(m message.Message) {
		if u, ok := m.(*message.User); ok {
			for _, b := range u.Message.Content {
				shown = append(shown, b.Type+" "+b.Text)
			}
		}
	})
	if o.Status() != StatusStopped {
		t.Errorf("status %q, want %q", o.Status(), StatusStopped)
	}
	if len(shown) != 0 {
		t.Errorf("the parent's stream got the child's user lines %q, want none", shown)
	}
	h := child.History()
	var tail []string
	for _, m := range h[max(0, len(h)-2):] {
		for _, b := range m.Content {
			tail = append(tail, m.Role+" "+b.Type+" "+b.ResultText()) // a text block's text
		}
	}
	// The call, then one user turn: its stopped result and the marker.
	want := []string{"assistant tool_use ", "user tool_result " + engine.StoppedText, "user text " + engine.Interrupted}
	if d := cmp.Diff(want, tail); d != "" {
		t.Errorf("the end of the child's history (-want +got):\n%s", d)
	}
}

// Activity describes calls in task_progress as the reference recording
// does (cmd/agentloop testdata: "Reading f.txt", "Finding *.txt",
// "Running echo hi", "Running sleep then echo").
func TestActivity(t *testing.T) {
	tests := []struct {
		name, input, want string
	}{
		{"Read", `{"file_path":"/w/dir/f.txt"}`, "Reading f.txt"},
		{"Glob", `{"pattern":"*.txt"}`, "Finding *.txt"},
		{"Bash", `{"command":"sleep 5; echo done","description":"sleep then echo"}`, "Running sleep then echo"},
		{"Bash", `{"command":"echo hi\necho there"}`, "Running echo hi"},
		{"Read", `{}`, "Read"},
		{"gate", `{"text":"x"}`, "gate"},
		{"Bash", `not json`, "Bash"},
	}
	for _, tc := range tests {
		if got := Activity(tc.name, json.RawMessage(tc.input)); got != tc.want {
			t.Errorf("Activity(%s, %s) = %q, want %q", tc.name, tc.input, got, tc.want)
		}
	}
}
