package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

func TestTaskCreateInfo(t *testing.T) {
	sideCheckSchemas(t, "testdata/tasks/schema.json", TaskCreate(), TaskGet(), TaskList(), TaskUpdate())
	for _, tc := range []struct {
		tl       tool.Tool
		readOnly bool
	}{{TaskCreate(), false}, {TaskGet(), true}, {TaskList(), true}, {TaskUpdate(), false}} {
		if got := tc.tl.Info().ReadOnly; got != tc.readOnly {
			t.Errorf("%s: ReadOnly %v, want %v", tc.tl.Info().Name, got, tc.readOnly)
		}
	}
}

func taskTestEnv(t *testing.T) *tool.Env {
	home := t.TempDir()
	return &tool.Env{Cwd: home, Home: home, SessionID: "sess-1", State: &tool.State{}}
}

func taskIt(id, subject, status string, blocks, blockedBy []string) TaskItem {
	return TaskItem{ID: id, Subject: subject, Status: status, Blocks: blocks, BlockedBy: blockedBy}
}

func TestTaskCreateGetListUpdate(t *testing.T) {
	env := taskTestEnv(t)
	none := []string{}
	steps := []struct {
		name string
		tl   tool.Tool
		in   map[string]any
		want sideOutcome
	}{
		{"empty list", TaskList(), map[string]any{},
			sideOutcome{Text: "The task list is empty.", Structured: TaskListResult{Tasks: []TaskSummary{}}}},
		{"create 1", TaskCreate(), map[string]any{"subject": " Write the parser ", "description": "Parse the input files.", "activeForm": "Writing the parser"},
			sideOutcome{Text: "Task #1 created successfully: Write the parser", Structured: TaskCreateResult{Task: TaskCreated{ID: "1", Subject: "Write the parser"}}}},
		{"create 2", TaskCreate(), map[string]any{"subject": "Add tests", "description": "Cover every error.", "metadata": map[string]any{"area": "parser", "keep": true}},
			sideOutcome{Text: "Task #2 created successfully: Add tests", Structured: TaskCreateResult{Task: TaskCreated{ID: "2", Subject: "Add tests"}}}},
		{"create 3", TaskCreate(), map[string]any{"subject": "Release", "description": "Tag and publish."},
			sideOutcome{Text: "Task #3 created successfully: Release", Structured: TaskCreateResult{Task: TaskCreated{ID: "3", Subject: "Release"}}}},
		{"3 waits for 1 and 2", TaskUpdate(), map[string]any{"taskId": "3", "addBlockedBy": []string{"1", "#2", "1"}},
			sideOutcome{Text: "Updated task #3: blockedBy.", Structured: TaskUpdateResult{Success: true, TaskID: "3", UpdatedFields: []string{"blockedBy"}}}},
		{"again: nothing new", TaskUpdate(), map[string]any{"taskId": "3", "addBlockedBy": []string{"2"}, "subject": "Release"},
			sideOutcome{Text: "Task #3 already matched the update; nothing changed.", Structured: TaskUpdateResult{Success: true, TaskID: "3", UpdatedFields: none}}},
		{"start 1", TaskUpdate(), map[string]any{"taskId": "1", "status": "in_progress", "owner": "alice"},
			sideOutcome{Text: "Updated task #1: owner, status. Its status went from pending to in_progress.", Structured: TaskUpdateResult{
				Success: true, TaskID: "1", UpdatedFields: []string{"owner", "status"}, StatusChange: &TaskStatusChange{From: "pending", To: "in_progress"}}}},
		{"list", TaskList(), map[string]any{},
			sideOutcome{Text: "#1 [in_progress] Write the parser (owner: alice)\n#2 [pending] Add tests\n#3 [pending] Release (waits for #1, #2)",
				Structured: TaskListResult{Tasks: []TaskSummary{
					{ID: "1", Subject: "Write the parser", Status: "in_progress", Owner: "alice", BlockedBy: none},
					{ID: "2", Subject: "Add tests", Status: "pending", BlockedBy: none},
					{ID: "3", Subject: "Release", Status: "pending", BlockedBy: []string{"1", "2"}},
				}}}},
		{"get 3", TaskGet(), map[string]any{"taskId": "3"},
			sideOutcome{Text: "Task #3: Release\nStatus: pending\nWaits for: #1 (in_progress), #2 (pending)\nDescription:\nTag and publish.",
				Structured: TaskGetResult{Task: TaskItem{ID: "3", Subject: "Release", Description: "Tag and publish.", Status: "pending", Blocks: none, BlockedBy: []string{"1", "2"}}}}},
		{"get 1", TaskGet(), map[string]any{"taskId": "#1"},
			sideOutcome{Text: "Task #1: Write the parser\nStatus: in_progress\nOwner: alice\nMust finish before: #3\nDescription:\nParse the input files.",
				Structured: TaskGetResult{Task: TaskItem{ID: "1", Subject: "Write the parser", Description: "Parse the input files.", ActiveForm: "Writing the parser",
					Owner: "alice", Status: "in_progress", Blocks: []string{"3"}, BlockedBy: none}}}},
		{"finish 1", TaskUpdate(), map[string]any{"taskId": "1", "status": "completed"},
			sideOutcome{Text: "Updated task #1: status. Its status went from in_progress to completed.", Structured: TaskUpdateResult{
				Success: true, TaskID: "1", UpdatedFields: []string{"status"}, StatusChange: &TaskStatusChange{From: "in_progress", To: "completed"}}}},
		{"finish 2 and edit it", TaskUpdate(), map[string]any{"taskId": "2", "status": "completed", "subject": "Add more tests", "description": "All errors.", "activeForm": "Adding tests", "metadata": map[string]any{"area": nil, "n": 1}},
			sideOutcome{Text: "Updated task #2: subject, description, activeForm, metadata, status. Its status went from pending to completed. Now free to start: #3.", Structured: TaskUpdateResult{
				Success: true, TaskID: "2", UpdatedFields: []string{"subject", "description", "activeForm", "metadata", "status"}, StatusChange: &TaskStatusChange{From: "pending", To: "completed"}}}},
		{"get 2", TaskGet(), map[string]any{"taskId": "2"},
			sideOutcome{Text: "Task #2: Add more tests\nStatus: completed\nMust finish before: #3\nDescription:\nAll errors.",
				Structured: TaskGetResult{Task: TaskItem{ID: "2", Subject: "Add more tests", Description: "All errors.", ActiveForm: "Adding tests",
					Status: "completed", Blocks: []string{"3"}, BlockedBy: none, Metadata: map[string]any{"keep": true, "n": float64(1)}}}}},
		{"list: 3 waits for nothing", TaskList(), map[string]any{},
			sideOutcome{Text: "#1 [completed] Write the parser (owner: alice)\n#2 [completed] Add more tests\n#3 [pending] Release",
				Structured: TaskListResult{Tasks: []TaskSummary{
					{ID: "1", Subject: "Write the parser", Status: "completed", Owner: "alice", BlockedBy: none},
					{ID: "2", Subject: "Add more tests", Status: "completed", BlockedBy: none},
					{ID: "3", Subject: "Release", Status: "pending", BlockedBy: none},
				}}}},
		{"delete 1", TaskUpdate(), map[string]any{"taskId": "1", "status": "deleted"},
			sideOutcome{Text: "Task #1 deleted.", Structured: TaskUpdateResult{
				Success: true, TaskID: "1", UpdatedFields: []string{"deleted"}, StatusChange: &TaskStatusChange{From: "completed", To: "deleted"}}}},
		{"ids are not reused", TaskCreate(), map[string]any{"subject": "Announce", "description": "Write the post."},
			sideOutcome{Text: "Task #4 created successfully: Announce", Structured: TaskCreateResult{Task: TaskCreated{ID: "4", Subject: "Announce"}}}},
		{"4 blocks 3", TaskUpdate(), map[string]any{"taskId": "4", "addBlocks": []string{"3"}},
			sideOutcome{Text: "Updated task #4: blocks.", Structured: TaskUpdateResult{Success: true, TaskID: "4", UpdatedFields: []string{"blocks"}}}},
		{"get 3 after all", TaskGet(), map[string]any{"taskId": "3"},
			sideOutcome{Text: "Task #3: Release\nStatus: pending\nWaits for: #2 (completed), #4 (pending)\nDescription:\nTag and publish.",
				Structured: TaskGetResult{Task: TaskItem{ID: "3", Subject: "Release", Description: "Tag and publish.", Status: "pending", Blocks: none, BlockedBy: []string{"2", "4"}}}}},

		// Errors.
		{"get deleted", TaskGet(), map[string]any{"taskId": "1"},
			sideOutcome{Text: `There is no task "1". Use TaskList to see the ids of the tasks.`, IsError: true}},
		{"get nonsense", TaskGet(), map[string]any{"taskId": "../2"},
			sideOutcome{Text: `There is no task "../2". Use TaskList to see the ids of the tasks.`, IsError: true}},
		{"update missing", TaskUpdate(), map[string]any{"taskId": "99", "status": "completed"},
			sideOutcome{Text: `There is no task "99". Use TaskList to see the ids of the tasks.`, IsError: true,
				Structured: TaskUpdateResult{TaskID: "99", UpdatedFields: none, Error: "Task not found"}}},
		{"update nonsense id", TaskUpdate(), map[string]any{"taskId": "x"},
			sideOutcome{Text: `There is no task "x". Use TaskList to see the ids of the tasks.`, IsError: true,
				Structured: TaskUpdateResult{TaskID: "x", UpdatedFields: none, Error: "Task not found"}}},
		{"bad status", TaskUpdate(), map[string]any{"taskId": "3", "status": "done"},
			sideOutcome{Text: `"done" is not a task status: use pending, in_progress or completed (or deleted to remove the task).`, IsError: true,
				Structured: TaskUpdateResult{TaskID: "3", UpdatedFields: none, Error: "Invalid status"}}},
		{"empty subject", TaskUpdate(), map[string]any{"taskId": "3", "subject": "  "},
			sideOutcome{Text: "subject must not be empty.", IsError: true,
				Structured: TaskUpdateResult{TaskID: "3", UpdatedFields: none, Error: "Empty subject"}}},
		{"blocks itself", TaskUpdate(), map[string]any{"taskId": "3", "addBlocks": []string{"3"}},
			sideOutcome{Text: "addBlocks: task #3 cannot depend on itself.", IsError: true,
				Structured: TaskUpdateResult{TaskID: "3", UpdatedFields: none, Error: "Task not found"}}},
		{"blocked by a missing task", TaskUpdate(), map[string]any{"taskId": "3", "status": "in_progress", "addBlockedBy": []string{"42"}},
			sideOutcome{Text: `addBlockedBy: There is no task "42". Use TaskList to see the ids of the tasks.`, IsError: true,
				Structured: TaskUpdateResult{TaskID: "3", UpdatedFields: none, Error: "Task not found"}}},
		{"create without subject", TaskCreate(), map[string]any{"subject": "", "description": "d"},
			sideOutcome{Text: "subject must not be empty: give the task a short title.", IsError: true}},
		{"create without description", TaskCreate(), map[string]any{"subject": "s"},
			sideOutcome{Text: "InputValidationError: TaskCreate failed due to the following issue:\nThe required parameter `description` is missing", IsError: true}},
		{"list with input", TaskList(), map[string]any{"all": true},
			sideOutcome{Text: "InputValidationError: TaskList failed due to the following issue:\nAn unexpected parameter `all` was provided", IsError: true}},
	}
	for _, st := range steps {
		got := sideOutcomeOf(sideRun(t, context.Background(), st.tl, env, st.in))
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Fatalf("step %q (-want +got):\n%s", st.name, diff)
		}
	}

	// What is on disk.
	dir := filepath.Join(env.Home, ".claude", "tasks", "sess-1")
	names, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range names {
		names[i] = filepath.Base(names[i])
	}
	if diff := cmp.Diff([]string{".highwatermark", "2.json", "3.json", "4.json"}, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	data, err := os.ReadFile(filepath.Join(dir, "2.json"))
	if err != nil {
		t.Fatal(err)
	}
	sideGolden(t, "tasks/2.json", data)
	if hw, _ := os.ReadFile(filepath.Join(dir, ".highwatermark")); string(hw) != "4\n" {
		t.Errorf(".highwatermark %q", hw)
	}
	all, err := Tasks(env)
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskItem{
		taskIt("2", "Add more tests", "completed", []string{"3"}, none),
		taskIt("3", "Release", "pending", none, []string{"2", "4"}),
		taskIt("4", "Announce", "pending", []string{"3"}, none),
	}
	want[0].Description, want[0].ActiveForm, want[0].Metadata = "All errors.", "Adding tests", map[string]any{"keep": true, "n": float64(1)}
	want[1].Description = "Tag and publish."
	want[2].Description = "Write the post."
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("Tasks (-want +got):\n%s", diff)
	}
}

