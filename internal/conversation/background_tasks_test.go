package conversation_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// drainStream reads a stream to its end, failing on an error.
func drainStream(t *testing.T, stream agentloop.Stream) []agentloop.Message {
	t.Helper()
	var out []agentloop.Message
	for m, err := range stream {
		if err != nil {
			t.Fatalf("stream error: %v", err)
		}
		out = append(out, m)
	}
	return out
}

// taskLine is a task line of the stream as the tests compare it: its
// subtype and the fields that do not change from run to run.
type taskLine struct {
	Subtype string
	TaskID  string `json:",omitempty"`
	Type    string `json:",omitempty"` // task_type
	Status  string `json:",omitempty"` // task_notification's status, task_updated's patch
	Summary string `json:",omitempty"`
	Backgr  string `json:",omitempty"` // is_backgrounded
	Live    []string
}

// taskLines keeps the task lines of a stream, checking on the way that
// every line of a task carries the same run_id.
func taskLines(t *testing.T, msgs []agentloop.Message) []taskLine {
	t.Helper()
	runs := map[string]string{}
	var out []taskLine
	for _, m := range msgs {
		s, ok := m.(*agentloop.SystemMessage)
		if !ok {
			continue
		}
		l := taskLine{Subtype: s.Subtype}
		switch s.Subtype {
		case "background_tasks_changed":
			var tasks []struct {
				TaskID, TaskType, RunID, Description, SubagentType string
			}
			var raw []map[string]string
			if err := json.Unmarshal(s.Data["tasks"], &raw); err != nil {
				t.Fatalf("background_tasks_changed tasks %s: %v", s.Data["tasks"], err)
			}
			l.Live = []string{}
			for _, r := range raw {
				tasks = append(tasks, struct{ TaskID, TaskType, RunID, Description, SubagentType string }{
					r["task_id"], r["task_type"], r["run_id"], r["description"], r["subagent_type"]})
			}
			for _, k := range tasks {
				l.Live = append(l.Live, k.TaskType+" "+k.SubagentType+" "+k.Description)
				if runs[k.TaskID] != "" && runs[k.TaskID] != k.RunID {
					t.Errorf("task %s: run_id %q, earlier %q", k.TaskID, k.RunID, runs[k.TaskID])
				}
				runs[k.TaskID] = k.RunID
			}
		case "task_started", "task_updated", "task_notification":
			l.TaskID = sysField(s, "task_id")
			if run := sysField(s, "run_id"); run == "" || (runs[l.TaskID] != "" && runs[l.TaskID] != run) {
				t.Errorf("%s of %s: run_id %q, earlier %q", s.Subtype, l.TaskID, run, runs[l.TaskID])
			} else {
				runs[l.TaskID] = run
			}
			l.Type = sysField(s, "task_type")
			l.Backgr = sysField(s, "is_backgrounded")
			l.Status = sysField(s, "status")
			if s.Subtype == "task_updated" {
				var p struct{ Status string }
				_ = json.Unmarshal(s.Data["patch"], &p)
				l.Status = p.Status
			}
			if s.Subtype == "task_notification" {
				l.Summary = sysField(s, "summary")
				if s.Data["output_file"] == nil {
					t.Errorf("task_notification of %s has no output_file", l.TaskID)
				}
			}
			l.TaskID = "" // ids differ from run to run; the run_id check ties the lines together
		default:
			continue
		}
		out = append(out, l)
	}
	return out
}

// TestBackgroundTasksChanged: a background shell and a background subagent
// each put their task lines into the stream as the reference does
// (recording t_bash_background): the live set with the task, its
// task_started, and when it ends its task_updated, its task_notification
// and the live set without it.
func TestBackgroundTasksChanged(t *testing.T) {
	t.Run("shell", func(t *testing.T) {
		dir := t.TempDir()
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_bg", "Bash", map[string]any{"command": "sleep 0.2; echo job finished > bg.txt",
				"description": "Slow job", "run_in_background": true}),
			agentlooptest.ToolUse("toolu_wait", "Bash", map[string]any{"command": "until [ -s bg.txt ]; do sleep 0.05; done; sleep 0.5; cat bg.txt"}),
			agentlooptest.Text("The job finished."),
		)
		opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: dir, SettingSources: []settings.SettingSource{},
			PermissionMode: agentloop.PermissionBypass, NoSessionPersistence: true}
		msgs := drainStream(t, agentloop.Query(context.Background(), "Run the job.", opts))
		want := []taskLine{
			{Subtype: "background_tasks_changed", Live: []string{"local_bash  Slow job"}},
			{Subtype: "task_started", Type: "local_bash", Backgr: "true"},
			{Subtype: "task_updated", Status: "completed"},
			{Subtype: "task_notification", Status: "completed", Summary: `Background command "Slow job" completed (exit code 0)`},
			{Subtype: "background_tasks_changed", Live: []string{}},
		}
		if diff := cmp.Diff(want, taskLines(t, msgs)); diff != "" {
			t.Errorf("task lines (-want +got):\n%s", diff)
		}
	})
	t.Run("subagent", func(t *testing.T) {
		srv := agentlooptest.NewTB(t,
			bgAgentCall("toolu_a"),
			agentlooptest.Text("I will wait for the worker."),
			agentlooptest.Text("The worker says WORKER DONE."),
		)
		srv.Route(isWorker, agentlooptest.Text("WORKER DONE"))
		msgs := drainStream(t, agentloop.Query(context.Background(), "Start the worker.", bgOpts(t, srv)))
		want := []taskLine{
			{Subtype: "background_tasks_changed", Live: []string{"local_agent worker Work alone"}},
			{Subtype: "task_started", Type: "local_agent", Backgr: "true"},
			{Subtype: "task_updated", Status: "completed"},
			{Subtype: "task_notification", Status: "completed", Summary: "WORKER DONE"},
			{Subtype: "background_tasks_changed", Live: []string{}},
		}
		if diff := cmp.Diff(want, taskLines(t, msgs)); diff != "" {
			t.Errorf("task lines (-want +got):\n%s", diff)
		}
	})
}
