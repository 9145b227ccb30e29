package conversation

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentloop/agentloop/internal/memory"
	"github.com/agentloop/agentloop/internal/sysprompt"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
)

// The session's opening context: what the first user message of the
// conversation carries before the prompt (engine.Config.OpeningContext).

// loadContext loads the CLAUDE.md files the setting sources select (see
// internal/memory) into s.memory, reporting what it left out, and returns
// the main loop's opening context: the environment, when the system prompt
// leaves it out, then the memory block.
func (s *Session) loadContext(st *settings.Settings) []model.Content {
	s.memory = s.loadMemory(st)
	var out []model.Content
	switch {
	case s.opts.ExcludeDynamicSystemPrompt && s.opts.SystemPrompt != "":
		s.diag.Add(DiagOption, "Options.ExcludeDynamicSystemPrompt is ignored: it applies to agentloop's own system prompt, and Options.SystemPrompt replaces it")
	case s.opts.ExcludeDynamicSystemPrompt && s.opts.EmptySystemPrompt:
		s.diag.Add(DiagOption, "Options.ExcludeDynamicSystemPrompt is ignored: it applies to agentloop's own system prompt, and Options.EmptySystemPrompt sends none")
	case s.opts.ExcludeDynamicSystemPrompt:
		out = append(out, model.TextBlock(sysprompt.Reminder(envBlock(s.env, s.model))))
	}
	return append(out, s.memoryContext()...)
}

// memoryContext is the CLAUDE.md block as the opening context of a loop,
// the main one or a subagent's; nil when there is none.
func (s *Session) memoryContext() []model.Content {
	if s.memory == "" {
		return nil
	}
	return []model.Content{model.TextBlock(s.memory)}
}

// loadMemory finds and renders the session's CLAUDE.md files: the user
// file with the user source, project files with project, CLAUDE.local.md
// with local (Options.SettingSources; nil is all three), leaving out what
// the settings' claudeMdExcludes match. Every problem becomes a DiagMemory
// diagnostic.
func (s *Session) loadMemory(st *settings.Settings) string {
	src := s.opts.SettingSources
	has := func(x settings.SettingSource) bool { return src == nil || slices.Contains(src, x) }
	o := memory.Options{Cwd: s.env.Cwd, Home: s.env.Home, UserDir: s.userConfigDir(),
		User: has(settings.User), Project: has(settings.Project), Local: has(settings.Local),
		// A Read deny rule is a promise: no CLAUDE.md, found or imported,
		// reaches the model from a path it covers.
		Admit: func(path string, _ memory.Kind) error {
			if s.checker != nil && s.readDenied("Read", path) {
				return errReadDenied
			}
			return nil
		}}
	if raw, ok := st.Extra["claudeMdExcludes"]; ok {
		if err := json.Unmarshal(raw, &o.Excludes); err != nil {
			s.diag.Add(DiagSettings, "claudeMdExcludes is ignored: it must be a list of glob patterns")
			o.Excludes = nil
		}
	}
	res := memory.Load(o)
	s.diag.AddAll(DiagMemory, res.Problems)
	return memory.Render(res.Files)
}

// errReadDenied leaves out a CLAUDE.md file a Read deny rule covers.
var errReadDenied = errors.New("a Read deny rule covers it")

// userConfigDir is the directory of the user's CLAUDE.md, the one that
// holds the user settings file: $CLAUDE_CONFIG_DIR, else ~/.claude (""
// without a home).
func (s *Session) userConfigDir() string {
	if d := os.Getenv("CLAUDE_CONFIG_DIR"); d != "" {
		return d
	}
	if s.env.Home != "" {
		return filepath.Join(s.env.Home, ".claude")
	}
	return ""
}
