package conversation

import "slices"

// SlashCommand is agentloop.SlashCommand as the session reads it; the fields are
// documented there.
type SlashCommand struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	ArgumentHint string   `json:"argumentHint"`
	Aliases      []string `json:"aliases,omitempty"`
	Builtin      bool     `json:"builtin,omitempty"`
}

// SupportedCommands is agentloop's Client.SupportedCommands; see its doc there.
func (c *Client) SupportedCommands() []SlashCommand { return c.sess.supportedCommands() }

// supportedCommands builds SupportedCommands' list.
func (s *Session) supportedCommands() []SlashCommand {
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
