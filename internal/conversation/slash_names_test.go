package conversation

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/internal/projectfiles"
)

// TestSlashCommandNamesMatchCommands: init's slash command names, built
// without supportedCommands' entries, are exactly those entries' names in
// their order, whether files add commands, replace a built-in or repeat a
// name.
func TestSlashCommandNamesMatchCommands(t *testing.T) {
	builtin := builtins()[len(builtins())-1].name
	cases := map[string]projectFiles{
		"none": {},
		"added": {commands: []projectfiles.Command{{Name: "deploy"}, {Name: "lint"}},
			skills: []projectfiles.Skill{{Name: "pdf"}}},
		"replacing a built-in": {commands: []projectfiles.Command{{Name: builtin}, {Name: "deploy"}}},
		"a skill named as a command": {commands: []projectfiles.Command{{Name: "deploy"}},
			skills: []projectfiles.Skill{{Name: "deploy"}, {Name: builtin}, {Name: "pdf"}}},
	}
	for name, files := range cases {
		t.Run(name, func(t *testing.T) {
			s := &Session{files: files}
			var want []string
			for _, c := range s.supportedCommands() {
				want = append(want, c.Name)
			}
			if diff := cmp.Diff(want, s.slashCommandNames()); diff != "" {
				t.Errorf("(-supportedCommands +slashCommandNames):\n%s", diff)
			}
		})
	}
}
