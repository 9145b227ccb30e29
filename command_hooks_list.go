package agentloop

import "slices"

// SlashCommand describes a slash command a prompt can invoke: the
// reference's SlashCommand, as its supportedCommands() returns them.
type SlashCommand struct {
	// Name is the command's name, without the slash.
	Name string `json:"name"`
	// Description says what it does: a file command's description
	// (else its first line), a skill's description.
	Description string `json:"description"`
	// ArgumentHint shows what the command expects after its name (a
	// file command's argument-hint).
	ArgumentHint string `json:"argumentHint"`
	// Aliases are other names of the same command.
	Aliases []string `json:"aliases,omitempty"`
	// Builtin marks the commands agentloop itself runs.
	Builtin bool `json:"builtin,omitempty"`
}

// SupportedCommands lists the slash commands a prompt of this
// conversation can invoke: the built-in /compact and /clear, then the file
// commands of .claude/commands and the skills (a skill a file command of
// the same name shadows is left out), in the order of init's
// slash_commands.
func (c *Client) SupportedCommands() []SlashCommand { return c.sess.supportedCommands() }

// supportedCommands builds SupportedCommands' list.
func (s *session) supportedCommands() []SlashCommand {
	out := []SlashCommand{
		{Name: "compact", Description: "Replace the conversation so far with a summary, to free context",
			ArgumentHint: "<optional instructions for the summary>", Builtin: true},
		{Name: "clear", Description: "Start a new conversation, with a new session id",
			Aliases: slices.Clone(builtinAliases), Builtin: true},
	}
	for _, c := range s.files.commands {
		out = append(out, SlashCommand{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
	}
	for _, sk := range s.files.skills {
		if !slices.ContainsFunc(out, func(c SlashCommand) bool { return c.Name == sk.Name }) {
			out = append(out, SlashCommand{Name: sk.Name, Description: sk.Description})
		}
	}
	return out
}
