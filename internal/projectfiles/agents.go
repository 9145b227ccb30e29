package projectfiles

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Agent is one subagent defined by a Markdown file under .claude/agents:
// the frontmatter holds its settings, the body its system prompt.
type Agent struct {
	Name, Description string
	Tools             []string
	DisallowedTools   []string
	Model             string
	Effort            string
	MaxTurns          int
	PermissionMode    string
	// MCPServers keeps each entry as written: a server name, or a
	// mapping of name to an inline server configuration.
	MCPServers    []any
	Skills        []string
	InitialPrompt string
	Background    bool
	OmitClaudeMd  bool
	Memory        string
	Prompt        string
	Path          string
	Source        string
}

type agentFront struct {
	Name            string `yaml:"name"`
	Description     string `yaml:"description"`
	Tools           List   `yaml:"tools"`
	DisallowedTools List   `yaml:"disallowedTools"`
	Model           string `yaml:"model"`
	Effort          any    `yaml:"effort"`
	MaxTurns        int    `yaml:"maxTurns"`
	PermissionMode  string `yaml:"permissionMode"`
	MCPServers      []any  `yaml:"mcpServers"`
	Skills          List   `yaml:"skills"`
	InitialPrompt   string `yaml:"initialPrompt"`
	Background      bool   `yaml:"background"`
	OmitClaudeMd    bool   `yaml:"omitClaudeMd"`
	Memory          string `yaml:"memory"`
}

var agentKeys = []string{"name", "description", "tools", "disallowedTools", "model", "effort", "maxTurns",
	"permissionMode", "mcpServers", "skills", "initialPrompt", "background", "omitClaudeMd", "memory"}

func (l *loader) agents(d Dir) {
	for _, root := range l.roots("agent", d, "agents", d.ExtraAgents) {
		l.agentsIn(d, root)
	}
}

// agentsIn loads the agents of root: a directory of .md files, or one .md
// file.
func (l *loader) agentsIn(d Dir, root string) {
	for _, path := range l.mdFiles("agent", root) {
		data, ok := l.read(d, "agent", path)
		if !ok {
			continue
		}
		var f agentFront
		body, keys, err := parse(data, &f)
		if err != nil {
			l.problem("agent file %s is ignored: %v", path, err)
			continue
		}
		name := strings.TrimSpace(f.Name)
		if name == "" {
			name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		if why := validName(name); why != "" {
			l.problem("agent file %s is ignored: %s", path, why)
			continue
		}
		if strings.TrimSpace(f.Description) == "" {
			l.problem("agent file %s is ignored: its frontmatter has no description (the model needs one to know when to use it)", path)
			continue
		}
		if f.MaxTurns < 0 {
			l.problem("agent file %s is ignored: maxTurns is negative", path)
			continue
		}
		name = d.named(name)
		if extra := unknownKeys(keys, agentKeys...); len(extra) > 0 {
			l.problem("agent %s (%s): frontmatter keys %s are not honoured", name, path, strings.Join(extra, ", "))
		}
		if !l.claim("agent", name, path) {
			continue
		}
		effort := ""
		if f.Effort != nil {
			effort = fmt.Sprint(f.Effort)
		}
		l.res.Agents = append(l.res.Agents, Agent{Name: name, Description: strings.TrimSpace(f.Description),
			Tools: f.Tools, DisallowedTools: f.DisallowedTools, Model: strings.TrimSpace(f.Model), Effort: effort,
			MaxTurns: f.MaxTurns, PermissionMode: strings.TrimSpace(f.PermissionMode), MCPServers: f.MCPServers,
			Skills: f.Skills, InitialPrompt: f.InitialPrompt, Background: f.Background, OmitClaudeMd: f.OmitClaudeMd,
			Memory: f.Memory, Prompt: body, Path: path, Source: d.Source})
	}
}
