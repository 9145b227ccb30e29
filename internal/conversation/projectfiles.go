package conversation

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/agentloop/agentloop/internal/authorize"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/memory"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/projectfiles"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// Skills, slash commands and agents from .claude directories (see
// internal/projectfiles for the file formats).
//
// Where files are read from follows Options.SettingSources, as for
// CLAUDE.md: with the user source, $CLAUDE_CONFIG_DIR or ~/.claude; with
// the project source, the .claude directory of the working directory and
// of each parent up to the repository root, then those of the additional
// directories. Nearer directories win over farther ones and project over
// user for a name both define; the shadowed entry is reported. Every file
// left out is a DiagProjectFile diagnostic; nothing in these files can
// stop a session from starting.
//
// A skill's allowed-tools are permission rules granted, as session allow
// rules, from the moment the skill is loaded (by the Skill tool, after
// the call was allowed, or by the user's "/name" prompt) to the end of the
// session: the skill's instructions stay in the conversation from then on.
// Deny and ask rules still win over them, as over every allow rule.

// projectFiles is what a session loaded from .claude directories.
type projectFiles struct {
	skills   []projectfiles.Skill
	commands []projectfiles.Command
	agents   map[string]AgentDefinition // from .claude/agents; Options.Agents win (agent.go)
	// plugins are Options.Plugins, loaded (plugins.go); their commands,
	// agents and skills join those of the .claude directories.
	plugins       []*plugin
	pluginsLoaded bool
}

// loadProjectFiles loads the session's skills, commands and file agents,
// reporting every problem and every agent field it does not honour.
func (s *Session) loadProjectFiles() {
	// A Read deny rule is a promise: no skill, command or agent file it
	// covers reaches the model, by its name or through a link (projectfiles
	// asks Admit about both and reads the file it judged). A project's
	// files may only lead inside the project and the user directory
	// (projectDirs' Within).
	res := projectfiles.Load(append(s.projectDirs(), s.pluginDirs()...), projectfiles.Options{
		Admit: func(path string) error {
			if s.checker != nil && s.readDenied("Read", path) {
				return errReadDenied
			}
			return nil
		}})
	s.diag.AddAll(DiagProjectFile, res.Problems)
	s.pluginOnlyFiles(&res) // managed_policy.go
	s.files.skills = res.Skills
	s.applySkillsOption() // skills_option.go
	for _, c := range res.Commands {
		if reservedCommand(c.Name) { // builtin_commands.go
			s.diag.Add(DiagProjectFile, fmt.Sprintf("command /%s (%s) is ignored: /%s is built in", c.Name, c.Path, c.Name))
			continue
		}
		s.files.commands = append(s.files.commands, c)
	}
	s.files.agents = nil // made by the first file agent: most sessions have none
	for _, a := range res.Agents {
		if _, ok := s.opts.Agents[a.Name]; ok {
			s.diag.Add(DiagProjectFile, fmt.Sprintf("agent %s (%s) is ignored: Options.Agents defines an agent of the same name", a.Name, a.Path))
			continue
		}
		if s.files.agents == nil {
			s.files.agents = map[string]AgentDefinition{}
		}
		s.files.agents[a.Name] = AgentDefinition{Description: a.Description, Prompt: a.Prompt, Tools: a.Tools,
			DisallowedTools: a.DisallowedTools, Model: a.Model, Effort: a.Effort, MaxTurns: a.MaxTurns,
			PermissionMode: PermissionMode(a.PermissionMode), Skills: a.Skills, Background: a.Background,
			OmitClaudeMd: a.OmitClaudeMd, MCPServers: a.MCPServers, InitialPrompt: a.InitialPrompt, Memory: a.Memory}
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range s.agents() {
			if !yield(n) {
				return
			}
		}
	}) {
		s.checkAgentDefinition(name, s.agents()[name])
	}
}

// checkAgentDefinition reports what of def the session does not honour.
func (s *Session) checkAgentDefinition(name string, def AgentDefinition) {
	var off []string
	if len(def.MCPServers) > 0 {
		off = append(off, "mcpServers (agentloop has no MCP servers yet)")
	}
	if def.InitialPrompt != "" && name != s.opts.Agent {
		off = append(off, "initialPrompt (it applies only to the main-thread agent, Options.Agent)")
	}
	if def.Memory != "" {
		off = append(off, "memory (agent memory directories are not supported)")
	}
	if def.AutoCompactWindow < 0 {
		off = append(off, fmt.Sprintf("autoCompactWindow %d (negative; the session's window applies)", def.AutoCompactWindow))
	}
	if def.PermissionMode != "" {
		if _, err := permission.ParseMode(string(def.PermissionMode)); err != nil {
			off = append(off, fmt.Sprintf("permissionMode %q (not a permission mode; the agent inherits its parent's)", def.PermissionMode))
		}
	}
	for _, sk := range def.Skills {
		if _, ok := s.skill(sk); !ok {
			off = append(off, fmt.Sprintf("skill %q (no such skill is loaded)", sk))
		}
	}
	if len(off) > 0 {
		s.diag.Add(DiagAgent, fmt.Sprintf("agent %s: not honoured: %s", name, strings.Join(off, "; ")))
	}
}

