package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentloop/agentloop/hooks"
)

// Tenants' files stay apart.
//
// The permission engine protects a user from their agent; it does not
// keep one tenant's agent out of another tenant's files: a session in
// bypassPermissions mode reads any path, and in default mode the prompt
// for a path outside the working directory goes to the tenant itself.
// So every session of the server gets a PreToolUse hook of its own, run
// before the permission engine, that refuses a file tool (Read, Write,
// Edit, MultiEdit, NotebookEdit, Glob, Grep) whose path leads outside the
// tenant's root (through symbolic links too) or the session's own
// configuration directory (where its large tool results are saved); for
// Glob, the fixed directories its pattern starts with too.
// Bash cannot be judged by its command line; for it, turn on the sandbox
// (docs/serve.md).

// fileToolPath names, for a file tool, the input field holding its path
// and whether the field may be absent (then the working directory); ok is
// false for another tool.
func fileToolPath(tool string) (field string, optional, ok bool) {
	switch tool {
	case "Read", "Write", "Edit", "MultiEdit":
		return "file_path", false, true
	case "NotebookEdit":
		return "notebook_path", false, true
	case "Glob", "Grep":
		return "path", true, true
	}
	return "", false, false
}

// confineHook returns the PreToolUse matcher that keeps the file tools of
// a session whose working directory is cwd inside the directories allowed.
func confineHook(cwd string, allowed ...string) hooks.Matcher {
	var roots []string
	for _, a := range allowed {
		if r, err := filepath.EvalSymlinks(a); err == nil {
			roots = append(roots, r)
		}
	}
	return hooks.Matcher{Matcher: "Read|Write|Edit|MultiEdit|NotebookEdit|Glob|Grep", Hooks: []hooks.Callback{
		func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			pre, ok := in.(hooks.PreToolUseInput)
			if !ok {
				return hooks.Output{}, nil
			}
			why := confined(pre.ToolName, pre.ToolInput, cwd, roots)
			if why == "" {
				return hooks.Output{}, nil
			}
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{HookEventName: hooks.PreToolUse,
				PermissionDecision: hooks.Deny, PermissionDecisionReason: why}}, nil
		},
	}}
}

// confined says why a call of tool with input leaves roots, or "" when it
// does not.
func confined(tool string, input json.RawMessage, cwd string, roots []string) string {
	field, optional, ok := fileToolPath(tool)
	if !ok {
		return ""
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return "" // the tool's own validation refuses it
	}
	var p string
	if raw, ok := in[field]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &p) != nil {
			return ""
		}
	}
	if p == "" {
		if !optional {
			return ""
		}
		p = cwd
	}
	if strings.HasPrefix(p, "~") {
		return "paths under ~ are outside this session's directory on this server"
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	if why := inside(p, roots); why != "" || tool != "Glob" {
		return why
	}
	// Glob's pattern may be absolute or climb out itself ("/srv/**",
	// "../other/*"): its fixed leading directories are searched too.
	var pat string
	if raw, ok := in["pattern"]; !ok || json.Unmarshal(raw, &pat) != nil || pat == "" {
		return ""
	}
	if strings.HasPrefix(pat, "~") {
		return "patterns under ~ are outside this session's directory on this server"
	}
	full := filepath.ToSlash(pat)
	if !path.IsAbs(full) {
		full = filepath.ToSlash(p) + "/" + full
	}
	base, rest := doublestar.SplitPattern(path.Clean(full))
	for _, seg := range strings.Split(rest, "/") {
		if seg == ".." {
			return "the pattern " + pat + " climbs out of its directory"
		}
	}
	return inside(filepath.FromSlash(base), roots)
}

// inside says why p is not under one of roots, once its links are
// resolved, or "" when it is.
func inside(p string, roots []string) string {
	real, err := physical(filepath.Clean(p))
	if err != nil {
		return "the path cannot be resolved: " + err.Error()
	}
	for _, r := range roots {
		if real == r || strings.HasPrefix(real, r+string(filepath.Separator)) {
			return ""
		}
	}
	return "the path " + p + " is outside this session's directory on this server"
}

// physical resolves the symbolic links of p's longest existing prefix and
// appends the rest: where p is, or would be once created.
func physical(p string) (string, error) {
	rest := ""
	for {
		r, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(r, rest), nil
		}
		if _, lerr := os.Lstat(p); lerr == nil || !errors.Is(err, fs.ErrNotExist) {
			// p exists but does not resolve: a link to nowhere (whose
			// target a write would create, wherever it is) or a loop.
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
