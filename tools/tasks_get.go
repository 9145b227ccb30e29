package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

//go:embed taskget.md
var taskGetDescription string

const taskGetSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "taskId": {"description": "The id of the task to show, as TaskCreate or TaskList gave it (for example \"3\").", "type": "string"}
  },
  "required": ["taskId"],
  "additionalProperties": false
}`

type taskGetInput struct {
	TaskID string `json:"taskId"`
}

// TaskGetResult is the tool_use_result of a TaskGet call.
type TaskGetResult struct {
	Task TaskItem `json:"task"`
}

// TaskGet returns the TaskGet tool, which shows one task of the session's
// task list in full. It only reads.
func TaskGet() tool.Tool {
	return tool.New("TaskGet", taskGetDescription, runTaskGet, &tool.Options{
		ReadOnly: true,
		Schema:   json.RawMessage(taskGetSchema),
	})
}

func runTaskGet(ctx context.Context, in taskGetInput, call *tool.Call) (tool.Result, error) {
	id, ok := taskID(in.TaskID)
	if !ok {
		return tool.Error(taskNoSuch(in.TaskID)), nil
	}
	s, err := taskStoreOf(call.Env)
	if err != nil {
		return taskStorageError(err), nil
	}
	var t *TaskItem
	var all []TaskItem
	err = s.locked(func() error {
		var err error
		if t, err = s.load(id); err != nil || t == nil {
			return err
		}
		all, err = s.all()
		return err
	})
	if err != nil {
		return taskStorageError(err), nil
	}
	if t == nil {
		return tool.Error(taskNoSuch(in.TaskID)), nil
	}
	status := map[string]string{}
	for _, o := range all {
		status[o.ID] = o.Status
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task #%s: %s\n", t.ID, t.Subject)
	fmt.Fprintf(&b, "Status: %s\n", t.Status)
	if t.Owner != "" {
		fmt.Fprintf(&b, "Owner: %s\n", t.Owner)
	}
	if len(t.BlockedBy) > 0 {
		refs := make([]string, len(t.BlockedBy))
		for i, id := range t.BlockedBy {
			refs[i] = "#" + id
			if st := status[id]; st != "" {
				refs[i] += " (" + st + ")"
			}
		}
		fmt.Fprintf(&b, "Waits for: %s\n", strings.Join(refs, ", "))
	}
	if len(t.Blocks) > 0 {
		fmt.Fprintf(&b, "Must finish before: %s\n", taskRefs(t.Blocks))
	}
	b.WriteString("Description:\n")
	b.WriteString(t.Description)
	r := tool.Text(strings.TrimRight(b.String(), "\n"))
	r.Structured = TaskGetResult{Task: *t}
	return r, nil
}

func taskNoSuch(id string) string {
	return fmt.Sprintf("There is no task %q. Use TaskList to see the ids of the tasks.", id)
}
