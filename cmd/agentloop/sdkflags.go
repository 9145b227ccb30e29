package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/vocab"
)

// sdkFlags are the fields of config set by the flags of sdkFlagDefs.
type sdkFlags struct {
	inputFormat          string                   // --input-format: "text" or "stream-json" (streamjson.go)
	permissionPromptTool string                   // --permission-prompt-tool: "stdio" or an MCP tool name
	awaitInit            bool                     // --await-initialize
	replayUser           bool                     // --replay-user-messages
	initOnly             []string                 // stream-json-only flags given with text input, for the warning
	thinkingDisplay      string                   // --thinking-display
	skipPermissions      bool                     // --dangerously-skip-permissions
	appendSystemFile     string                   // --append-system-prompt-file
	permissionPrompts    string                   // --permission-prompts: host or none
	emptySystemPrompt    bool                     // --system-prompt "" (the Python SDK's default)
	agent                string                   // --agent
	taskBudget           int                      // --task-budget
	resumeAt             string                   // --resume-session-at
	resumeDropsTurn      string                   // --resume-drops-turn
	betas                []string                 // --betas
	forwardSubagentText  bool                     // --forward-subagent-text
	plugins              []agentloop.PluginConfig // --plugin-dir, --plugin-dir-no-mcp (repeatable)
}

