package acp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// toolUse is a tool call announced to the editor.
type toolUse struct {
	name  string
	input json.RawMessage
	view  toolView
}

// toolView is how the editor shows a tool call.
type toolView struct {
	kind      sdk.ToolKind
	title     string
	locations []sdk.ToolCallLocation
	// content is the call's content before it runs: the diff of an edit.
	content []sdk.ToolCallContent
}

// toolInput is the union of the input fields the views use.
type toolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Path         string `json:"path"`
	Offset       *int   `json:"offset"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
	Content      string `json:"content"`
	Edits        []struct {
		OldString string `json:"old_string"`
		NewString string `json:"new_string"`
	} `json:"edits"`
	Command     string `json:"command"`
	Description string `json:"description"`
	Pattern     string `json:"pattern"`
	URL         string `json:"url"`
	Query       string `json:"query"`
	Subject     string `json:"subject"`
	Prompt      string `json:"prompt"`
}

// viewOf returns the view of a call of tool name with input, in cwd.
// Write's diff holds the file's current text, read with read (nil: from
// disk) when the call is announced, so that the editor shows what
// changes.
func viewOf(name string, input json.RawMessage, cwd string, read func(string) ([]byte, error)) toolView {
	if read == nil {
		read = os.ReadFile
	}
	var in toolInput
	_ = json.Unmarshal(input, &in)
	abs := func(p string) string {
		if p == "" || filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(cwd, p)
	}
	// show is a path as titles show it: relative to cwd inside it.
	show := func(p string) string {
		if r, err := filepath.Rel(cwd, abs(p)); err == nil && cwd != "" && filepath.IsLocal(r) {
			return r
		}
		return p
	}
	loc := func(p string, line *int) []sdk.ToolCallLocation {
		if p == "" {
			return nil
		}
		return []sdk.ToolCallLocation{{Path: abs(p), Line: line}}
	}
	switch name {
	case "Read":
		return toolView{kind: sdk.ToolKindRead, title: "Read " + show(in.FilePath), locations: loc(in.FilePath, in.Offset)}
	case "Edit":
		return toolView{kind: sdk.ToolKindEdit, title: "Edit " + show(in.FilePath), locations: loc(in.FilePath, nil),
			content: []sdk.ToolCallContent{sdk.ToolDiffContent(abs(in.FilePath), in.NewString, in.OldString)}}
	case "MultiEdit":
		v := toolView{kind: sdk.ToolKindEdit, title: "Edit " + show(in.FilePath), locations: loc(in.FilePath, nil)}
		for _, e := range in.Edits {
			v.content = append(v.content, sdk.ToolDiffContent(abs(in.FilePath), e.NewString, e.OldString))
		}
		return v
	case "Write":
		p := abs(in.FilePath)
		var diff sdk.ToolCallContent
		if old, err := read(p); err == nil && p != "" {
			diff = sdk.ToolDiffContent(p, in.Content, string(old))
		} else {
			diff = sdk.ToolDiffContent(p, in.Content)
		}
		return toolView{kind: sdk.ToolKindEdit, title: "Write " + show(in.FilePath), locations: loc(in.FilePath, nil),
			content: []sdk.ToolCallContent{diff}}
	case "NotebookEdit":
		return toolView{kind: sdk.ToolKindEdit, title: "Edit " + show(in.NotebookPath), locations: loc(in.NotebookPath, nil)}
	case "Bash":
		v := toolView{kind: sdk.ToolKindExecute, title: "`" + in.Command + "`"}
		if in.Description != "" {
			v.content = []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(in.Description))}
		}
		return v
	case "Glob":
		return toolView{kind: sdk.ToolKindSearch, title: "Find " + in.Pattern, locations: loc(in.Path, nil)}
	case "Grep":
		return toolView{kind: sdk.ToolKindSearch, title: "Search for " + in.Pattern, locations: loc(in.Path, nil)}
	case "WebFetch":
		return toolView{kind: sdk.ToolKindFetch, title: "Fetch " + in.URL}
	case "WebSearch":
		return toolView{kind: sdk.ToolKindFetch, title: "Search the web for " + in.Query}
	case "TaskCreate", "TaskUpdate", "TaskGet", "TaskList", "TodoWrite":
		return toolView{kind: sdk.ToolKindThink, title: name}
	case "Agent", "Task":
		return toolView{kind: sdk.ToolKindThink, title: "Agent: " + in.Description}
	case "ExitPlanMode":
		return toolView{kind: sdk.ToolKindSwitchMode, title: "Leave plan mode"}
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, _ := strings.Cut(rest, "__")
		return toolView{kind: sdk.ToolKindOther, title: server + ": " + tool}
	}
	return toolView{kind: sdk.ToolKindOther, title: name}
}

// startTool announces a tool call, once.
func (s *session) startTool(ctx context.Context, id, name string, input json.RawMessage) {
	s.mu.Lock()
	if _, ok := s.tools[id]; ok {
		s.mu.Unlock()
		return
	}
	u := toolUse{name: name, input: input, view: viewOf(name, input, s.cwd, s.fileReader(ctx))}
	s.tools[id] = u
	s.mu.Unlock()
	s.update(ctx, sdk.StartToolCall(sdk.ToolCallId(id), u.view.title,
		sdk.WithStartKind(u.view.kind), sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartLocations(u.view.locations), sdk.WithStartContent(u.view.content),
		sdk.WithStartRawInput(rawJSON(input))))
}

// endTool reports a tool call's result, and the plan when a task tool
// changed it.
func (s *session) endTool(ctx context.Context, id string, failed bool, text string, output any) {
	s.mu.Lock()
	u, ok := s.tools[id]
	delete(s.tools, id)
	term, inTerminal := s.terminals[id]
	delete(s.terminals, id)
	changed := ok && !failed && s.plan.apply(u.name, u.input, output)
	entries := s.plan.entries()
	s.mu.Unlock()
	status := sdk.ToolCallStatusCompleted
	if failed {
		status = sdk.ToolCallStatusFailed
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status)}
	if output != nil {
		opts = append(opts, sdk.WithUpdateRawOutput(output))
	}
	// An edit keeps its diff unless it failed; other calls show their
	// output.
	switch {
	case inTerminal:
		// The terminal, released now, still shows what the command
		// printed; a failure adds what the model was told.
		content := []sdk.ToolCallContent{sdk.ToolTerminalRef(term)}
		if failed && text != "" {
			content = append(content, sdk.ToolContent(sdk.TextBlock(text)))
		}
		opts = append(opts, sdk.WithUpdateContent(content))
	case (failed || !ok || u.view.kind != sdk.ToolKindEdit) && text != "":
		opts = append(opts, sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(text))}))
	}
	s.update(ctx, sdk.UpdateToolCall(sdk.ToolCallId(id), opts...))
	if changed {
		s.update(ctx, sdk.UpdatePlan(entries...))
	}
}

// rawJSON returns input as a value that marshals to the same JSON.
func rawJSON(input json.RawMessage) any {
	if len(input) == 0 {
		return nil
	}
	return input
}
