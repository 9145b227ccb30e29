package assemble

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/uuid"
)

// ErrInvalidOption reports an option value a session cannot start with.
// The root package exports it as agentloop.ErrInvalidOption.
var ErrInvalidOption = errors.New("invalid option")

// Workspace resolves the working directory (cwd; "" means getwd) to an
// absolute path that must be a directory, and the additional directories
// (relative ones are taken from the working directory).
func Workspace(cwd string, additional []string, getwd func() (string, error)) (string, []string, error) {
	dir := cwd
	if dir == "" {
		wd, err := getwd()
		if err != nil {
			return "", nil, fmt.Errorf("agentloop: working directory: %w", err)
		}
		dir = wd
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", nil, fmt.Errorf("agentloop: working directory %q: %w", cwd, err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", nil, fmt.Errorf("%w: working directory %q is not a directory", ErrInvalidOption, dir)
	}
	var dirs []string
	for _, d := range additional {
		if !filepath.IsAbs(d) {
			d = filepath.Join(dir, d)
		}
		dirs = append(dirs, filepath.Clean(d))
	}
	return dir, dirs, nil
}

// SettingsDirs is dirs followed by the additional directories the
// settings grant.
func SettingsDirs(dirs []string, st *settings.Settings) []string {
	if st == nil {
		return dirs
	}
	for _, d := range st.Permissions.AdditionalDirectories {
		dirs = append(dirs, d.Path)
	}
	return dirs
}

// SessionID is id when it is a UUID, a new random UUID when it is empty,
// and an error otherwise.
func SessionID(id string) (string, error) {
	if id == "" {
		return uuid.NewString(), nil
	}
	if _, err := uuid.Parse(id); err != nil {
		return "", fmt.Errorf("%w: session id %q is not a UUID", ErrInvalidOption, id)
	}
	return id, nil
}

// Mode is the permission mode a session starts in: the option, else the
// settings' defaultMode (already filtered for trust by package settings),
// else default.
func Mode(option vocab.PermissionMode, st *settings.Settings) vocab.PermissionMode {
	switch {
	case option != "":
		return option
	case st != nil && st.Permissions.DefaultMode != "":
		if m, err := vocab.ParsePermissionMode(st.Permissions.DefaultMode); err == nil {
			return m
		}
	}
	return vocab.PermissionDefault
}

// Model is the model id a session starts on: the option, else the
// settings' model, else the default model, resolved through the aliases.
func Model(option string, st *settings.Settings) string {
	if option == "" && st != nil && st.Model != "" {
		return pricing.Resolve(st.Model)
	}
	return pricing.Resolve(option)
}

// Fallbacks resolves the fallback models, leaving out the main model.
func Fallbacks(main string, options []string) []string {
	var out []string
	for _, m := range options {
		if r := pricing.Resolve(m); r != main && !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// APIKeySource names where the built-in provider's credentials come from,
// as system/init reports it: "none" when the caller brought a provider
// (custom) or no credential variable is set.
func APIKeySource(custom bool, getenv func(string) string) string {
	switch {
	case custom:
		return "none"
	case getenv("ANTHROPIC_API_KEY") != "":
		return "ANTHROPIC_API_KEY"
	case getenv("ANTHROPIC_AUTH_TOKEN") != "":
		return "ANTHROPIC_AUTH_TOKEN"
	}
	return "none"
}

// ToolSet says which tools a session offers.
type ToolSet struct {
	// Names are the built-in tools asked for, in order; nil means the
	// default set (the Agent tool, the defaults, and AskUserQuestion when
	// someone can answer). "default" expands to the default names;
	// "Agent" and its old name "Task" mean the Agent tool.
	Names []string
	// Defaults are the default built-in names; Builtin looks one up.
	Defaults []string
	Builtin  func(name string) (tool.Tool, bool)
	// AskUser says whether AskUserQuestion joins the default set.
	AskUser bool
	// Agent builds the Agent tool (it needs the session).
	Agent func() tool.Tool
	// Custom tools come after the built-in ones.
	Custom []tool.Tool
	// Disallowed removes a tool by name, whatever asked for it.
	Disallowed func(name string) bool
}

// Select returns the tools of ts, and a warning for each name that names
// no tool (the reference ignores them; agentloop says so). A nil custom
// tool is an error.
func Select(ts ToolSet) ([]tool.Tool, []string, error) {
	names := ts.Names
	if names == nil {
		names = append([]string{"Agent"}, ts.Defaults...)
		if ts.AskUser {
			names = append(names, "AskUserQuestion")
		}
	}
	out := make([]tool.Tool, 0, len(names)+len(ts.Custom))
	var warnings []string
	seen := make(map[string]bool, len(names))
	add := func(name string, t tool.Tool) {
		if !seen[name] {
			seen[name] = true
			out = append(out, t)
		}
	}
	for _, n := range names {
		switch n {
		case "Agent", "Task":
			if !seen["Agent"] && ts.Agent != nil {
				add("Agent", ts.Agent())
			}
			continue
		case "default":
			for _, d := range ts.Defaults {
				if t, ok := ts.Builtin(d); ok {
					add(d, t)
				}
			}
			continue
		}
		t, ok := ts.Builtin(n)
		if !ok {
			warnings = append(warnings, fmt.Sprintf("tool %q is not a built-in tool agentloop knows; not offered", n))
			continue
		}
		add(n, t)
	}
	for i, t := range ts.Custom {
		if t == nil {
			return nil, warnings, fmt.Errorf("%w: custom tool %d is nil", ErrInvalidOption, i)
		}
		out = append(out, t)
	}
	if ts.Disallowed != nil {
		out = slices.DeleteFunc(out, func(t tool.Tool) bool { return ts.Disallowed(t.Info().Name) })
	}
	return out, warnings, nil
}
