package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

//go:embed taskcreate.md
var taskCreateDescription string

const taskCreateSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "subject": {"description": "A short title for the task, in the imperative (\"Add input validation\").", "type": "string"},
    "description": {"description": "What needs to be done, in enough detail to do it later without guessing, including how to tell it is done.", "type": "string"},
    "activeForm": {"description": "The subject in the present continuous (\"Adding input validation\"), shown while the task is in progress.", "type": "string"},
    "metadata": {"description": "Any further data to keep with the task.", "type": "object", "properties": {}, "additionalProperties": {}}
  },
  "required": ["subject", "description"],
  "additionalProperties": false
}`

type taskCreateInput struct {
	Subject     string         `json:"subject"`
	Description string         `json:"description"`
	ActiveForm  string         `json:"activeForm,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// TaskCreateResult is the tool_use_result of a TaskCreate call.
type TaskCreateResult struct {
	Task TaskCreated `json:"task"`
}

// TaskCreated names the task just created.
type TaskCreated struct {
	ID      string `json:"id"`
	Subject string `json:"subject"`
}

// TaskCreate returns the TaskCreate tool, which adds a pending task to the
// session's task list (see [TaskListDir]). Tasks are numbered 1, 2, … in
// the order they are created; ids of deleted tasks are not reused.
func TaskCreate() tool.Tool {
	return tool.New("TaskCreate", taskCreateDescription, runTaskCreate, &tool.Options{
		Schema: json.RawMessage(taskCreateSchema),
	})
}

func runTaskCreate(ctx context.Context, in taskCreateInput, call *tool.Call) (tool.Result, error) {
	subject := strings.TrimSpace(in.Subject)
	if subject == "" {
		return tool.Error("subject must not be empty: give the task a short title."), nil
	}
	s, err := taskStoreOf(call.Env)
	if err != nil {
		return taskStorageError(err), nil
	}
	t := &TaskItem{
		Subject: subject, Description: in.Description, ActiveForm: strings.TrimSpace(in.ActiveForm),
		Status: TaskPending, Metadata: taskMetadata(nil, in.Metadata),
	}
	err = s.locked(func() error {
		id, err := s.nextID()
		if err != nil {
			return err
		}
		t.ID = id
		return s.save(t)
	})
	if err != nil {
		return taskStorageError(err), nil
	}
	r := tool.Text(fmt.Sprintf("Task #%s created successfully: %s", t.ID, t.Subject))
	r.Structured = TaskCreateResult{Task: TaskCreated{ID: t.ID, Subject: t.Subject}}
	return r, nil
}

// taskMetadata merges patch into md: a null value removes its key. It
// returns nil for an empty result.
func taskMetadata(md, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range md {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
