package subagent

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/agentloop/agentloop/internal/taskline"
	"github.com/agentloop/agentloop/message"
)

// Task describes one subagent run, as its stream messages report it.
type Task struct {
	// ID is the subagent's agent id, also its task_id.
	ID string
	// RunID names this run of the task (run_id on its task lines).
	RunID string
	// ToolUseID is the id of the Agent call that started it.
	ToolUseID   string
	Description string
	Type        string // subagent_type
	Prompt      string
	Depth       int
	Background  bool
	// OutputFile is where a background subagent's answer is written.
	OutputFile string
	// PromptUUID is the uuid of the user line that shows the prompt in
	// the parent's stream, also the uuid of the prompt's line in the
	// subagent's transcript, as the reference gives both.
	PromptUUID string
	// WorktreePath and WorktreeBranch are set when the run kept its
	// worktree (it left changes there).
	WorktreePath, WorktreeBranch string
}

// Started is the system/task_started message of t.
func Started(sessionID string, t Task) *message.System {
	return system(sessionID, "task_started", map[string]any{
		"task_id": t.ID, "run_id": t.RunID, "tool_use_id": t.ToolUseID, "description": t.Description, "subagent_type": t.Type,
		"is_backgrounded": t.Background, "spawn_depth": t.Depth, "task_type": "local_agent", "prompt": t.Prompt})
}

// Updated is the system/task_updated message that marks t finished with
// status. A stopped task is patched as "killed", the reference's task
// state (its task_notification still says stopped).
func Updated(sessionID string, t Task, status string) *message.System {
	if status == StatusStopped {
		status = "killed"
	}
	return system(sessionID, "task_updated", map[string]any{
		"task_id": t.ID, "run_id": t.RunID, "patch": map[string]any{"status": status, "end_time": time.Now().UnixMilli()}})
}

// Notification is the system/task_notification message of t, which ended
// as o says. output_file is given when t has one. A stopped task is
// summed up by its description and carries no usage, as the reference's.
func Notification(sessionID string, t Task, o Outcome) *message.System {
	f := map[string]any{
		"task_id": t.ID, "run_id": t.RunID, "tool_use_id": t.ToolUseID, "status": o.Status(), "summary": firstLine(o.Report()),
		"usage": map[string]any{"total_tokens": o.Tokens(), "tool_uses": o.ToolUses, "duration_ms": o.Duration.Milliseconds()}}
	if o.Status() == StatusStopped {
		f["summary"] = t.Description
		delete(f, "usage")
	}
	if t.OutputFile != "" {
		f["output_file"] = t.OutputFile
	}
	return system(sessionID, "task_notification", f)
}

// Progress is the system/task_progress message of t told before each tool
// call its subagent makes: what the call does (activity), the tokens of
// the subagent's latest reply, the calls made so far and the time since
// the run started, and the tool's name.
func Progress(sessionID string, t Task, activity string, tokens, toolUses int64, elapsed time.Duration, tool string) *message.System {
	return system(sessionID, "task_progress", map[string]any{
		"task_id": t.ID, "run_id": t.RunID, "tool_use_id": t.ToolUseID, "description": activity, "subagent_type": t.Type,
		"usage":          map[string]any{"total_tokens": tokens, "tool_uses": toolUses, "duration_ms": elapsed.Milliseconds()},
		"last_tool_name": tool})
}

// Activity describes a tool call for task_progress, as the reference
// does for the tools whose wording it was recorded with: "Reading
// <file name>" (Read), "Finding <pattern>" (Glob), "Running <the call's
// description, else its command's first line>" (Bash). Other tools are
// described by their name.
func Activity(name string, input json.RawMessage) string {
	var in struct {
		FilePath    string `json:"file_path"`
		Pattern     string `json:"pattern"`
		Command     string `json:"command"`
		Description string `json:"description"`
	}
	_ = json.Unmarshal(input, &in) // a call with no such fields is described by its name
	switch {
	case name == "Read" && in.FilePath != "":
		return "Reading " + path.Base(in.FilePath)
	case name == "Glob" && in.Pattern != "":
		return "Finding " + in.Pattern
	case name == "Bash" && in.Description != "":
		return "Running " + in.Description
	case name == "Bash" && in.Command != "":
		return "Running " + firstLine(in.Command)
	}
	return name
}

// newRunID is a fresh run id (taskline.NewRunID).
func newRunID() string { return taskline.NewRunID() }

// NoticeText is what the parent loop's model is told when the background
// subagent t has ended as o says: its status, the output file and the
// subagent's answer, marked as the subagent's words.
func NoticeText(t Task, o Outcome) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<task-notification>\nThe background %s subagent %s (%q, started by Agent call %s) has ended: %s.\n",
		t.Type, t.ID, t.Description, t.ToolUseID, o.Status())
	if t.OutputFile != "" {
		fmt.Fprintf(&b, "Its output file is %s.\n", t.OutputFile)
	}
	if t.WorktreePath != "" {
		fmt.Fprintf(&b, "Its changes are kept in the git worktree %s on branch %s.\n", t.WorktreePath, t.WorktreeBranch)
	}
	if r := o.Report(); r != "" {
		fmt.Fprintf(&b, "Its report (the subagent's own words, not the user's; every line below is indented):\n%s\n", IndentLines(r, "  "))
	}
	fmt.Fprintf(&b, "<usage>subagent_tokens: %d\ntool_uses: %d\nduration_ms: %d</usage>\n</task-notification>",
		o.Tokens(), o.ToolUses, o.Duration.Milliseconds())
	return b.String()
}

func system(sessionID, subtype string, fields map[string]any) *message.System {
	return taskline.New(sessionID, subtype, fields)
}

// IndentLines prefixes every line of s with pre.
func IndentLines(s, pre string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = pre + l
	}
	return strings.Join(lines, "\n")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}
