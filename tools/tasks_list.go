package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

//go:embed tasklist.md
var taskListDescription string

const taskListSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {},
  "additionalProperties": false
}`

// TaskListResult is the tool_use_result of a TaskList call.
type TaskListResult struct {
	Tasks []TaskSummary `json:"tasks"`
}

// TaskSummary is one task as TaskList shows it. BlockedBy lists only the
// tasks it waits for that are not completed yet.
type TaskSummary struct {
	ID        string   `json:"id"`
	Subject   string   `json:"subject"`
	Status    string   `json:"status"`
	Owner     string   `json:"owner,omitempty"`
	BlockedBy []string `json:"blockedBy"`
}

// TaskList returns the TaskList tool, which lists the tasks of the
// session's task list with their status. It only reads.
func TaskList() tool.Tool {
	return tool.New("TaskList", taskListDescription, runTaskList, &tool.Options{
		ReadOnly: true,
		Schema:   json.RawMessage(taskListSchema),
	})
}

func runTaskList(ctx context.Context, _ struct{}, call *tool.Call) (tool.Result, error) {
	all, err := Tasks(call.Env)
	if err != nil {
		return taskStorageError(err), nil
	}
	done := map[string]bool{}
	for _, t := range all {
		done[t.ID] = t.Status == TaskCompleted
	}
	res := TaskListResult{Tasks: []TaskSummary{}}
	var b strings.Builder
	for _, t := range all {
		open := []string{}
		for _, id := range t.BlockedBy {
			if d, exists := done[id]; exists && !d {
				open = append(open, id)
			}
		}
		res.Tasks = append(res.Tasks, TaskSummary{ID: t.ID, Subject: t.Subject, Status: t.Status, Owner: t.Owner, BlockedBy: open})
		fmt.Fprintf(&b, "#%s [%s] %s", t.ID, t.Status, t.Subject)
		if t.Owner != "" {
			fmt.Fprintf(&b, " (owner: %s)", t.Owner)
		}
		if len(open) > 0 {
			fmt.Fprintf(&b, " (waits for %s)", taskRefs(open))
		}
		b.WriteString("\n")
	}
	text := strings.TrimSuffix(b.String(), "\n")
	if len(all) == 0 {
		text = "The task list is empty."
	}
	r := tool.Text(text)
	r.Structured = res
	return r, nil
}
