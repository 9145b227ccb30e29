package tools

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/tool"
	"github.com/bmatcuk/doublestar/v4"
)

//go:embed glob.md
var globDescription string

const globSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object",
  "properties": {
    "pattern": {"description": "The glob pattern to match file paths against, such as \"**/*.go\".", "type": "string"},
    "path": {"description": "The directory to search in. Leave it out to search the current working directory; do not pass \"null\" or \"undefined\".", "type": "string"}
  },
  "required": ["pattern"],
  "additionalProperties": false
}`

// globMaxResults is how many paths Glob returns at most.
const globMaxResults = 100

type globInput struct {
	Pattern string  `json:"pattern"`
	Path    *string `json:"path,omitempty"`
}

// GlobResult is the tool_use_result of Glob. Filenames are as shown to the
// model: relative to the working directory when inside it.
type GlobResult struct {
	Filenames       []string `json:"filenames"`
	DurationMs      int64    `json:"durationMs"`
	NumFiles        int      `json:"numFiles"`
	Truncated       bool     `json:"truncated"`
	TotalMatches    int      `json:"totalMatches"`
	CountIsComplete bool     `json:"countIsComplete"`
}

// Glob returns the Glob tool: it lists the files whose paths match a
// doublestar pattern ("**" crosses directories, "{a,b}" alternates), most
// recently modified first, at most 100. Hidden files are included,
// version-control directories (.git and the like) are not, and ignore files
// are not consulted. Symbolic links are not followed. It only reads.
func Glob() tool.Tool {
	return tool.New("Glob", globDescription, runGlob, &tool.Options{
		ReadOnly: true,
		Schema:   json.RawMessage(globSchema),
	})
}

type globMatch struct {
	path  string
	mtime int64 // milliseconds
}

func runGlob(ctx context.Context, in globInput, call *tool.Call) (tool.Result, error) {
	start := time.Now()
	env := call.Env
	cwd := envCwd(env)
	base, errRes := searchRoot(env, in.Path)
	if errRes != nil {
		return *errRes, nil
	}
	info, err := os.Stat(base)
	switch {
	case isNotExist(err):
		return tool.Error(notExistMessage(env, "Directory "+base)), nil
	case err != nil:
		return tool.Error(fmt.Sprintf("Cannot search %s: %v", base, pathErrCause(err))), nil
	case !info.IsDir():
		return tool.Error(fmt.Sprintf("Path is not a directory: %s. Give a directory as path.", base)), nil
	}
	if in.Pattern == "" {
		return tool.Error("pattern is empty: give a glob pattern such as **/*.go."), nil
	}

	pattern := filepath.ToSlash(expandTildePath(env, in.Pattern))
	full := pattern
	if !path.IsAbs(pattern) {
		full = filepath.ToSlash(base) + "/" + pattern
	}
	full = path.Clean(full)
	root, rest := doublestar.SplitPattern(full)
	if !doublestar.ValidatePattern(rest) {
		return tool.Error(fmt.Sprintf("Invalid glob pattern %q.", in.Pattern)), nil
	}
	root = filepath.FromSlash(root)

	var (
		mu      sync.Mutex
		matches []globMatch
		// nameMatch is set when the name decides.
		match, nameMatch = globMatcher(rest)
	)
	cfg := walkConfig{
		hidden:  true,
		inline:  true,
		descend: globDescend(rest),
		name:    nameMatch,
		deny:    denyFilter(env, "Glob"),
		file: func(abs, rel string, d fs.DirEntry) {
			if nameMatch == nil && !match(rel, d.Name()) {
				return
			}
			var mtime int64
			if fi, err := d.Info(); err == nil {
				mtime = fi.ModTime().UnixMilli()
			}
			mu.Lock()
			matches = append(matches, globMatch{abs, mtime})
			mu.Unlock()
		},
	}
	if st, err := os.Stat(root); err == nil && st.IsDir() {
		if err := walkTree(ctx, root, cfg); err != nil {
			if ctx.Err() != nil {
				return tool.Result{}, ctx.Err()
			}
			return tool.Error(fmt.Sprintf("Cannot search %s: %v", root, pathErrCause(err))), nil
		}
	}

	sortByMtime(matches)
	total := len(matches)
	truncated := total > globMaxResults
	if truncated {
		matches = matches[:globMaxResults]
	}
	names := make([]string, len(matches))
	for i, m := range matches {
		names[i] = displayPath(cwd, m.path)
	}
	res := GlobResult{
		Filenames: names, NumFiles: len(names), Truncated: truncated,
		TotalMatches: total, CountIsComplete: true,
		DurationMs: time.Since(start).Milliseconds(),
	}
	text := "No files found"
	if len(names) > 0 {
		text = strings.Join(names, "\n")
		if truncated {
			text += fmt.Sprintf("\n(Showing the %d most recently modified of %d matches. Use a more specific pattern or path to see the others.)", globMaxResults, total)
		}
	}
	r := tool.Text(text)
	r.Structured = res
	return r, nil
}

// searchRoot resolves the optional path of Glob and Grep: absolute, or
// relative to the working directory, which is the default.
func searchRoot(env *tool.Env, p *string) (string, *tool.Result) {
	if p != nil && *p != "" && *p != "undefined" && *p != "null" {
		abs, err := absPath(env, *p)
		if err != nil {
			r := tool.Error(fmt.Sprintf("Cannot use path %q: %v", *p, err))
			return "", &r
		}
		return abs, nil
	}
	cwd := envCwd(env)
	if cwd == "" {
		r := tool.Error("There is no working directory to search: give an absolute path.")
		return "", &r
	}
	return filepath.Clean(cwd), nil
}

// globDescend prunes directories that cannot hold a match of pattern: too
// deep for a pattern without "**", or not matching its leading segments.
// Patterns with braces may hide slashes in alternatives and are not pruned.
func globDescend(pattern string) func(rel string, depth int) bool {
	if strings.ContainsAny(pattern, "{}") {
		return nil
	}
	segs := strings.Split(pattern, "/")
	return func(rel string, depth int) bool {
		for i, ds := range strings.Split(rel, "/") {
			if i < len(segs) && strings.Contains(segs[i], "**") {
				return true
			}
			if i >= len(segs)-1 {
				return false
			}
			if ok, _ := doublestar.Match(segs[i], ds); !ok {
				return false
			}
		}
		return true
	}
}

// globMatcher returns a function that reports whether the file at rel,
// named name, matches pattern. For the common "**/NAME" (NAME without a
// slash), the name alone decides, as "**/" matches any directories: it
// returns instead a function of the name, and "**/*SUFFIX" (SUFFIX without
// special characters) is a test of the suffix.
func globMatcher(pattern string) (path func(rel, name string) bool, name func(string) bool) {
	if last, ok := strings.CutPrefix(pattern, "**/"); ok && !strings.Contains(last, "/") && !strings.Contains(last, "**") {
		if suffix, ok := strings.CutPrefix(last, "*"); ok && !strings.ContainsAny(suffix, `*?[]{}\`) {
			return nil, func(name string) bool { return strings.HasSuffix(name, suffix) }
		}
		return nil, func(name string) bool {
			ok, _ := doublestar.Match(last, name)
			return ok
		}
	}
	return func(rel, _ string) bool {
		ok, _ := doublestar.Match(pattern, rel)
		return ok
	}, nil
}

// sortByMtime orders newest first (by millisecond), then by path.
func sortByMtime(m []globMatch) {
	slices.SortFunc(m, func(a, b globMatch) int {
		if c := cmp.Compare(b.mtime, a.mtime); c != 0 {
			return c
		}
		return strings.Compare(a.path, b.path)
	})
}