// projectDirs lists the .claude directories to read, highest precedence
// first.
func (s *Session) projectDirs() []projectfiles.Dir {
	src := s.opts.SettingSources
	has := func(x settings.SettingSource) bool { return src == nil || slices.Contains(src, x) }
	var out []projectfiles.Dir
	seen := map[string]bool{}
	add := func(dir, source string, within ...string) {
		if dir == "" || seen[dir] {
			return
		}
		seen[dir] = true
		out = append(out, projectfiles.Dir{Path: dir, Source: source, Within: within})
	}
	user := s.userConfigDir()
	seen[user] = true // the user directory is never read as a project one
	if has(settings.Project) {
		// A project's files may lead (through links) only inside the
		// project — the repository root, or the working directory outside
		// a repository, as for CLAUDE.md imports — the directory whose
		// .claude they are in, and the user directory.
		project := memory.ProjectRoot(s.env.Cwd, s.env.Home)
		within := func(d string) []string { return []string{d, project, user} }
		root, inRepo := memory.RepoRoot(s.env.Cwd)
		for d := s.env.Cwd; ; d = filepath.Dir(d) {
			add(filepath.Join(d, ".claude"), "project", within(d)...)
			if !inRepo || d == root || filepath.Dir(d) == d {
				break
			}
		}
		for _, d := range s.env.AdditionalDirs {
			add(filepath.Join(d, ".claude"), "project", within(d)...)
		}
	}
	if has(settings.User) && user != "" {
		out = append(out, projectfiles.Dir{Path: user, Source: "user"})
	}
	return out
}

// skill finds a loaded skill by name.
func (s *Session) skill(name string) (projectfiles.Skill, bool) {
	for _, sk := range s.files.skills {
		if sk.Name == name {
			return sk, true
		}
	}
	return projectfiles.Skill{}, false
}

// builtinTool is tools.Builtin plus the Skill tool, which needs the
// session's skills.
func (s *Session) builtinTool(name string) (tool.Tool, bool) {
	if name == "Skill" {
		return tools.Skill(s.loadSkill), true
	}
	return tools.Builtin(name)
}

// defaultToolNames are the default built-in tools, with Skill when the
// session offers skills (skills_option.go).
func (s *Session) defaultToolNames() []string {
	names := tools.DefaultNames()
	if len(s.offeredSkills()) > 0 {
		names = append(names, "Skill")
	}
	return names
}

// skillsOffered reports whether the main loop will have the Skill tool.
func (s *Session) skillsOffered() bool {
	if len(s.offeredSkills()) == 0 || s.lin != nil && s.lin.Disallowed("Skill") {
		return false
	}
	return s.opts.Tools == nil || slices.Contains(s.opts.Tools, "Skill") || slices.Contains(s.opts.Tools, "default")
}

// loadSkill is the Skill tool's loader: the skill's body with args filled
// in, its allowed-tools granted. Only the offered skills load.
func (s *Session) loadSkill(_ context.Context, name, args string) (tools.SkillDoc, []string, bool, error) {
	sk, ok := s.skill(name)
	if ok && !slices.ContainsFunc(s.offeredSkills(), func(o projectfiles.Skill) bool { return o.Name == name }) {
		ok = false
	}
	if !ok {
		return tools.SkillDoc{}, s.skillNames(), false, nil
	}
	s.grantSkillTools(sk)
	return tools.SkillDoc{Name: sk.Name, Dir: sk.Dir, Files: sk.Files, Text: s.guardSkillShell(projectfiles.Expand(sk.Body, args)),
		AllowedTools: sk.AllowedTools}, nil, true, nil
}

// grantSkillTools adds sk's allowed-tools as session allow rules, once.
func (s *Session) grantSkillTools(sk projectfiles.Skill) {
	if len(sk.AllowedTools) == 0 || s.checker == nil || s.policyGrantsOff("a skill's allowed-tools") {
		return
	}
	if _, done := s.run().granted.LoadOrStore(sk.Name, struct{}{}); done {
		return
	}
	var rules []permission.RuleValue
	for _, r := range sk.AllowedTools {
		v, err := permission.ParseRule(r)
		if err != nil {
			s.diag.Add(DiagProjectFile, fmt.Sprintf("skill %s: allowed-tools entry %q is not a permission rule: %v", sk.Name, r, err))
			continue
		}
		rules = append(rules, v)
	}
	if len(rules) == 0 {
		return
	}
	if err := s.checker.Apply(permission.Update{Type: permission.UpdateAddRules, Behavior: permission.Allow,
		Destination: permission.SourceSession, Rules: rules}); err != nil {
		s.diag.Add(DiagProjectFile, fmt.Sprintf("skill %s: allowed-tools not granted: %v", sk.Name, err))
	}
}

