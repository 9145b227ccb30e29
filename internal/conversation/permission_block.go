package conversation

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tools"
)

// blockConfig turns the settings that fence the file tools into the
// working directories (permissions.blockWritesOutsideWorkingDirectories,
// permissions.blockReadsOutsideWorkingDirectories and their path lists)
// into the checker's Block. The session's own files stay reachable: the
// tool-results spill directory and the background shells' directory
// (their output files and the sandbox's temp directory). Writes are
// refused to every settings file the session knows of, wherever it lies.
func (s *Session) blockConfig(st *settings.Settings) permission.Block {
	if st == nil {
		return permission.Block{}
	}
	p := st.Permissions
	b := permission.Block{
		Writes:  p.BlockWritesOutsideWorkingDirectories != nil,
		Reads:   p.BlockReadsOutsideWorkingDirectories != nil,
		Exempt:  slices.Clone(p.BlockReadsExemptPaths),
		Exclude: slices.Clone(p.WorkingDirectoriesExclude),
	}
	if !b.Writes && !b.Reads {
		if len(b.Exempt)+len(b.Exclude) > 0 {
			s.diag.Add(DiagSettings, "permissions.blockReadsExemptPaths and workingDirectoriesExclude "+
				"have no effect: neither blockWritesOutsideWorkingDirectories nor blockReadsOutsideWorkingDirectories is on")
		}
		return b
	}
	if s.env.ResultsDir != "" {
		b.Session = append(b.Session, s.env.ResultsDir)
	}
	b.Session = append(b.Session, tools.BackgroundShells(s.env).Dir())
	o := settings.Options{Cwd: s.env.Cwd, Home: s.env.Home}
	for _, src := range []settings.Source{settings.UserSettings, settings.ProjectSettings,
		settings.LocalSettings, settings.PolicySettings} {
		if path, err := o.Path(src); err == nil && filepath.IsAbs(path) {
			b.Settings = append(b.Settings, path)
		}
	}
	for _, f := range st.Files {
		if filepath.IsAbs(f.Path) {
			b.Settings = append(b.Settings, f.Path)
		}
	}
	return b
}

// promptsOff reports whether permissions.denyInsteadOfPrompting is on.
// The tool that only asks a person, AskUserQuestion, is then taken from
// every loop's list (as a bare disallowed name: the lineage drops it and
// the checker denies it); agentloop has no plan-mode tools to drop.
func (s *Session) promptsOff(st *settings.Settings) bool {
	if st == nil || st.Permissions.DenyInsteadOfPrompting == nil {
		return false
	}
	if !slices.Contains(s.opts.DisallowedTools, "AskUserQuestion") {
		s.opts.DisallowedTools = append(slices.Clip(s.opts.DisallowedTools), "AskUserQuestion")
	}
	return true
}

// unhonouredPermissionKeys is the diagnostic text naming the members of
// the permissions object that agentloop does not read
// (settings.Permissions.Extra), or "" when there are none.
func unhonouredPermissionKeys(extra map[string]json.RawMessage) string {
	var keys []string
	for k := range extra {
		keys = append(keys, strconv.Quote("permissions."+k))
	}
	switch len(keys) {
	case 0:
		return ""
	case 1:
		return "settings key " + keys[0] + " is not honoured by agentloop; ignored"
	}
	slices.Sort(keys)
	return "settings keys " + strings.Join(keys, ", ") + " are not honoured by agentloop; ignored"
}

// checkWorkingDirectoriesAsGiven refuses permissions.workingDirectoriesAsGiven:
// agentloop judges a working directory both as written and with its links
// resolved, so a file reached through a linked working directory counts
// as inside where the setting would have it outside. Refusing is the
// only answer that does not let more through than the host asked for.
func checkWorkingDirectoriesAsGiven(st *settings.Settings) error {
	if st == nil || len(st.Permissions.WorkingDirectoriesAsGiven) == 0 {
		return nil
	}
	return fmt.Errorf("%w: settings: permissions.workingDirectoriesAsGiven is not supported by agentloop "+
		"(working directories are judged with their links resolved); remove it", ErrInvalidOption)
}
