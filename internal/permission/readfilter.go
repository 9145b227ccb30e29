package permission

import (
	"encoding/json"
	"path/filepath"
	"slices"
)

// The search tools (Grep, Glob) are judged on the directory they search:
// a deny rule on a file below it cannot refuse the call, because the call
// may not even reach that file. The tools therefore drop, while they walk,
// every file and directory that the deny rules cover, and Read refuses such
// a file once more when it opens it. ReadDenied and ReadDeniedAs are that
// filter.

// ReadDenied reports whether the deny rules forbid tool ("Read", "Grep",
// "Glob", "LSP"; "" means Read) to read the absolute path p or anything
// below it. Like every check of the Checker it considers p cleaned and p
// with its symbolic links resolved (see Resolve): a rule matching any of
// those forms denies. A relative or empty p is denied, as it cannot be
// judged.
func (c *Checker) ReadDenied(tool, p string) bool {
	if p == "" || !filepath.IsAbs(p) {
		return true
	}
	st := c.state()
	rules := st.readDenyRules(tool)
	if len(rules) == 0 {
		return false
	}
	return matchPath(rules, candidates(p), false) != nil
}

// ReadDeniedAs is ReadDenied for a caller that knows every name under
// which it reaches a file: each name is matched as it is, and no file
// system access is made, so that a directory walk pays nothing but the
// matching. names must be absolute and clean; the caller passes the path
// it opens and, when that differs, its physical form (the walk's physical
// root joined with the same relative path). A name that is not absolute
// denies.
func (c *Checker) ReadDeniedAs(tool string, names ...string) bool {
	st := c.state()
	rules := st.readDenyRules(tool)
	for _, n := range names {
		if !filepath.IsAbs(n) {
			return true
		}
	}
	if st.blockReadDenied(tool, names) { // block.go
		return true
	}
	if len(rules) == 0 {
		return false
	}
	return matchPath(rules, names, false) != nil
}

// HasReadDenyRules reports whether any deny rule governs reading with
// tool. Callers may skip the filter altogether when it is false.
func (c *Checker) HasReadDenyRules(tool string) bool {
	st := c.state()
	return len(st.readDenyRules(tool)) > 0 || st.blockReadDenied(tool, []string{"/"})
}

// readDenyRules returns the deny rules that govern reading with tool,
// computed once per configuration for the usual tools.
func (st *state) readDenyRules(tool string) []*rule {
	tool = canonicalToolName(tool)
	if tool == "" {
		tool = "Read"
	}
	if i := slices.Index(readTools[:], tool); i >= 0 {
		return st.readDeny[i]
	}
	return st.pathRulesFor(Deny, false, tool)
}

// readTools are the built-in reading tools whose deny rules buildReadDeny
// precomputes (an array rather than a map: most sessions have none, and
// many sessions live in one process).
var readTools = [...]string{"Read", "Grep", "Glob", "LSP"}

// buildReadDeny precomputes readDenyRules for the built-in reading tools.
func (st *state) buildReadDeny() {
	for i, t := range readTools {
		st.readDeny[i] = st.pathRulesFor(Deny, false, t)
	}
}

// FilePath returns the physical path that a call of a file tool (Read,
// Write, Edit, NotebookEdit, MultiEdit) works on now: its path field made
// absolute against the session's working directory, "~" expanded, cleaned,
// and its symbolic links resolved. It reports false for other tools and
// for inputs without a usable path. Decide reports the same path, resolved
// during the check, in Decision.Path.
func (c *Checker) FilePath(tool string, input json.RawMessage) (string, bool) {
	st := c.state()
	tool = canonicalToolName(tool)
	if !isFileTool(tool) {
		return "", false
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil {
		return "", false
	}
	abs, err := absolute(st.cwd(), st.home, stringField(in, pathField(tool)))
	if err != nil {
		return "", false
	}
	return resolvePhysical(filepath.Clean(abs)), true
}

// isFileTool reports whether tool opens the one file its path field names
// (as opposed to searching under it).
func isFileTool(tool string) bool {
	switch tool {
	case "Read", "Write", "Edit", "NotebookEdit", "MultiEdit":
		return true
	}
	return false
}
