package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/pricing"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// The local built-in commands (builtin_commands.go). Each runs on the
// loop's goroutine at the start of a run, before any model call, and
// prints a text for the user; what it prints joins the history (the model
// sees it on its next request) and ends the run as its result. A command
// given arguments it cannot use prints why, with its usage: that is its
// output, not a failure of the run.

// contextCommand is /context: the context usage by category.
func (s *Session) contextCommand(ctx context.Context, _ string) localOut {
	u, err := s.ContextUsage(ctx)
	if err != nil {
		return localOut{Text: fmt.Sprintf("The context could not be measured: %v", err)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Context usage\n\n**Model:** %s  \n**Tokens:** %s of %s (%.0f%%)\n\n", u.Model,
		shortTokens(u.TotalTokens), shortTokens(u.MaxTokens), u.Percentage)
	b.WriteString("| Category | Tokens | Share of the window |\n|---|---|---|\n")
	for _, c := range u.Categories {
		share := 0.0
		if u.MaxTokens > 0 {
			share = float64(c.Tokens) * 100 / float64(u.MaxTokens)
		}
		fmt.Fprintf(&b, "| %s | %s | %.1f%% |\n", c.Name, shortTokens(c.Tokens), share)
	}
	if u.IsAutoCompactEnabled {
		fmt.Fprintf(&b, "\nThe conversation is compacted when it reaches %s tokens.\n", shortTokens(u.AutoCompactThreshold))
	}
	return localOut{Text: b.String()}
}

// shortTokens writes a token count as 950, 9.7k or 1.2m.
func shortTokens(n int64) string {
	switch {
	case n >= 1_000_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e6), ".0") + "m"
	case n >= 1_000:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/1e3), ".0") + "k"
	}
	return fmt.Sprint(n)
}

// usageCommand is /usage (/cost, /stats): the session's cost and tokens.
func (s *Session) usageCommand(context.Context, string) localOut {
	cost, byModel := s.engine().Totals()
	var b strings.Builder
	fmt.Fprintf(&b, "Total cost: $%.4f\n", cost)
	if len(byModel) == 0 {
		b.WriteString("No model was called yet.")
		return localOut{Text: b.String()}
	}
	b.WriteString("Usage by model:\n")
	for _, id := range slices.Sorted(maps.Keys(byModel)) {
		u := byModel[id]
		fmt.Fprintf(&b, "  %s: %d input, %d output, %d cache read, %d cache write tokens ($%.4f)\n",
			id, u.InputTokens, u.OutputTokens, u.CacheReadInputTokens, u.CacheCreationInputTokens, u.CostUSD)
	}
	return localOut{Text: b.String()}
}

// modelCommand is /model [name]: it shows the model, or switches to name
// ("default": the model the session started with) from the next request
// on.
func (s *Session) modelCommand(_ context.Context, args string) localOut {
	usage := fmt.Sprintf("Usage: /model <model>: an alias (%s), default, or a model id.", strings.Join(pricing.Aliases(), ", "))
	if args == "" {
		return localOut{Text: fmt.Sprintf("Current model: %s\n%s", s.engine().Model(), usage)}
	}
	target := args
	if strings.EqualFold(args, "default") {
		target = s.opts.Model
	}
	if err := s.modelAllowed(pricing.Resolve(target), "/model"); err != nil { // managed_policy.go
		return localOut{Text: fmt.Sprintf("The model was not changed: %v", err)}
	}
	id := pricing.Resolve(target)
	s.engine().SetModel(id)
	return localOut{Text: fmt.Sprintf("Model set to %s for the rest of this session", id)}
}

// effortCommand is /effort [level]: it shows the effort, or sets it
// ("auto": the API's default) from the next request on.
func (s *Session) effortCommand(_ context.Context, args string) localOut {
	usage := fmt.Sprintf("Usage: /effort <%s|auto>", strings.Join(vocab.Efforts.Strings(), "|"))
	switch {
	case args == "":
		cur := s.engine().Effort()
		if cur == "" {
			cur = "auto (the model's default)"
		}
		return localOut{Text: fmt.Sprintf("Effort: %s\n%s", cur, usage)}
	case strings.EqualFold(args, "auto"):
		s.engine().SetEffort("")
		return localOut{Text: "Effort set to auto (the model's default) for the rest of this session"}
	case vocab.Efforts.Contains(strings.ToLower(args)):
		s.engine().SetEffort(strings.ToLower(args))
		return localOut{Text: fmt.Sprintf("Effort set to %s for the rest of this session", strings.ToLower(args))}
	}
	return localOut{Text: fmt.Sprintf("Unknown effort level %q.\n%s", args, usage)}
}

// mcpCommand is /mcp [reconnect|enable|disable [server|all]]: the MCP
// servers' states, or an action on one server or all of them.
func (s *Session) mcpCommand(ctx context.Context, args string) localOut {
	usage := "Usage: /mcp [reconnect|enable|disable [<server>|all]]; without a server name, all of them."
	f := strings.Fields(args)
	if len(f) == 0 {
		st := s.mcpStatus()
		if len(st) == 0 {
			return localOut{Text: "No MCP servers are configured.\n" + usage}
		}
		var b strings.Builder
		b.WriteString("MCP servers:\n")
		for _, x := range st {
			fmt.Fprintf(&b, "  %s: %s", x.Name, x.Status)
			if x.Error != "" {
				fmt.Fprintf(&b, " (%s)", x.Error)
			}
			if n := len(x.Tools); n > 0 {
				fmt.Fprintf(&b, ", %d tools", n)
			}
			b.WriteString("\n")
		}
		b.WriteString(usage)
		return localOut{Text: b.String()}
	}
	action := f[0]
	if !slices.Contains([]string{"reconnect", "enable", "disable"}, action) || len(f) > 2 {
		return localOut{Text: fmt.Sprintf("Unknown /mcp arguments %q.\n%s", args, usage)}
	}
	var names []string
	for _, x := range s.mcpStatus() {
		if len(f) == 1 || f[1] == "all" || f[1] == x.Name {
			names = append(names, x.Name)
		}
	}
	if len(names) == 0 {
		if len(f) == 2 && f[1] != "all" {
			return localOut{Text: fmt.Sprintf("No MCP server is named %q.\n%s", f[1], usage)}
		}
		return localOut{Text: "No MCP servers are configured."}
	}
	var b strings.Builder
	for _, name := range names {
		err := s.mcpAction(ctx, action, name)
		if err != nil {
			fmt.Fprintf(&b, "%s: %s failed: %v\n", name, action, err)
			continue
		}
		fmt.Fprintf(&b, "%s: %s\n", name, map[string]string{"reconnect": "reconnected", "enable": "enabled", "disable": "disabled"}[action])
	}
	return localOut{Text: b.String()}
}