// skillListing is the opening-context block that tells the model which
// skills it can load; nil when the Skill tool is not offered.
func (s *Session) skillListing() []model.Content {
	if !s.skillsOffered() {
		return nil
	}
	var b strings.Builder
	b.WriteString("<system-reminder>\nThese skills can be loaded with the Skill tool (name: when to use it):\n")
	for _, sk := range s.offeredSkills() {
		fmt.Fprintf(&b, "- %s: %s\n", sk.Name, sk.Description)
	}
	b.WriteString("</system-reminder>")
	return []model.Content{model.TextBlock(b.String())}
}

// skillNames are the names listed in init's skills.
func (s *Session) skillNames() []string {
	out := []string{}
	if !s.skillsOffered() {
		return out
	}
	for _, sk := range s.offeredSkills() {
		out = append(out, sk.Name)
	}
	return out
}

// slashCommandNames are init's slash_commands: the names of
// supportedCommands, without their slash, as the reference lists them.
func (s *Session) slashCommandNames() []string {
	// The names of supportedCommands, without building its entries: a
	// file's command that replaces a built-in keeps the built-in's place.
	all := builtins()
	out := make([]string, 0, len(all)+len(s.files.commands)+len(s.files.skills))
	for _, b := range all {
		out = append(out, b.name)
	}
	add := func(name string) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	for _, c := range s.files.commands {
		add(c.Name)
	}
	for _, sk := range s.files.skills {
		add(sk.Name)
	}
	return out
}

// agentNames are init's agents, sorted.
func (s *Session) agentNames() []string {
	out := []string{}
	for n := range s.agents() {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// subagentContext is the opening context of a subagent defined by def:
// the CLAUDE.md block unless def omits it, the skills def preloads, and
// def's critical reminder.
func (s *Session) subagentContext(def AgentDefinition) []model.Content {
	var out []model.Content
	if !def.OmitClaudeMd {
		out = append(out, s.memoryContext()...)
	}
	for _, name := range def.Skills {
		if sk, ok := s.skill(name); ok {
			out = append(out, model.TextBlock(fmt.Sprintf("<system-reminder>\nSkill %s is loaded (base directory %s):\n\n%s\n</system-reminder>",
				sk.Name, sk.Dir, sk.Body)))
		}
	}
	if def.CriticalSystemReminder != "" {
		out = append(out, model.TextBlock("<system-reminder>\n"+def.CriticalSystemReminder+"\n</system-reminder>"))
	}
	return out
}

// agentMode is the permission mode the loop a runs in.
func (s *Session) agentMode(a lineage.Agent) permission.Mode {
	if m, ok := s.run().modes.Load(a.ID); ok && !a.Main() {
		return m.(permission.Mode)
	}
	return permission.Mode(s.currentMode())
}

// setAgentMode gives the new subagent agent the mode want when that is no
// wider than its parent's (permission.Narrower); else it keeps the
// parent's, and a diagnostic says so.
// Without want, the subagent inherits its parent's mode, its own one when
// the parent has one.
func (s *Session) setAgentMode(parent, agent lineage.Agent, want PermissionMode) {
	pm := s.agentMode(parent)
	m := pm
	if want != "" {
		w, err := permission.ParseMode(string(want))
		switch {
		case err != nil: // reported at session start (checkAgentDefinition)
		case !permission.Narrower(pm, w):
			s.diag.Add(DiagAgent, fmt.Sprintf("agent %s runs in %s, not its permissionMode %s: a subagent may not allow more than its parent",
				agent.Type, pm, w))
		default:
			m = w
		}
	}
	if _, own := s.run().modes.Load(parent.ID); own && !parent.Main() || m != pm {
		s.run().modes.Store(agent.ID, m)
	}
}

// checkerFor is the permission checker of the loop a: the session's, in
// a's own mode when it has one.
func (s *Session) checkerFor(a lineage.Agent) authorize.Checker {
	if a.Main() {
		return s.checker
	}
	m, ok := s.run().modes.Load(a.ID)
	if !ok {
		return s.checker
	}
	return modeChecker{s.checker, m.(permission.Mode)}
}

// modeChecker decides in a fixed mode.
type modeChecker struct {
	c    *permission.Checker
	mode permission.Mode
}

func (m modeChecker) Decide(ctx context.Context, call permission.Call) permission.Decision {
	return m.c.DecideIn(ctx, m.mode, call)
}
