package acp

import (
	"encoding/json"
	"slices"

	sdk "github.com/coder/acp-go-sdk"
)

// plan mirrors the session's task list (TaskCreate, TaskUpdate) as an ACP
// plan.
type plan struct {
	ids   []string
	tasks map[string]*planTask
}

type planTask struct {
	subject string
	status  string
}

// apply records the effect of a successful call of tool name with input
// and structured output, and reports whether the plan changed.
func (p *plan) apply(name string, input json.RawMessage, output any) bool {
	switch name {
	case "TaskCreate":
		var out struct {
			Task struct {
				ID      string `json:"id"`
				Subject string `json:"subject"`
			} `json:"task"`
		}
		b, _ := json.Marshal(output)
		if json.Unmarshal(b, &out) != nil || out.Task.ID == "" {
			return false
		}
		if p.tasks == nil {
			p.tasks = map[string]*planTask{}
		}
		if _, ok := p.tasks[out.Task.ID]; !ok {
			p.ids = append(p.ids, out.Task.ID)
		}
		p.tasks[out.Task.ID] = &planTask{subject: out.Task.Subject, status: "pending"}
		return true
	case "TaskUpdate":
		var in struct {
			TaskID  string  `json:"taskId"`
			Subject *string `json:"subject"`
			Status  *string `json:"status"`
		}
		if json.Unmarshal(input, &in) != nil {
			return false
		}
		t := p.tasks[in.TaskID]
		if t == nil {
			return false
		}
		if in.Status != nil && *in.Status == "deleted" {
			delete(p.tasks, in.TaskID)
			p.ids = slices.DeleteFunc(p.ids, func(id string) bool { return id == in.TaskID })
			return true
		}
		if in.Subject != nil {
			t.subject = *in.Subject
		}
		if in.Status != nil {
			t.status = *in.Status
		}
		return in.Subject != nil || in.Status != nil
	}
	return false
}

// entries returns the plan's entries in the order the tasks were created.
func (p *plan) entries() []sdk.PlanEntry {
	out := []sdk.PlanEntry{}
	for _, id := range p.ids {
		t := p.tasks[id]
		status := sdk.PlanEntryStatusPending
		switch t.status {
		case "in_progress":
			status = sdk.PlanEntryStatusInProgress
		case "completed":
			status = sdk.PlanEntryStatusCompleted
		}
		out = append(out, sdk.PlanEntry{Content: t.subject, Priority: sdk.PlanEntryPriorityMedium, Status: status})
	}
	return out
}