// sdkFlagDefs are the flags the official Agent SDKs put on the command
// line when they spawn their engine (wire-protocol.md §3), beyond the
// ones of flagDefs. Each is either honoured, refused with an error that
// names it (its feature is missing and running without it would do
// something else than asked), or accepted with a warning on stderr (its
// feature is missing but running without it changes nothing the caller
// relies on). None is ignored in silence. docs/design.md, "Wire protocol
// groundwork", lists the decisions.
var sdkFlagDefs = []flagDef{
	{[]string{"--input-format"}, kString, "text (the default) or stream-json: JSON lines of the Agent SDKs' control protocol (with --output-format stream-json)", func(c *config, v string) error {
		switch v {
		case "text", "stream-json":
			c.sdk.inputFormat = v
			return nil
		}
		return fmt.Errorf("--input-format %q: want text or stream-json", v)
	}},
	{[]string{"--thinking-display"}, kString, "{thinking displays} (with --thinking adaptive or --max-thinking-tokens)", func(c *config, v string) error {
		d, err := vocab.ParseThinkingDisplay(v)
		if err != nil {
			return fmt.Errorf("--thinking-display: %w", err)
		}
		c.sdk.thinkingDisplay = string(d)
		return nil
	}},
	{[]string{"--dangerously-skip-permissions"}, kBool, "the same as --permission-mode bypassPermissions", func(c *config, _ string) error {
		c.sdk.skipPermissions = true
		return nil
	}},
	{[]string{"--allow-dangerously-skip-permissions"}, kBool, "allow switching to bypassPermissions (always allowed here)", func(*config, string) error { return nil }},
	{[]string{"--append-system-prompt-file"}, kString, "add a file's text to the system prompt", func(c *config, v string) error { c.sdk.appendSystemFile = v; return nil }},
	{[]string{"--plugin-dir"}, kString, "load the local plugin in this directory (repeatable)", func(c *config, v string) error { return addPlugin(c, "--plugin-dir", v, false) }},
	{[]string{"--plugin-dir-no-mcp"}, kString, "load the local plugin in this directory without its MCP servers (repeatable)", func(c *config, v string) error { return addPlugin(c, "--plugin-dir-no-mcp", v, true) }},
	{[]string{"--permission-prompts"}, kString, "host or none: calls that need approval are refused without asking either way in print mode", func(c *config, v string) error {
		switch v {
		case "host", "none":
			c.sdk.permissionPrompts = v
			return nil
		}
		return fmt.Errorf("--permission-prompts %q: want host or none", v)
	}},

	// Refused: without the feature the run would not be the one asked for.
	{[]string{"--permission-prompt-tool"}, kString, "stdio: ask the host for permission (can_use_tool, with --input-format stream-json); mcp__server__tool: ask that MCP tool", func(c *config, v string) error {
		if v != "stdio" && !strings.HasPrefix(v, "mcp__") {
			return fmt.Errorf("--permission-prompt-tool %q: want stdio or an MCP tool name (mcp__server__tool)", v)
		}
		c.sdk.permissionPromptTool = v
		return nil
	}},
	{[]string{"--agent"}, kString, "run the main thread as this agent (from --agents or .claude/agents)", func(c *config, v string) error {
		if v == "" {
			return errors.New("--agent: want an agent name")
		}
		c.sdk.agent = v
		return nil
	}},
	{[]string{"--task-budget"}, kString, "a task budget in tokens, sent to the API (beta)", func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return fmt.Errorf("--task-budget %q: want a positive number of tokens", v)
		}
		c.sdk.taskBudget = n
		return nil
	}},
	{[]string{"--resume-session-at"}, kString, "with --resume, keep the conversation up to this message uuid", func(c *config, v string) error {
		c.sdk.resumeAt = v
		return nil
	}},
	{[]string{"--resume-drops-turn"}, kString, "with --resume-session-at, refuse the resume unless all it drops is this prompt's turn", func(c *config, v string) error {
		c.sdk.resumeDropsTurn = v
		return nil
	}},
	{[]string{"--session-mirror"}, kBool, "not supported yet", func(*config, string) error {
		return refuse("--session-mirror", "transcript_mirror frames are not written")
	}},
	{[]string{"--project-config-root"}, kString, "not supported yet", func(*config, string) error {
		return refuse("--project-config-root", "project settings are read from the working directory only")
	}},
	{[]string{"--managed-settings"}, kString, "not supported yet", func(*config, string) error {
		return refuse("--managed-settings", "managed settings come only from the managed-settings file")
	}},

	// Accepted with a warning: nothing the caller relies on is lost.
	{[]string{"--await-initialize"}, kBool, "with stream-json input, wait for initialize before running user messages", func(c *config, _ string) error {
		c.sdk.awaitInit = true
		return initOnly(c, "--await-initialize")
	}},
	{[]string{"--initialize-fields"}, kList, "with stream-json input, the fields initialize delivers (each is honoured as it comes)", func(c *config, _ string) error {
		return initOnly(c, "--initialize-fields")
	}},
	{[]string{"--managed-settings-in-initialize"}, kBool, "with stream-json input, managed settings come in initialize (not applied: managed_settings_applied is false)", func(c *config, _ string) error {
		return initOnly(c, "--managed-settings-in-initialize")
	}},
	{[]string{"--replay-user-messages"}, kBool, "with stream-json input, echo each user message accepted", func(c *config, _ string) error {
		c.sdk.replayUser = true
		return initOnly(c, "--replay-user-messages")
	}},
	{[]string{"--betas"}, kList, "beta names sent as anthropic-beta headers (comma-separated)", func(c *config, v string) error { c.sdk.betas = append(c.sdk.betas, splitList(v)...); return nil }},
	{[]string{"--forward-subagent-text"}, kBool, "show subagents' text and thinking in the stream, not only their tool calls", func(c *config, _ string) error {
		c.sdk.forwardSubagentText = true
		return nil
	}},
	{[]string{"--prompt-suggestions"}, kOptBool, "true (without a value) or false; true is ignored, with a warning", func(c *config, v string) error {
		switch v {
		case "", "true", "1", "yes", "on":
			return ignore(c, "--prompt-suggestions", "prompt suggestions are not made")
		}
		return nil // off: none are made
	}},
	{[]string{"--channels"}, kString, "ignored, with a warning", func(c *config, _ string) error { return ignore(c, "--channels", "channels are not supported") }},
}

// envFileCheckpointing is set by the TypeScript SDK when its caller asks
// for file checkpointing (enableFileCheckpointing); it turns on
// Options.EnableFileCheckpointing. The other variables
// the SDKs set (CLAUDE_CODE_ENTRYPOINT, CLAUDE_AGENT_SDK_VERSION, …) ask
// for nothing a text-input run could do differently, but for
// CLAUDE_CODE_SDK_READS_SESSION_STATE, which turns on the stream's
// session_state_changed lines (streamjson.go).
const envFileCheckpointing = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"

// errUnsupported marks a flag whose feature agentloop does not have yet.
var errUnsupported = errors.New("not supported yet")

// The setters of sdkFlagDefs and refFlagDefs are function literals that
// capture nothing, so that the tables are laid out by the compiler and
// cost the process nothing at start-up; these helpers do their work.

// refuse is the error of a flag that is refused: it names the flag and
// says what is missing.
func refuse(name, why string) error {
	return fmt.Errorf("%s is %w: %s", name, errUnsupported, why)
}

