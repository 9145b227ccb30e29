package permission

import (
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

var legacyToolNamesOnce lazy.Value[map[string]string] // the value of legacyToolNames, built at its first use

// legacyToolNames maps the reference's legacy tool names, accepted in
// rules and calls, to the current ones.
func legacyToolNames() map[string]string { return legacyToolNamesOnce.Get(newLegacyToolNames) }

func newLegacyToolNames() map[string]string {
	return map[string]string{
		"Task":               "Agent",
		"KillShell":          "TaskStop",
		"KillBash":           "TaskStop",
		"ListPeers":          "ListAgents",
		"Brief":              "SendUserMessage",
		"ListMcpResources":   "ListMcpResourcesTool",
		"ReadMcpResource":    "ReadMcpResourceTool",
		"ReadMcpResourceDir": "ReadMcpResourceDirTool",
		"ProposeGoal":        "SetGoal",
	}
}

// canonicalToolName maps a legacy name to the current one and normalizes
// the server part of an MCP tool name (characters outside [A-Za-z0-9_-]
// become '_').
func canonicalToolName(name string) string {
	if n, ok := legacyToolNames()[name]; ok {
		return n
	}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		server, tool, hasTool := strings.Cut(rest, "__")
		server = normalizeServer(server)
		if hasTool {
			return "mcp__" + server + "__" + tool
		}
		return "mcp__" + server
	}
	return name
}

func normalizeServer(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '*') {
			b[i] = '_'
		}
	}
	return string(b)
}

func isMCPTool(name string) bool { return strings.HasPrefix(name, "mcp__") }

// Tool classes.
const (
	classOther  = iota
	classShell  // Bash, Monitor: the command is analysed
	classRead   // Read, Glob, Grep, LSP: read a path
	classEdit   // Edit, Write, NotebookEdit, MultiEdit: write a path
	classFetch  // WebFetch
	classMCP    // mcp__server__tool
	classAsk    // needs a person: AskUserQuestion, ExitPlanMode
	classSafe   // built-ins that need no permission
	classPShell // PowerShell: not analysed
)

// toolClass says how a tool is judged.
func toolClass(name string) int {
	switch name {
	case "Bash", "Monitor":
		return classShell
	case "PowerShell":
		return classPShell
	case "Read", "Glob", "Grep", "LSP":
		return classRead
	case "Edit", "Write", "NotebookEdit", "MultiEdit":
		return classEdit
	case "WebFetch":
		return classFetch
	case "AskUserQuestion", "ExitPlanMode":
		return classAsk
	}
	if isMCPTool(name) {
		return classMCP
	}
	if safeTools()[name] {
		return classSafe
	}
	return classOther
}

var safeToolsOnce lazy.Value[map[string]bool] // the value of safeTools, built at its first use

// safeTools run without a prompt in every mode unless a rule says
// otherwise: they change nothing outside the session, or their effects are
// checked call by call (an Agent's own tool calls go through the checker).
func safeTools() map[string]bool { return safeToolsOnce.Get(newSafeTools) }

func newSafeTools() map[string]bool {
	return map[string]bool{
		"Agent": true, "TodoWrite": true, "TaskCreate": true, "TaskGet": true, "TaskUpdate": true,
		"TaskList": true, "TaskStop": true, "TaskOutput": true, "ToolSearch": true, "EnterPlanMode": true,
		"ListMcpResourcesTool": true, "ReadMcpResourceTool": true, "ReadMcpResourceDirTool": true,
		"StructuredOutput": true, "CronCreate": true, "CronDelete": true, "CronList": true,
		"ScheduleWakeup": true, "ListAgents": true, "ReportFindings": true, "Skill": true,
		"SendMessage": true, "SendUserMessage": true, "SetGoal": true, "WaitForMcpServers": true,
		"SubagentHandback": true,
	}
}

// pathField is the input field holding the path a file tool works on.
func pathField(tool string) string {
	switch tool {
	case "Read", "Edit", "Write", "MultiEdit":
		return "file_path"
	case "NotebookEdit":
		return "notebook_path"
	case "Glob", "Grep":
		return "path"
	case "LSP":
		return "filePath"
	}
	return ""
}

var primaryFieldsOnce lazy.Value[map[string]bool] // the value of primaryFields, built at its first use

// primaryFields may not be used in parameter rules (the reference ignores
// such rules with a warning).
func primaryFields() map[string]bool { return primaryFieldsOnce.Get(newPrimaryFields) }

func newPrimaryFields() map[string]bool {
	return map[string]bool{"command": true, "file_path": true, "path": true, "notebook_path": true, "url": true}
}

var paramKeysOnce lazy.Value[map[string]map[string]bool] // the value of paramKeys, built at its first use

// paramKeys lists, for tools whose specifier has another meaning, the
// input fields that a Tool(key:value) parameter rule may name. For other
// tools any identifier is a parameter key.
func paramKeys() map[string]map[string]bool { return paramKeysOnce.Get(newParamKeys) }

func newParamKeys() map[string]map[string]bool {
	return map[string]map[string]bool{
		"Bash":    {"run_in_background": true, "dangerouslyDisableSandbox": true, "description": true},
		"Monitor": {"description": true, "timeout_ms": true, "persistent": true},
		"Agent": {"description": true, "prompt": true, "subagent_type": true, "model": true, "effort": true,
			"run_in_background": true, "isolation": true, "name": true},
		"Skill":    {"args": true},
		"WebFetch": {"prompt": true, "offset": true},
	}
}
