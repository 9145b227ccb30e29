package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/agentloop/agentloop/internal/assemble"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// The main-thread agent (Options.Agent, else the settings' "agent" key):
// the main loop runs as one of the session's agents, as the reference's
// --agent does. An unknown name in Options is an error; in a settings
// file it is reported and the main thread runs as usual.
//
//   - Its Prompt takes the place of agentloop's own system prompt; the
//     environment section and AppendSystemPrompt are kept. An explicit
//     Options.SystemPrompt wins, and a diagnostic says the agent's prompt
//     is not used; EmptySystemPrompt (the SDKs' default) does not, and a
//     diagnostic says so.
//   - Its Model, Effort, PermissionMode and MaxTurns apply where the
//     options leave them unset (the caller's explicit choice wins, as a
//     flag wins over a settings file).
//   - Its DisallowedTools join Options.DisallowedTools (so they are gone
//     from every loop of the session); its Tools, when set, narrow the
//     main loop's tools to those named.
//   - Its InitialPrompt is the prompt of a Query (or Client.Query) given
//     an empty one while the conversation is empty (not after a resume).
//
// The agent stays available to the Agent tool as well.

// mainAgent is the resolved main-thread agent.
type mainAgent struct {
	name string
	def  AgentDefinition
}

// applyMainAgent resolves Options.Agent once the session knows its agents
// (after loadProjectFiles) and folds the agent's settings into s.opts,
// s.model, s.mode and the checker. It must run before the lineage, the
// tools and the engine are made.
func (s *Session) applyMainAgent(st *settings.Settings) error {
	name, fromSettings := s.opts.Agent, false
	if name == "" {
		name, fromSettings = s.settingsAgent(st), true
	}
	if name == "" {
		return nil
	}
	all := s.agents()
	def, ok := all[name]
	if !ok && fromSettings {
		s.diag.Add(DiagSettings, fmt.Sprintf("settings key agent: no agent %q; the main thread runs as usual", name))
		return nil
	}
	if !ok {
		names := make([]string, 0, len(all))
		for n := range all {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("%w: Agent %q: no such agent (have %v)", ErrInvalidOption, name, names)
	}
	s.main = &mainAgent{name: name, def: def}
	if s.opts.SystemPrompt != "" {
		s.diag.Add(DiagOption, fmt.Sprintf("the prompt of agent %s is not used: Options.SystemPrompt replaces it", name))
	}
	if s.opts.EmptySystemPrompt {
		// The SDKs ask for the empty prompt by default, agent or not.
		s.diag.Add(DiagOption, fmt.Sprintf("Options.EmptySystemPrompt is ignored: agent %s's prompt is the system prompt", name))
		s.opts.EmptySystemPrompt = false
	}
	if m := def.Model; m != "" && m != "inherit" && s.opts.Model == "" {
		s.model = assemble.Model(m, st)
		s.env.Model = s.model
	}
	if s.opts.Effort == "" && def.Effort != "" {
		if _, err := ParseEffort(def.Effort); err != nil {
			s.diag.Add(DiagAgent, fmt.Sprintf("agent %s: effort %q is ignored: %v", name, def.Effort, err))
		} else {
			s.opts.Effort = def.Effort
		}
	}
	if s.opts.MaxTurns == 0 && def.MaxTurns > 0 {
		s.opts.MaxTurns = def.MaxTurns
	}
	if s.opts.PermissionMode == "" && def.PermissionMode != "" {
		m, err := vocab.ParsePermissionMode(string(def.PermissionMode))
		if err != nil {
			s.diag.Add(DiagAgent, fmt.Sprintf("agent %s: permissionMode %q is ignored: %v", name, def.PermissionMode, err))
		} else if s.checker == nil {
			s.mode = PermissionMode(m)
		} else if err := s.checker.SetMode(permission.Mode(m)); errors.Is(err, ErrPermissionModeDisabled) {
			return fmt.Errorf("agentloop: agent %s: permissionMode: %w", name, err) // fail closed, never fall back
		} else if err != nil {
			// bypassPermissions must be allowed when the checker is made,
			// before the agent files are read: ask with Options.PermissionMode.
			s.diag.Add(DiagAgent, fmt.Sprintf("agent %s: permissionMode %s is ignored: %v", name, m, err))
		} else {
			s.mode = PermissionMode(m)
		}
	}
	for _, d := range def.DisallowedTools {
		if !slices.Contains(s.opts.DisallowedTools, d) {
			s.opts.DisallowedTools = append(slices.Clip(s.opts.DisallowedTools), d)
		}
	}
	return nil
}

// settingsAgent is the settings' "agent" key, the main-thread agent when
// Options.Agent is empty; a value that is not a string is reported.
func (s *Session) settingsAgent(st *settings.Settings) string {
	if st == nil {
		return ""
	}
	raw, ok := st.Extra["agent"]
	if !ok {
		return ""
	}
	var name string
	if err := json.Unmarshal(raw, &name); err != nil {
		s.diag.Add(DiagSettings, fmt.Sprintf("settings key agent is ignored: want an agent name, got %s", raw))
		return ""
	}
	return name
}

// mainAgentPrompt is the system prompt base of the main-thread agent; ""
// means agentloop's own.
func (s *Session) mainAgentPrompt() string {
	if s.main == nil {
		return ""
	}
	return s.main.def.Prompt
}

// narrowToMainAgent keeps, of the main loop's tools, those the
// main-thread agent's Tools name (all of them when it names none).
func (s *Session) narrowToMainAgent(ts []tool.Tool) []tool.Tool {
	if s.main == nil || s.main.def.Tools == nil {
		return ts
	}
	var want []string
	for _, n := range s.main.def.Tools {
		if i := strings.IndexByte(n, '('); i >= 0 { // "Bash(git:*)" names Bash
			n = n[:i]
		}
		want = append(want, strings.TrimSpace(n))
	}
	out := ts[:0:0]
	for _, t := range ts {
		if slices.Contains(want, t.Info().Name) {
			out = append(out, t)
		}
	}
	return out
}

// initialPrompt is the prompt of a Query (or Client.Query) given none:
// the main-thread agent's InitialPrompt while the conversation is empty,
// else "".
func (s *Session) initialPrompt() string {
	if s.main == nil || s.engine().HistoryLen() > 0 {
		return ""
	}
	return s.main.def.InitialPrompt
}