func TestTaskCreateConcurrent(t *testing.T) {
	env := taskTestEnv(t)
	const n = 16
	var wg sync.WaitGroup
	ids := make([]string, n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := sideRun(t, context.Background(), TaskCreate(), env, map[string]any{"subject": fmt.Sprint("task ", i), "description": "d"})
			if r.IsError {
				t.Error(r.Text())
				return
			}
			ids[i] = r.Structured.(TaskCreateResult).Task.ID
		}()
		go func() {
			defer wg.Done()
			if r := sideRun(t, context.Background(), TaskList(), env, map[string]any{}); r.IsError {
				t.Error(r.Text())
			}
		}()
	}
	wg.Wait()
	sort.Slice(ids, func(a, b int) bool { return len(ids[a]) < len(ids[b]) || len(ids[a]) == len(ids[b]) && ids[a] < ids[b] })
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprint(i + 1)
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	all, err := Tasks(env)
	if err != nil || len(all) != n {
		t.Fatalf("%d tasks, %v", len(all), err)
	}
	// Concurrent updates that link tasks keep both sides consistent.
	for i := 2; i <= n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sideRun(t, context.Background(), TaskUpdate(), env, map[string]any{"taskId": "1", "addBlocks": []string{fmt.Sprint(i)}})
		}()
	}
	wg.Wait()
	all, _ = Tasks(env)
	if len(all[0].Blocks) != n-1 {
		t.Errorf("task 1 blocks %v", all[0].Blocks)
	}
	for _, tk := range all[1:] {
		if !slices.Equal(tk.BlockedBy, []string{"1"}) {
			t.Errorf("task %s blockedBy %v", tk.ID, tk.BlockedBy)
		}
	}
	leftovers, _ := filepath.Glob(filepath.Join(env.Home, ".claude", "tasks", "sess-1", ".tmp-*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

func TestTaskListSessions(t *testing.T) {
	env := taskTestEnv(t)
	other := *env
	other.SessionID = "sess-2"
	sideRun(t, context.Background(), TaskCreate(), env, map[string]any{"subject": "mine", "description": "d"})
	r := sideRun(t, context.Background(), TaskList(), &other, map[string]any{})
	if r.Text() != "The task list is empty." {
		t.Errorf("another session sees %q", r.Text())
	}
	for id, want := range map[string]string{
		"":             "default",
		"abc-DEF_1.2":  "abc-DEF_1.2",
		"../x":         "..-x",
		"..":           "--",
		"a/b\\c d":     "a-b-c-d",
		"7f3c-uuid-ok": "7f3c-uuid-ok",
	} {
		dir, err := TaskListDir(&tool.Env{Home: "/h", SessionID: id})
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join("/h", ".claude", "tasks", want); dir != want {
			t.Errorf("session %q: %s, want %s", id, dir, want)
		}
	}
}

func TestTaskGetDamagedFile(t *testing.T) {
	env := taskTestEnv(t)
	dir, _ := TaskListDir(env)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "1.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := sideOutcomeOf(sideRun(t, context.Background(), TaskGet(), env, map[string]any{"taskId": "1"}))
	want := sideOutcome{Text: "The task list could not be accessed: task file " + filepath.Join(dir, "1.json") + " is damaged: unexpected end of JSON input", IsError: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// TaskList skips it, and TaskCreate does not reuse its id.
	if r := sideRun(t, context.Background(), TaskList(), env, map[string]any{}); r.Text() != "The task list is empty." {
		t.Errorf("list: %q", r.Text())
	}
	if r := sideRun(t, context.Background(), TaskCreate(), env, map[string]any{"subject": "s", "description": "d"}); r.Text() != "Task #2 created successfully: s" {
		t.Errorf("create: %q", r.Text())
	}
}
