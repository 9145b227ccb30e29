package conversation

import (
	"context"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/internal/projectfiles"
)

// The built-in slash commands: the reference's commands that mean
// something to an engine with no terminal of its own (docs/interop.md,
// "Slash commands", lists the others and why they are left out). Each is
// honoured in one of three ways:
//
//   - the engine's own: /compact and /clear (internal/engine's
//     compaction);
//   - local: the command runs in the session, prints a text and makes no
//     model call (local_commands.go, engine.LocalOutput);
//   - prompt: the command expands to instructions for the model, as a
//     file command does (builtin_prompts.go); a file command or skill of
//     the same name replaces it, as the user's files replace the
//     reference's bundled skills.
//
// The list is what init's slash_commands, the initialize answer's
// commands and ACP's available_commands_update advertise, in this order,
// before the file commands and skills.

// commandKind says how a built-in command is honoured.
type commandKind int

const (
	kindEngine commandKind = iota // /compact, /clear: the engine runs them
	kindLocal                     // runs in the session, prints its output
	kindPrompt                    // expands to a prompt for the model
)

// builtinCommand is one built-in slash command.
type builtinCommand struct {
	name, description, argumentHint string
	aliases                         []string
	kind                            commandKind
	// local runs a local command: it returns the text to print and the
	// messages to emit before it.
	local func(s *Session, ctx context.Context, args string) localOut
	// prompt is a prompt command's text for the model, args filled in.
	prompt func(s *Session, args string) string
}

// localOut is what a local command printed, and the messages it emits
// before that.
type localOut = engine.LocalOutput

var builtinsOnce lazy.Value[[]builtinCommand] // the value of builtins, built at its first use

// builtins returns the catalogue, in the order it is advertised. It is
// built at the first call, not at start-up by every process (and not by a
// variable's initialiser: the commands refer to functions that read it).
func builtins() []builtinCommand { return builtinsOnce.Get(builtinTable) }

// builtinTable builds the catalogue.
func builtinTable() []builtinCommand {
	return []builtinCommand{
		{name: "compact", kind: kindEngine, argumentHint: "<optional instructions for the summary>",
			description: "Replace the conversation so far with a summary, to free context"},
		{name: "clear", kind: kindEngine, aliases: []string{"reset", "new"},
			description: "Start a new conversation, with a new session id"},
		{name: "context", kind: kindLocal, local: (*Session).contextCommand,
			description: "Show what fills the context window, by category"},
		{name: "usage", kind: kindLocal, aliases: []string{"cost", "stats"}, local: (*Session).usageCommand,
			description: "Show the session's cost, durations and tokens by model"},
		{name: "model", kind: kindLocal, argumentHint: "[model]", local: (*Session).modelCommand,
			description: "Show the model, or switch to another for the rest of the session"},
		{name: "effort", kind: kindLocal, argumentHint: "[low|medium|high|xhigh|max|auto]", local: (*Session).effortCommand,
			description: "Show the effort level, or set it for the rest of the session"},
		{name: "mcp", kind: kindLocal, argumentHint: "[reconnect|enable|disable [<server>|all]]", local: (*Session).mcpCommand,
			description: "List the MCP servers, or reconnect, enable or disable them"},
		{name: "agents", kind: kindLocal, local: (*Session).agentsCommand,
			description: "List the agents the Agent tool can start"},
		{name: "rename", kind: kindLocal, argumentHint: "<name>", aliases: []string{"name"}, local: (*Session).renameCommand,
			description: "Give the session a title"},
		{name: "reload-skills", kind: kindLocal, local: (*Session).reloadSkillsCommand,
			description: "Read the skills, commands and agents of the .claude directories again"},
		{name: "init", kind: kindPrompt, prompt: initPrompt,
			description: "Write a CLAUDE.md file that documents the codebase for later sessions"},
		{name: "code-review", kind: kindPrompt, argumentHint: "[target]", prompt: codeReviewPrompt,
			description: "Review the pending changes (or a given target) for bugs"},
		{name: "security-review", kind: kindPrompt, prompt: securityReviewPrompt,
			description: "Review the pending changes for security problems"},
		{name: "simplify", kind: kindPrompt, argumentHint: "[target]", prompt: simplifyPrompt,
			description: "Simplify the changed code without changing what it does, then apply the fixes"},
	}
}

// builtinNamed finds the built-in command name (or one of its aliases)
// names.
func builtinNamed(name string) (*builtinCommand, bool) {
	all := builtins()
	for i := range all {
		if b := &all[i]; b.name == name || slices.Contains(b.aliases, name) {
			return b, true
		}
	}
	return nil, false
}

// reservedCommand reports whether a file command of this name is left
// out: the engine's and the local commands (and their aliases) always
// win; a prompt command gives way to the user's file.
func reservedCommand(name string) bool {
	b, ok := builtinNamed(name)
	return ok && b.kind != kindPrompt
}

// localCommand is the engine's LocalCommand: it runs prompt when it names
// a local built-in command.
func (s *Session) localCommand(ctx context.Context, prompt string) (engine.LocalOutput, bool) {
	name, args, ok := projectfiles.ParseInvocation(prompt)
	if !ok {
		return engine.LocalOutput{}, false
	}
	b, ok := builtinNamed(name)
	if !ok || b.kind != kindLocal {
		return engine.LocalOutput{}, false
	}
	out := b.local(s, ctx, args)
	out.Name, out.Args = b.name, args
	out.Text = strings.TrimRight(out.Text, "\n")
	return out, true
}

// IsLocalCommand reports whether prompt, a user message of one text,
// runs a local built-in command (/context, /model, …), which makes no
// model call. The reference does not echo such a prompt
// (--replay-user-messages); the stream-json driver does not either.
func IsLocalCommand(prompt string) bool { return isLocalCommand(prompt) }

// isLocalCommand reports whether prompt runs a local built-in command.
func isLocalCommand(prompt string) bool {
	name, _, ok := projectfiles.ParseInvocation(prompt)
	if !ok {
		return false
	}
	b, ok := builtinNamed(name)
	return ok && b.kind == kindLocal
}

// builtinPromptCommand finds the prompt command a prompt "/name args"
// names, when no file command or skill of that name replaces it.
func (s *Session) builtinPromptCommand(name string) (*builtinCommand, bool) {
	b, ok := builtinNamed(name)
	if !ok || b.kind != kindPrompt {
		return nil, false
	}
	return b, true
}

// BuiltinCommandNames are the names of the built-in slash commands, in
// the order they are advertised.
func BuiltinCommandNames() []string {
	all := builtins()
	out := make([]string, len(all))
	for i, b := range all {
		out[i] = b.name
	}
	return out
}
