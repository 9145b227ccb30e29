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

// supportedCommands builds SupportedCommands' list: the built-in
// commands (builtin_commands.go), then the file commands and the skills
// (a prompt "/name" loads a skill too). A file command or skill that
// replaces a built-in prompt command is listed in its place.
func (s *Session) supportedCommands() []SlashCommand {
	var out []SlashCommand
	for _, b := range builtins() {
		out = append(out, SlashCommand{Name: b.name, Description: b.description, ArgumentHint: b.argumentHint,
			Aliases: slices.Clone(b.aliases), Builtin: true})
	}
	add := func(c SlashCommand) {
		if i := slices.IndexFunc(out, func(o SlashCommand) bool { return o.Name == c.Name }); i >= 0 {
			if out[i].Builtin {
				out[i] = c // a file replaces a built-in prompt command (reserved names never load)
			}
			return
		}
		out = append(out, c)
	}
	for _, c := range s.files.commands {
		add(SlashCommand{Name: c.Name, Description: c.Description, ArgumentHint: c.ArgumentHint})
	}
	for _, sk := range s.files.skills {
		add(SlashCommand{Name: sk.Name, Description: sk.Description})
	}
	return out
}
