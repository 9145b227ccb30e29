package agentloop

// The foundation's minimal permission policy; replaced by
// internal/permission when the permission issue lands.

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Decision is the outcome for one call.
type minDecision struct {
	Allow      bool
	Message    string // for denials: what the model is told
	ReasonType string // mode or rule
}

// Policy is the configuration the decision depends on. It is read-only
// after construction and safe for concurrent use.
type minPolicy struct {
	Mode  string   // default, acceptEdits, plan, dontAsk, bypassPermissions, auto
	Allow []string // allow rules: "Bash", "Write", "Bash(npm test:*)", "Bash(git status)"
	Dirs  []string // working directory first, then additional directories
}

// fileTools change files named by their file_path (or notebook_path) input.
var fileTools = map[string]bool{"Edit": true, "Write": true, "NotebookEdit": true, "MultiEdit": true}

// Check decides on a call of toolName with input; readOnly is the tool's
// own annotation.
func (p *minPolicy) Check(toolName string, input json.RawMessage, readOnly bool) minDecision {
	if p.Mode == "bypassPermissions" {
		return minDecision{Allow: true, ReasonType: "mode"}
	}
	var in struct {
		Command      string `json:"command"`
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
	}
	_ = json.Unmarshal(input, &in)
	for _, r := range p.Allow {
		if ruleMatches(r, toolName, in.Command) {
			return minDecision{Allow: true, ReasonType: "rule"}
		}
	}
	if readOnly {
		return minDecision{Allow: true, ReasonType: "mode"}
	}
	if toolName == "Bash" && readOnlyCommand(in.Command) {
		return minDecision{Allow: true, ReasonType: "mode"}
	}
	path := in.FilePath
	if path == "" {
		path = in.NotebookPath
	}
	if p.Mode == "acceptEdits" && fileTools[toolName] && p.inside(path) {
		return minDecision{Allow: true, ReasonType: "mode"}
	}
	switch {
	case fileTools[toolName]:
		return minDecision{ReasonType: "mode", Message: fmt.Sprintf(
			"Permission to write to %s has not been granted, and there is no one to ask in this session. "+
				"The user can allow it with --allowedTools %s or --permission-mode acceptEdits.", path, toolName)}
	case toolName == "Bash":
		return minDecision{ReasonType: "mode", Message: fmt.Sprintf(
			"The command %q needs approval, and there is no one to ask in this session. "+
				"The user can allow it with an allow rule such as --allowedTools 'Bash(%s:*)'.", in.Command, firstWord(in.Command))}
	default:
		return minDecision{ReasonType: "mode", Message: fmt.Sprintf(
			"Permission to use %s has not been granted, and there is no one to ask in this session. "+
				"The user can allow it with --allowedTools %s.", toolName, toolName)}
	}
}

// inside reports whether path lies in one of the policy's directories.
func (p *minPolicy) inside(path string) bool {
	if path == "" || !filepath.IsAbs(path) {
		return false
	}
	path = filepath.Clean(path)
	for _, d := range p.Dirs {
		rel, err := filepath.Rel(d, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// ruleMatches implements the rule forms of the foundation: a bare tool
// name, and Bash(cmd) / Bash(prefix:*) / Bash(prefix *) for commands that
// contain no shell operators.
func ruleMatches(rule, toolName, command string) bool {
	name, spec, hasSpec := strings.Cut(rule, "(")
	if strings.TrimSpace(name) != toolName {
		return false
	}
	if !hasSpec {
		return true
	}
	spec = strings.TrimSuffix(spec, ")")
	if toolName != "Bash" || hasShellOperators(command) {
		return false
	}
	command = strings.TrimSpace(command)
	switch {
	case strings.HasSuffix(spec, ":*"):
		prefix := strings.TrimSuffix(spec, ":*")
		return command == prefix || strings.HasPrefix(command, prefix+" ")
	case strings.HasSuffix(spec, " *"):
		prefix := strings.TrimSuffix(spec, " *")
		return command == prefix || strings.HasPrefix(command, prefix+" ")
	case spec == "*":
		return true
	default:
		return command == spec
	}
}

// readOnlyCommands never change anything by themselves.
var readOnlyCommands = map[string]bool{
	"echo": true, "pwd": true, "ls": true, "cat": true, "head": true, "tail": true, "wc": true,
	"grep": true, "rg": true, "which": true, "whoami": true, "date": true, "true": true, "false": true,
	"printf": true, "stat": true, "file": true, "basename": true, "dirname": true, "uname": true,
	"id": true, "realpath": true, "env": false, "tree": true, "du": true, "df": true, "diff": true,
}

// ReadOnlyCommand reports whether a shell command is a single read-only
// command with no operators, redirections or expansions.
func readOnlyCommand(cmd string) bool {
	cmd = strings.TrimSpace(cmd)
	if cmd == "" || hasShellOperators(cmd) {
		return false
	}
	return readOnlyCommands[firstWord(cmd)]
}

func hasShellOperators(cmd string) bool {
	return strings.ContainsAny(cmd, ";&|<>`$(){}\n\\*?[~!")
}

func firstWord(cmd string) string {
	f := strings.Fields(cmd)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}
