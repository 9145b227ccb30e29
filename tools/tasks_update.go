package tools

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

//go:embed taskupdate.md
var taskUpdateDescription string

const taskUpdateSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "taskId": {"description": "The id of the task to change.", "type": "string"},
    "subject": {"description": "A new title for the task.", "type": "string"},
    "description": {"description": "A new description for the task.", "type": "string"},
    "activeForm": {"description": "A new present-continuous form of the subject, shown while the task is in progress.", "type": "string"},
    "status": {"description": "The new status: pending, in_progress or completed; deleted removes the task.", "anyOf": [{"type": "string", "enum": ["pending", "in_progress", "completed"]}, {"type": "string"}]},
    "addBlocks": {"description": "Ids of tasks that cannot start until this one is completed.", "type": "array", "items": {"type": "string"}},
    "addBlockedBy": {"description": "Ids of tasks that must be completed before this one can start.", "type": "array", "items": {"type": "string"}},
    "owner": {"description": "Who works on the task.", "type": "string"},
    "metadata": {"description": "Keys to merge into the task's metadata; a key set to null is removed.", "type": "object", "properties": {}, "additionalProperties": {}}
  },
  "required": ["taskId"],
  "additionalProperties": false
}`

// taskDeleted is the status that removes a task.
const taskDeleted = "deleted"

type taskUpdateInput struct {
	TaskID       string         `json:"taskId"`
	Subject      *string        `json:"subject,omitempty"`
	Description  *string        `json:"description,omitempty"`
	ActiveForm   *string        `json:"activeForm,omitempty"`
	Status       *string        `json:"status,omitempty"`
	AddBlocks    []string       `json:"addBlocks,omitempty"`
	AddBlockedBy []string       `json:"addBlockedBy,omitempty"`
	Owner        *string        `json:"owner,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
}

// TaskUpdateResult is the tool_use_result of a TaskUpdate call.
type TaskUpdateResult struct {
	Success bool   `json:"success"`
	TaskID  string `json:"taskId"`
	// UpdatedFields names the fields that changed: subject, description,
	// activeForm, owner, metadata, status, blocks, blockedBy, or deleted.
	UpdatedFields []string          `json:"updatedFields"`
	Error         string            `json:"error,omitempty"`
	StatusChange  *TaskStatusChange `json:"statusChange,omitempty"`
}

// TaskStatusChange is a task's status before and after an update.
type TaskStatusChange struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// TaskUpdate returns the TaskUpdate tool, which changes a task of the
// session's task list: its fields, its status (status "deleted" removes it,
// and every reference to it), and the dependencies between tasks. Adding
// "blocks" to one task adds the matching "blockedBy" to the other.
func TaskUpdate() tool.Tool {
	return tool.New("TaskUpdate", taskUpdateDescription, runTaskUpdate, &tool.Options{
		Schema: json.RawMessage(taskUpdateSchema),
	})
}

// taskUpdateFailure is a failed update, reported with a structured result.
func taskUpdateFailure(id, text, short string) tool.Result {
	r := tool.Error(text)
	r.Structured = TaskUpdateResult{TaskID: id, UpdatedFields: []string{}, Error: short}
	return r
}

func runTaskUpdate(ctx context.Context, in taskUpdateInput, call *tool.Call) (tool.Result, error) {
	id, ok := taskID(in.TaskID)
	if !ok {
		return taskUpdateFailure(in.TaskID, taskNoSuch(in.TaskID), "Task not found"), nil
	}
	if in.Status != nil {
		switch *in.Status {
		case TaskPending, TaskInProgress, TaskCompleted, taskDeleted:
		default:
			return taskUpdateFailure(id, fmt.Sprintf("%q is not a task status: use pending, in_progress or completed (or deleted to remove the task).", *in.Status), "Invalid status"), nil
		}
	}
	if in.Subject != nil && strings.TrimSpace(*in.Subject) == "" {
		return taskUpdateFailure(id, "subject must not be empty.", "Empty subject"), nil
	}
	s, err := taskStoreOf(call.Env)
	if err != nil {
		return taskStorageError(err), nil
	}
	var r tool.Result
	err = s.locked(func() error {
		var err error
		r, err = taskApplyUpdate(s, id, in)
		return err
	})
	if err != nil {
		return taskStorageError(err), nil
	}
	return r, nil
}