// addPlugin is the setter of --plugin-dir and --plugin-dir-no-mcp (name):
// each occurrence adds a plugin (Options.Plugins), checked when the
// session starts.
func addPlugin(c *config, name, dir string, skipMCP bool) error {
	if dir == "" {
		return fmt.Errorf("%s: want a plugin directory", name)
	}
	c.sdk.plugins = append(c.sdk.plugins, agentloop.PluginConfig{Path: dir, SkipMCP: skipMCP})
	return nil
}

// ignore is the setter of a flag that is accepted and not honoured: it
// adds one warning, however often the flag is given.
func ignore(c *config, name, why string) error {
	warnOnce(c, fmt.Sprintf("%s is ignored: %s", name, why)) // refflags.go
	return nil
}

// initOnly notes a flag that only matters with stream-json input; with
// text input it is warned about once the command line is read.
func initOnly(c *config, name string) error {
	if !slices.Contains(c.sdk.initOnly, name) {
		c.sdk.initOnly = append(c.sdk.initOnly, name)
	}
	return nil
}

// checkSDKFlags checks the flags of sdkFlagDefs against the others once
// the whole command line is read.
func (c *config) checkSDKFlags() error {
	if c.sdk.inputFormat == "stream-json" {
		if c.outputFormat != "stream-json" {
			return errors.New("--input-format stream-json needs --output-format stream-json")
		}
		if c.hasPrompt || c.promptFile != "" {
			return errors.New("--input-format stream-json takes no prompt argument: user messages come on stdin")
		}
	} else {
		if c.sdk.permissionPromptTool == "stdio" {
			return errors.New("--permission-prompt-tool stdio needs --input-format stream-json: there is no host to ask")
		}
		for _, name := range c.sdk.initOnly {
			c.warnings = append(c.warnings, fmt.Sprintf("%s is ignored: it only matters with --input-format stream-json", name))
		}
	}
	if c.sdk.skipPermissions {
		if c.mode != "" && c.mode != string(vocab.PermissionBypass) {
			return fmt.Errorf("--dangerously-skip-permissions and --permission-mode %s contradict each other", c.mode)
		}
		c.mode = string(vocab.PermissionBypass)
	}
	if c.sdk.appendSystemFile != "" && c.appendSystem != "" {
		return errors.New("give --append-system-prompt or --append-system-prompt-file, not both")
	}
	if c.sdk.resumeDropsTurn != "" && c.sdk.resumeAt == "" {
		return errors.New("--resume-drops-turn needs --resume-session-at")
	}
	if c.sdk.thinkingDisplay != "" && c.thinking != string(vocab.ThinkingAdaptive) && c.maxThinking == 0 {
		c.warnings = append(c.warnings, "--thinking-display is ignored: it goes with --thinking adaptive or --max-thinking-tokens")
	}
	return nil
}

// applySDKFlags sets the options of the flags of sdkFlagDefs; o already
// holds those of the others.
func (c *config) applySDKFlags(o *agentloop.Options) error {
	o.Agent = c.sdk.agent
	if t := c.sdk.permissionPromptTool; t != "" && t != "stdio" {
		o.PermissionPromptTool = t
	}
	o.ResumeSessionAt, o.ResumeDropsTurn = c.sdk.resumeAt, c.sdk.resumeDropsTurn
	o.Betas = c.sdk.betas
	o.Plugins = append(o.Plugins, c.sdk.plugins...)
	if c.sdk.taskBudget > 0 {
		o.TaskBudget = &agentloop.TaskBudget{Total: c.sdk.taskBudget}
	}
	if c.sdk.emptySystemPrompt && c.systemPromptF == "" && o.SystemPrompt == "" {
		o.EmptySystemPrompt = true
	}
	if c.sdk.appendSystemFile != "" {
		b, err := os.ReadFile(c.sdk.appendSystemFile)
		if err != nil {
			return fmt.Errorf("reading the --append-system-prompt-file file: %w", err)
		}
		o.AppendSystemPrompt = string(b)
	}
	if d := c.sdk.thinkingDisplay; d != "" {
		switch {
		case o.Thinking != nil && o.Thinking.Type == agentloop.ThinkingAdaptive:
			o.Thinking.Display = d
		case o.MaxThinkingTokens > 0:
			o.Thinking = &agentloop.ThinkingConfig{Type: agentloop.ThinkingEnabled, BudgetTokens: o.MaxThinkingTokens, Display: d}
			o.MaxThinkingTokens = 0
		}
	}
	if os.Getenv(envFileCheckpointing) == "true" {
		o.EnableFileCheckpointing = true // the library reads the variable too; this makes it explicit
	}
	return nil
}
