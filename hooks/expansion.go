package hooks

import (
	"context"
)

// UserPromptExpansion is the event of a prompt that names a command
// ("/name args") about to be expanded into the text the model gets.
const UserPromptExpansion Event = "UserPromptExpansion"

// UserPromptExpansionInput is sent when a user's "/name args" prompt is
// about to be replaced by the text of a slash command or a skill.
// Matchers match CommandName.
type UserPromptExpansionInput struct {
	Base
	// ExpansionType is slash_command (or mcp_prompt, which agentloop
	// does not produce).
	ExpansionType string `json:"expansion_type"`
	// CommandName is the name without its slash ("review",
	// "frontend:lint").
	CommandName string `json:"command_name"`
	// CommandArgs is the text after the name, trimmed.
	CommandArgs string `json:"command_args"`
	// CommandSource is where the command comes from: project or user
	// (the settings source of its .claude directory).
	CommandSource string `json:"command_source,omitempty"`
	// Prompt is the prompt as the user typed it.
	Prompt string `json:"prompt"`
}

// EventName is UserPromptExpansion.
func (UserPromptExpansionInput) EventName() Event { return UserPromptExpansion }

func (in UserPromptExpansionInput) target() string { return in.CommandName }

// UserPromptExpansionResult is the merged outcome of the
// UserPromptExpansion hooks of one prompt.
type UserPromptExpansionResult struct {
	Common
	// Blocked is set when a hook exited 2, returned decision:"block",
	// timed out or was cancelled: the command must not run (its text is
	// not sent), and Reason is for the user.
	Blocked bool
	Reason  string
	// AdditionalContext is for the model, next to the expanded prompt.
	AdditionalContext []string
	// SuppressOriginalPrompt asks that the prompt as typed not be
	// displayed.
	SuppressOriginalPrompt bool
}

// UserPromptExpansion runs the UserPromptExpansion hooks before a
// command's text replaces the prompt; matchers match the command name.
func (d *Dispatcher) UserPromptExpansion(ctx context.Context, in UserPromptExpansionInput) UserPromptExpansionResult {
	d.fill(&in.Base, UserPromptExpansion)
	runs := d.dispatch(ctx, in)
	res := UserPromptExpansionResult{Common: d.common(UserPromptExpansion, runs), AdditionalContext: d.contexts(runs, true)}
	res.Blocked, res.Reason = d.promptBlocks(runs)
	for _, r := range runs {
		if h := specific(r); h != nil {
			res.SuppressOriginalPrompt = res.SuppressOriginalPrompt || h.SuppressOriginalPrompt
		}
	}
	return res
}
