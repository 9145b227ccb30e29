package permission

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// Condition is a rule used as a filter rather than as a permission: a
// hook's "if" field. It is written as a permission rule is, Tool or
// Tool(content), and a tool call matches it when the call is of that
// tool and, with content, a deny rule of that text would catch the call.
// Deny rules are the model because they are the checker's fail-closed
// reading: a compound command matches when any of its parts does, a
// command whose words cannot all be known may match, and a bare path
// pattern ("src/**") matches at any depth.
type Condition struct {
	// Value is the rule as parsed (legacy tool names mapped).
	Value RuleValue
	text  string
	note  string // why the content cannot be evaluated, when it cannot
}

// ConditionResult is the outcome of testing a call against a Condition.
type ConditionResult uint8

// The results of Condition.Match.
const (
	// ConditionNoMatch: the call is not of the condition's tool, or the
	// content does not match it.
	ConditionNoMatch ConditionResult = iota
	// ConditionMatch: the call matches.
	ConditionMatch
	// ConditionUnknown: the call cannot be judged (a command the shell
	// parser cannot read, text run as code, a word whose value is not
	// known, content the checker does not evaluate) and might match.
	ConditionUnknown
	// ConditionUntested: the condition could not be tested at all (a
	// file path with no working directory or home directory to resolve
	// it against, a path pattern with no base directory).
	ConditionUntested
)

// String names the result, for messages.
func (r ConditionResult) String() string {
	switch r {
	case ConditionNoMatch:
		return "no match"
	case ConditionMatch:
		return "match"
	case ConditionUnknown:
		return "unknown"
	case ConditionUntested:
		return "untested"
	}
	return fmt.Sprintf("ConditionResult(%d)", uint8(r))
}

// ConditionCall is the tool call a Condition is tested against.
type ConditionCall struct {
	Tool  string          // the tool's name (MCP tools by their full name)
	Input json.RawMessage // the tool's input object
	// Cwd is the absolute working directory that relative paths (and
	// "./" patterns) are resolved against; "" means none.
	Cwd string
	// Home is the directory "~" stands for; "" means os.UserHomeDir.
	Home string
}

// ParseCondition reads a condition: a permission rule as ParseRule reads
// it. Content the checker has no matcher for (a tool that takes no
// specifier, PowerShell commands) is accepted; Note then says why, and
// Match reports ConditionUnknown for every call of the tool.
func ParseCondition(s string) (Condition, error) {
	v, err := ParseRule(s)
	if err != nil {
		return Condition{}, fmt.Errorf("condition %q: %w", s, err)
	}
	c := Condition{Value: v, text: v.String()}
	// A trial compile, with placeholder bases, finds content that is
	// malformed or that the checker never evaluates.
	r, err := compileRule(v, Deny, SourceSession, pathBases{cwd: "/", home: "/"}, false)
	switch {
	case err != nil:
		return Condition{}, fmt.Errorf("condition %q: %w", s, err)
	case r.kind == kindInert:
		c.note = strings.TrimPrefix(r.Warning, "rule "+v.String()+" is ignored: ")
	case r.kind == kindOpaque:
		c.note = v.ToolName + " content is not evaluated by the permission checker"
	}
	return c, nil
}

// String is the condition in rule form.
func (c Condition) String() string { return c.text }

// Note says why the condition's content cannot be evaluated; "" when it
// can.
func (c Condition) Note() string { return c.note }

// Match tests call against the condition. The tool names must match as
// permission rules match them (exactly, after legacy names are mapped; a
// rule naming an MCP server, mcp__server, or a tool-name glob covers the
// tools it names). Without content every call of the tool matches. With
// content the tool's permission matcher decides, as for a deny rule of
// that text; the reason says why a call was not judged (for
// ConditionUnknown and ConditionUntested).
func (c Condition) Match(call ConditionCall) (ConditionResult, string) {
	if c.text == "" {
		return ConditionUntested, "empty condition"
	}
	tool := canonicalToolName(call.Tool)
	if !c.namesTool(tool) {
		return ConditionNoMatch, ""
	}
	content := strings.TrimSpace(c.Value.RuleContent)
	if content == "" || content == "*" {
		return ConditionMatch, ""
	}
	if c.note != "" {
		return ConditionUnknown, c.note
	}
	cwd := call.Cwd
	if !filepath.IsAbs(cwd) {
		cwd = ""
	}
	home := call.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	if home != "" {
		home = filepath.Clean(home)
	}
	var input map[string]json.RawMessage
	if json.Unmarshal(call.Input, &input) != nil {
		input = nil
	}
	class := toolClass(tool)
	if class == classRead || class == classEdit {
		raw := stringField(input, pathField(tool))
		if raw == "" && (tool == "Glob" || tool == "Grep") {
			raw = cwd
		}
		if raw == "" {
			return ConditionUntested, "the call names no path"
		}
		if _, err := absolute(cwd, home, raw); err != nil {
			return ConditionUntested, err.Error()
		}
	}
	st := &state{
		mode: ModeDefault,
		home: home,
		fold: runtime.GOOS == "darwin" || runtime.GOOS == "windows",
		rules: RuleSet{Sources: []SourceRules{{Source: SourceSession,
			Deny: []string{c.text}}}},
	}
	if cwd != "" {
		st.dirs = []string{filepath.Clean(cwd)}
	}
	if err := st.rebuild(); err != nil || len(st.compiled) != 1 {
		why := "the condition does not compile here"
		if err != nil {
			why = err.Error()
		}
		return ConditionUntested, why
	}
	judgeCwd := st.cwd()
	if judgeCwd == "" {
		judgeCwd = "/"
	}
	v := st.judge(tool, input, &Call{Tool: tool, Input: call.Input}, judgeCwd)
	if v.rule == nil || v.rule != st.compiled[0] {
		return ConditionNoMatch, ""
	}
	if v.b == Deny {
		return ConditionMatch, ""
	}
	// The checker would ask rather than deny: it cannot tell whether the
	// rule matches (v.msg words that for a permission prompt).
	return ConditionUnknown, "the call cannot be fully judged against " + c.text + " (part of it is unknown until it runs)"
}

// namesTool reports whether the condition's tool name covers tool.
func (c Condition) namesTool(tool string) bool {
	rt := c.Value.ToolName
	if strings.Contains(rt, "*") {
		return newWildcard(rt).match(tool)
	}
	if rt == tool {
		return true
	}
	if isMCPTool(rt) && !strings.Contains(strings.TrimPrefix(rt, "mcp__"), "__") {
		return strings.HasPrefix(tool, rt+"__")
	}
	return false
}
