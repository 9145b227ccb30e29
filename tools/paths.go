package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentloop/agentloop/internal/nofollow"
	"github.com/agentloop/agentloop/tool"
)

// ErrRelativePath is returned by the file tools when a path they require to
// be absolute is relative.
var ErrRelativePath = errors.New("path must be absolute")

// ResolvePath turns a path given by the model into the absolute, cleaned path
// that a file operation on it would reach: a leading "~" is replaced by the
// home directory, a relative path is taken relative to env.Cwd, and symbolic
// links are resolved on the longest prefix of the path that exists (the
// rest, which does not exist yet, is appended unchanged). A permission layer
// can therefore compare the result against allowed directories without being
// fooled by "..", doubled slashes or links that point elsewhere.
//
// ResolvePath fails only for an empty path, or a relative path when env has
// no working directory. env may be nil.
func ResolvePath(env *tool.Env, p string) (string, error) {
	abs, err := absPath(env, p)
	if err != nil {
		return "", err
	}
	return resolveSymlinks(abs), nil
}

// absPath expands "~", joins a relative path to the working directory and
// cleans the result, without touching the file system.
func absPath(env *tool.Env, p string) (string, error) {
	if p == "" {
		return "", errors.New("path is empty")
	}
	p = expandTildePath(env, p)
	if !filepath.IsAbs(p) {
		cwd := ""
		if env != nil {
			cwd = env.Cwd
		}
		if cwd == "" {
			return "", fmt.Errorf("%w: %s", ErrRelativePath, p)
		}
		p = filepath.Join(cwd, p)
	}
	return filepath.Clean(p), nil
}

// requireAbs is absPath for the tools that accept only absolute paths (Read,
// Write, Edit). "~/x" counts as absolute.
func requireAbs(env *tool.Env, p string) (string, error) {
	if p == "" {
		return "", errors.New("file_path is empty")
	}
	p = expandTildePath(env, p)
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: %s", ErrRelativePath, p)
	}
	return filepath.Clean(p), nil
}

func expandTildePath(env *tool.Env, p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home := ""
	if env != nil {
		home = env.Home
	}
	if home == "" {
		h, err := os.UserHomeDir()
		if err != nil {
			return p
		}
		home = h
	}
	return filepath.Join(home, p[1:])
}

// resolveSymlinks evaluates symbolic links in the longest existing prefix of
// the absolute, clean path p and appends the missing rest. A path whose
// walk meets no link, to its end or to a missing name
// (nofollow.LinkFree, one system call), is returned as it is, as the
// evaluation would return it.
func resolveSymlinks(p string) string {
	if filepath.Clean(p) == p && nofollow.LinkFree(p) {
		return p
	}
	rest := ""
	cur := p
	for {
		r, err := filepath.EvalSymlinks(cur)
		if err == nil {
			if rest == "" {
				return r
			}
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		base := filepath.Base(cur)
		if rest == "" {
			rest = base
		} else {
			rest = filepath.Join(base, rest)
		}
		cur = parent
	}
}

// displayPath is how Glob and Grep print a path: relative to the working
// directory when it lies inside it, absolute otherwise.
func displayPath(cwd, p string) string {
	if cwd == "" {
		return p
	}
	rel, err := filepath.Rel(cwd, p)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return p
	}
	return rel
}

func envCwd(env *tool.Env) string {
	if env == nil {
		return ""
	}
	return env.Cwd
}

// notExistMessage is the text the model gets for a path that is not there.
func notExistMessage(env *tool.Env, what string) string {
	return fmt.Sprintf("%s does not exist. Note: your current working directory is %s.", what, envCwd(env))
}

// isNotExist also treats "a parent is not a directory" as a missing path.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// readDenied reports whether the session's deny rules forbid the tool to
// read a file known by any of names (see tool.Env.ReadDenied).
func readDenied(env *tool.Env, toolName string, names ...string) bool {
	return env != nil && env.ReadDenied != nil && env.ReadDenied(toolName, names...)
}

// readDeniedMessage is the text the model gets for a file a deny rule
// covers.
func readDeniedMessage(toolName, path string) string {
	return fmt.Sprintf("Permission to read %s with %s has been denied: a deny rule in the settings covers it.", path, toolName)
}

// denyFilter binds the session's read filter to a tool for walkConfig.deny;
// nil when the session has none.
func denyFilter(env *tool.Env, toolName string) func(names ...string) bool {
	if env == nil || env.ReadDenied == nil {
		return nil
	}
	f := env.ReadDenied
	return func(names ...string) bool { return f(toolName, names...) }
}
