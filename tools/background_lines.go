package tools

import (
	"time"

	"github.com/agentloop/agentloop/internal/taskline"
	"github.com/agentloop/agentloop/message"
)

// BackgroundTask is one task of a session's live background set, as a
// system/background_tasks_changed line lists it.
type BackgroundTask struct {
	TaskID       string `json:"task_id"`
	RunID        string `json:"run_id,omitempty"`
	TaskType     string `json:"task_type"` // "local_bash" or "local_agent"
	SubagentType string `json:"subagent_type,omitempty"`
	Description  string `json:"description"`
}

// LiveTasks is implemented by an [OtherTasks] registry that can list its
// running background tasks, so that they join the shells' in
// [Shells.Live].
type LiveTasks interface {
	LiveTasks() []BackgroundTask
}

// TaskEmitter puts a message into the stream of the session a background
// task belongs to: the function internal/engine.Emitter returns to the
// call that started the task. It is safe for concurrent use; messages
// emitted while no run of the session is in progress are dropped.
type TaskEmitter func(message.Message)

// Live returns the session's running background tasks: its shells, then
// the tasks of attached registries that list theirs ([LiveTasks]), each
// in the order it started.
func (s *Shells) Live() []BackgroundTask {
	s.mu.Lock()
	var live []*bgShell
	for _, sh := range s.shells {
		if sh.running() {
			live = append(live, sh)
		}
	}
	others := append([]OtherTasks(nil), s.others...)
	s.mu.Unlock()
	sortShells(live)
	out := make([]BackgroundTask, 0, len(live))
	for _, sh := range live {
		out = append(out, sh.task())
	}
	for _, o := range others {
		if l, ok := o.(LiveTasks); ok {
			out = append(out, l.LiveTasks()...)
		}
	}
	return out
}

// EmitLive emits a system/background_tasks_changed line with s's live set
// ([Shells.Live]) through emit, when emit is not nil. Registries attached
// to s call it when one of their tasks starts or ends.
func (s *Shells) EmitLive(emit TaskEmitter) {
	if emit != nil {
		emit(BackgroundTasksChanged(s.session, s.Live()))
	}
}

// BackgroundTasksChanged is the system/background_tasks_changed line of a
// session whose live background set is now tasks (the whole set: a
// client replaces what it showed).
func BackgroundTasksChanged(sessionID string, tasks []BackgroundTask) *message.System {
	if tasks == nil {
		tasks = []BackgroundTask{}
	}
	return taskline.New(sessionID, "background_tasks_changed", map[string]any{"tasks": tasks})
}

// task is sh as the live set lists it.
func (sh *bgShell) task() BackgroundTask {
	return BackgroundTask{TaskID: sh.info.ID, RunID: sh.runID, TaskType: "local_bash", Description: sh.what()}
}

// what names the shell in its lines: the call's description, else its
// command.
func (sh *bgShell) what() string {
	if sh.description != "" {
		return sh.description
	}
	return sh.info.Command
}

// startedLines are the lines that tell the session's stream sh started:
// the live set with it, then its task_started.
func (s *Shells) startedLines(sh *bgShell) {
	if sh.emit == nil {
		return
	}
	s.EmitLive(sh.emit)
	sh.emit(taskline.New(s.session, "task_started", map[string]any{
		"task_id": sh.info.ID, "run_id": sh.runID, "tool_use_id": sh.toolUseID, "description": sh.what(),
		"is_backgrounded": true, "task_type": "local_bash"}))
}

// endedLines are the lines that tell the session's stream sh ended with
// status and summary: its task_updated and task_notification, then the
// live set without it.
func (s *Shells) endedLines(sh *bgShell, status, summary string) {
	if sh.emit == nil {
		return
	}
	patch := status
	if patch == "stopped" {
		patch = "killed"
	}
	sh.emit(taskline.New(s.session, "task_updated", map[string]any{
		"task_id": sh.info.ID, "run_id": sh.runID, "patch": map[string]any{"status": patch, "end_time": time.Now().UnixMilli()}}))
	sh.emit(taskline.New(s.session, "task_notification", map[string]any{
		"task_id": sh.info.ID, "run_id": sh.runID, "tool_use_id": sh.toolUseID, "status": status,
		"output_file": sh.info.StdoutPath, "summary": summary}))
	s.EmitLive(sh.emit)
}