// taskApplyUpdate does the update; the store's lock is held.
func taskApplyUpdate(s *taskStore, id string, in taskUpdateInput) (tool.Result, error) {
	t, err := s.load(id)
	if err != nil {
		return tool.Result{}, err
	}
	if t == nil {
		return taskUpdateFailure(id, taskNoSuch(in.TaskID), "Task not found"), nil
	}
	res := TaskUpdateResult{Success: true, TaskID: id, UpdatedFields: []string{}}

	if in.Status != nil && *in.Status == taskDeleted {
		if err := taskUnlink(s, id); err != nil {
			return tool.Result{}, err
		}
		if err := s.remove(id); err != nil {
			return tool.Result{}, err
		}
		res.UpdatedFields = append(res.UpdatedFields, taskDeleted)
		res.StatusChange = &TaskStatusChange{From: t.Status, To: taskDeleted}
		r := tool.Text(fmt.Sprintf("Task #%s deleted.", id))
		r.Structured = res
		return r, nil
	}

	// Check the dependencies before changing anything.
	others := map[string]*TaskItem{}
	resolve := func(field string, refs []string) (ids []string, msg string) {
		for _, ref := range refs {
			oid, ok := taskID(ref)
			if !ok {
				return nil, fmt.Sprintf("%s: %s", field, taskNoSuch(ref))
			}
			if oid == id {
				return nil, fmt.Sprintf("%s: task #%s cannot depend on itself.", field, id)
			}
			if others[oid] == nil {
				o, err := s.load(oid)
				if err != nil || o == nil {
					return nil, fmt.Sprintf("%s: %s", field, taskNoSuch(ref))
				}
				others[oid] = o
			}
			if !slices.Contains(ids, oid) {
				ids = append(ids, oid)
			}
		}
		return ids, ""
	}
	blocks, msg := resolve("addBlocks", in.AddBlocks)
	if msg != "" {
		return taskUpdateFailure(id, msg, "Task not found"), nil
	}
	blockedBy, msg := resolve("addBlockedBy", in.AddBlockedBy)
	if msg != "" {
		return taskUpdateFailure(id, msg, "Task not found"), nil
	}

	field := func(name string, dst *string, v *string) {
		if v != nil && *v != *dst {
			*dst = *v
			res.UpdatedFields = append(res.UpdatedFields, name)
		}
	}
	if in.Subject != nil {
		v := strings.TrimSpace(*in.Subject)
		field("subject", &t.Subject, &v)
	}
	field("description", &t.Description, in.Description)
	field("activeForm", &t.ActiveForm, in.ActiveForm)
	field("owner", &t.Owner, in.Owner)
	if in.Metadata != nil {
		md := taskMetadata(t.Metadata, in.Metadata)
		if !reflect.DeepEqual(md, t.Metadata) {
			t.Metadata = md
			res.UpdatedFields = append(res.UpdatedFields, "metadata")
		}
	}
	from := t.Status
	field("status", &t.Status, in.Status)
	if t.Status != from {
		res.StatusChange = &TaskStatusChange{From: from, To: t.Status}
	}

	changed := map[string]bool{}
	link := func(name string, mine *[]string, ids []string, theirs func(*TaskItem) *[]string) {
		added := false
		for _, oid := range ids {
			if !slices.Contains(*mine, oid) {
				*mine = append(*mine, oid)
				added = true
			}
			if list := theirs(others[oid]); !slices.Contains(*list, id) {
				*list = append(*list, id)
				changed[oid] = true
			}
		}
		if added {
			res.UpdatedFields = append(res.UpdatedFields, name)
		}
	}
	link("blocks", &t.Blocks, blocks, func(o *TaskItem) *[]string { return &o.BlockedBy })
	link("blockedBy", &t.BlockedBy, blockedBy, func(o *TaskItem) *[]string { return &o.Blocks })

	for oid := range changed {
		if err := s.save(others[oid]); err != nil {
			return tool.Result{}, err
		}
	}
	if len(res.UpdatedFields) > 0 {
		if err := s.save(t); err != nil {
			return tool.Result{}, err
		}
	}

	var text string
	if len(res.UpdatedFields) == 0 {
		text = fmt.Sprintf("Task #%s already matched the update; nothing changed.", id)
	} else {
		text = fmt.Sprintf("Updated task #%s: %s.", id, strings.Join(res.UpdatedFields, ", "))
		if res.StatusChange != nil {
			text += fmt.Sprintf(" Its status went from %s to %s.", res.StatusChange.From, res.StatusChange.To)
		}
		if t.Status == TaskCompleted && res.StatusChange != nil {
			if free, err := taskFreed(s, t); err == nil && len(free) > 0 {
				text += fmt.Sprintf(" Now free to start: %s.", taskRefs(free))
			}
		}
	}
	r := tool.Text(text)
	r.Structured = res
	return r, nil
}

// taskFreed lists the tasks that done blocks and that wait for nothing else
// that is not completed.
func taskFreed(s *taskStore, done *TaskItem) ([]string, error) {
	var free []string
	for _, oid := range done.Blocks {
		o, err := s.load(oid)
		if err != nil {
			return nil, err
		}
		if o == nil || o.Status == TaskCompleted {
			continue
		}
		ready := true
		for _, w := range o.BlockedBy {
			if w == done.ID {
				continue
			}
			if wt, err := s.load(w); err == nil && wt != nil && wt.Status != TaskCompleted {
				ready = false
				break
			}
		}
		if ready {
			free = append(free, oid)
		}
	}
	return free, nil
}

// taskUnlink removes every reference to id from the other tasks.
func taskUnlink(s *taskStore, id string) error {
	all, err := s.all()
	if err != nil {
		return err
	}
	for i := range all {
		o := &all[i]
		if o.ID == id {
			continue
		}
		nb := slices.DeleteFunc(slices.Clone(o.Blocks), func(x string) bool { return x == id })
		nbb := slices.DeleteFunc(slices.Clone(o.BlockedBy), func(x string) bool { return x == id })
		if len(nb) != len(o.Blocks) || len(nbb) != len(o.BlockedBy) {
			o.Blocks, o.BlockedBy = nb, nbb
			if err := s.save(o); err != nil {
				return err
			}
		}
	}
	return nil
}
