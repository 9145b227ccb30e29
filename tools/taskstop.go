package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentloop/agentloop/tool"
)

//go:embed taskstop.md
var taskStopDescription string

const taskStopSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "task_id": {
      "description": "The ID of the background task to stop",
      "type": "string"
    },
    "shell_id": {
      "description": "Deprecated: use task_id instead",
      "type": "string"
    }
  },
  "additionalProperties": false
}`

type taskStopInput struct {
	TaskID  string `json:"task_id,omitempty"`
	ShellID string `json:"shell_id,omitempty"`
}

// TaskStopResult is the structured result (tool_use_result) of a successful
// TaskStop call.
type TaskStopResult struct {
	Message  string `json:"message"`
	TaskID   string `json:"task_id"`
	TaskType string `json:"task_type"` // "local_bash" for background shells, "local_agent" for subagents
	Command  string `json:"command,omitempty"`
}

// TaskStop returns the TaskStop tool, which stops a background shell of the
// session (see [BackgroundShells]), or a task of a registry attached to it
// (see [Shells.Attach]), by its task_id, or by shell_id, the older name of
// the same field.
func TaskStop() tool.Tool {
	return tool.New("TaskStop", taskStopDescription, runTaskStop, &tool.Options{
		Schema: json.RawMessage(taskStopSchema),
	})
}

func runTaskStop(ctx context.Context, in taskStopInput, call *tool.Call) (tool.Result, error) {
	id := in.TaskID
	if id == "" {
		id = in.ShellID
	}
	if id == "" {
		return tool.Error("Give the ID of the background task to stop in task_id."), nil
	}
	var env *tool.Env
	if call != nil {
		env = call.Env
	}
	shells := BackgroundShells(env)
	info, err := shells.Info(id)
	if err != nil {
		for _, o := range shells.attached() {
			res, found, err := o.StopTask(id)
			if !found {
				continue
			}
			if err != nil {
				return tool.Error(fmt.Sprintf("Cannot stop background task %s: %v", id, err)), nil
			}
			r := tool.Text(res.Message)
			r.Structured = res
			return r, nil
		}
		return tool.Error(fmt.Sprintf("No background task found with ID: %s", id)), nil
	}
	switch err := shells.Stop(id); {
	case errors.Is(err, ErrShellNotRunning):
		info, _ = shells.Info(id)
		how := fmt.Sprintf("it already exited with code %d", info.ExitCode)
		if info.Stopped {
			how = "it was already stopped"
		}
		return tool.Error(fmt.Sprintf("Background task %s is not running: %s.", id, how)), nil
	case err != nil:
		return tool.Error(fmt.Sprintf("Cannot stop background task %s: %v", id, err)), nil
	}
	msg := fmt.Sprintf("Stopped background task %s (%s)", id, info.Command)
	r := tool.Text(msg)
	r.Structured = TaskStopResult{Message: msg, TaskID: id, TaskType: "local_bash", Command: info.Command}
	return r, nil
}