// mcpAction reconnects, enables or disables the server name.
func (s *Session) mcpAction(ctx context.Context, action, name string) error {
	if s.mcp.Blocked(name) {
		return fmt.Errorf("%w: MCP server %q", ErrManagedPolicyDenied, name)
	}
	cl := s.mcp.Clients()
	if cl == nil {
		return fmt.Errorf("MCP server %q is not connected", name)
	}
	if action == "reconnect" {
		return cl.Reconnect(ctx, name)
	}
	return cl.Toggle(ctx, name, action == "enable")
}

// agentsCommand is /agents: the agents the Agent tool can start.
func (s *Session) agentsCommand(context.Context, string) localOut {
	defs := s.agents()
	if len(defs) == 0 {
		return localOut{Text: "No agents are defined."}
	}
	var b strings.Builder
	b.WriteString("Agents (define more in .claude/agents/ or Options.Agents):\n")
	for _, name := range slices.Sorted(maps.Keys(defs)) {
		d := defs[name]
		fmt.Fprintf(&b, "  %s: %s", name, firstLine(d.Description))
		if d.Model != "" && d.Model != "inherit" {
			fmt.Fprintf(&b, " (model %s)", d.Model)
		}
		b.WriteString("\n")
	}
	return localOut{Text: b.String()}
}

// firstLine is the first line of a text.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// renameCommand is /rename <name>: the session's title becomes name, in
// the transcript (a custom-title entry, as session.Rename writes) and in
// the stream (session_title_changed). Without a name it prints its usage:
// agentloop does not make up titles.
func (s *Session) renameCommand(_ context.Context, args string) localOut {
	title := strings.TrimSpace(args)
	if title == "" {
		cur := s.title()
		if cur == "" {
			cur = "(none)"
		}
		return localOut{Text: fmt.Sprintf("Current title: %s\nUsage: /rename <name>", cur)}
	}
	if s.transcript != nil {
		if err := s.transcript.note(sessions.CustomTitleEntry(s.env.SessionID, title)); err != nil {
			return localOut{Text: fmt.Sprintf("The title could not be written: %v", err)}
		}
	}
	s.renamed = title
	return localOut{Text: "Session title set to: " + title,
		Before: []message.Message{titleChanged(s.env.SessionID, title)}}
}

// reloadSkillsCommand is /reload-skills: the skills, file commands and
// file agents are read again from the .claude directories (and the
// plugins' directories), and the names that came or went are listed.
func (s *Session) reloadSkillsCommand(context.Context, string) localOut {
	before := s.fileCommandNames()
	s.files.skills, s.files.commands = nil, nil
	s.loadProjectFiles() // projectfiles.go
	after := s.fileCommandNames()
	var added, removed []string
	for _, n := range after {
		if !slices.Contains(before, n) {
			added = append(added, n)
		}
	}
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed = append(removed, n)
		}
	}
	text := fmt.Sprintf("Reloaded: %d skills, %d commands, %d file agents.", len(s.files.skills), len(s.files.commands), len(s.files.agents))
	if len(added) > 0 {
		text += "\nAdded: /" + strings.Join(added, ", /")
	}
	if len(removed) > 0 {
		text += "\nRemoved: /" + strings.Join(removed, ", /")
	}
	if len(added)+len(removed) == 0 {
		text += "\nNothing was added or removed."
		return localOut{Text: text}
	}
	return localOut{Text: text, Before: []message.Message{s.commandsChanged()}}
}

// SubtypeCommandsChanged is the subtype of the system message that gives
// the session's whole list of slash commands (member "commands", as
// SupportedCommands lists them) after it changed: a client replaces the
// list it cached.
const SubtypeCommandsChanged = "commands_changed"

// commandsChanged is the commands_changed message of the session's list.
func (s *Session) commandsChanged() *message.System {
	b, _ := json.Marshal(s.supportedCommands()) // strings and bools always marshal
	return &message.System{Subtype: SubtypeCommandsChanged, SessionID: s.env.SessionID, UUID: uuid.NewString(),
		Data: map[string]json.RawMessage{"commands": b}}
}

// fileCommandNames are the names of the file commands and skills.
func (s *Session) fileCommandNames() []string {
	var out []string
	for _, c := range s.files.commands {
		out = append(out, c.Name)
	}
	for _, sk := range s.files.skills {
		if !slices.Contains(out, sk.Name) {
			out = append(out, sk.Name)
		}
	}
	return out
}

// note appends entries that are not messages to the transcript.
func (t *transcript) note(e ...sessions.Entry) error {
	if t == nil {
		return nil
	}
	r := t.ready() // made lazily (persist.go); nil only after close
	if r == nil {
		return errors.New("the transcript is closed")
	}
	return r.Note(e...)
}
