package permission

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/internal/nofollow"
)

// Resolve returns the absolute path that a file operation on p would
// reach when run in directory cwd: "~" and "~/…" expand to the home
// directory, a relative p is joined to cwd, and then symbolic links are
// followed component by component on the longest prefix that exists, with
// ".." taken after the link before it has been followed, as the kernel
// does. The part that does not exist yet is appended cleaned. Links that
// dangle are followed too (a write through one creates its target), and a
// chain of more than 40 links stops the resolution there.
//
// Comparisons of the result are byte for byte: on Linux "/Work" and
// "/work" are different directories, and the checker treats them so. (On
// macOS and Windows, where file systems usually ignore case, the checker
// compares paths with case folded.)
//
// Resolve fails for an empty p, and for a relative p when cwd is not
// absolute.
func Resolve(cwd, p string) (string, error) {
	home, _ := os.UserHomeDir()
	abs, err := absolute(cwd, home, p)
	if err != nil {
		return "", err
	}
	return resolvePhysical(abs), nil
}

// absolute expands "~" and joins p to cwd, without cleaning.
func absolute(cwd, home, p string) (string, error) {
	if p == "" {
		return "", errors.New("permission: empty path")
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home == "" {
			return "", errors.New("permission: no home directory to expand ~")
		}
		p = home + p[1:]
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	if !filepath.IsAbs(cwd) {
		return "", fmt.Errorf("permission: relative path %q without an absolute working directory", p)
	}
	return cwd + "/" + p, nil
}

// resolveHook, set only by tests, sees each path resolvePhysical is asked
// to resolve.
var resolveHook atomic.Pointer[func(string)]

// resolvePhysical follows symbolic links in an absolute path (see Resolve).
// A clean path whose walk the kernel finishes, or stops at a missing
// name, without meeting a link (nofollow.LinkFree, one system call) is its
// own physical path; other paths are walked a component at a time.
func resolvePhysical(p string) string {
	if h := resolveHook.Load(); h != nil {
		(*h)(p)
	}
	// A clean path whose walk meets no link is its own physical path,
	// missing or not (a protected file not made yet, say): the walk below
	// would stop at the missing name and append the rest as it is.
	if filepath.Clean(p) == p && nofollow.LinkFree(p) {
		return p
	}
	parts := strings.Split(p, "/")
	cur := "/"
	links := 0
	for i := 0; i < len(parts); i++ {
		c := parts[i]
		switch c {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, c)
		link, err := isSymlink(next)
		if err != nil || !link || links >= 40 {
			if err != nil || links >= 40 {
				// Missing (or unreachable): the rest cannot hold links.
				return filepath.Clean(next + "/" + strings.Join(parts[i+1:], "/"))
			}
			cur = next
			continue
		}
		target, err := os.Readlink(next)
		if err != nil {
			return filepath.Clean(next + "/" + strings.Join(parts[i+1:], "/"))
		}
		links++
		if filepath.IsAbs(target) {
			cur = "/"
		}
		parts = append(strings.Split(target, "/"), parts[i+1:]...)
		i = -1
	}
	return cur
}

// candidates returns the forms of an absolute path that a check must
// consider: the cleaned path (what the file tools open), and the physical
// paths of the cleaned and of the raw path (what the kernel reaches when
// ".." follows a link).
func candidates(abs string) []string {
	cands, _ := candidatesPhys(abs)
	return cands
}

// candidatesPhys is candidates, also returning the physical path of the
// cleaned path (the file the file tools reach).
func candidatesPhys(abs string) (cands []string, phys string) {
	c := filepath.Clean(abs)
	pc := resolvePhysical(c)
	if abs == c {
		// Already clean: the raw path's physical form is the same one,
		// and walking it again would cost a stat per component.
		return addUnique(nil, c, pc), pc
	}
	return addUnique(nil, c, pc, resolvePhysical(abs)), pc
}

// within reports whether p is dir or lies under it.
func within(dir, p string, fold bool) bool {
	if fold {
		dir, p = strings.ToLower(dir), strings.ToLower(p)
	}
	if dir == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

var protectedDirsOnce lazy.Value[map[string]bool] // the value of protectedDirs, built at its first use

// protectedDirs and protectedFiles are never approved for writing by a
// mode or an allow rule, bypassPermissions included: only the person asked
// (or a hook, or canUseTool) can approve a write there. They configure
// tools that run code (git hooks and config, editor tasks, shell start-up
// files, MCP servers, package manager scripts) or hold credentials. A path
// is protected when any of its components is a protected directory or its
// last component a protected file; .claude/worktrees is the one exception,
// as in the reference. .ssh and .gnupg are agentloop's additions.
func protectedDirs() map[string]bool { return protectedDirsOnce.Get(newProtectedDirs) }

func newProtectedDirs() map[string]bool {
	return map[string]bool{".git": true, ".vscode": true, ".idea": true, ".husky": true, ".claude": true,
		".ssh": true, ".gnupg": true}
}

var protectedFilesOnce lazy.Value[map[string]bool] // the value of protectedFiles, built at its first use

func protectedFiles() map[string]bool { return protectedFilesOnce.Get(newProtectedFiles) }

func newProtectedFiles() map[string]bool {
	return map[string]bool{
		".bashrc": true, ".bash_profile": true, ".bash_login": true, ".bash_logout": true, ".bash_aliases": true,
		".profile": true, ".login": true, ".zshrc": true, ".zshenv": true, ".zprofile": true, ".zlogin": true,
		".zlogout": true, ".kshrc": true, ".cshrc": true, ".tcshrc": true, ".npmrc": true,
		".yarnrc": true, ".yarnrc.yml": true, ".mcp.json": true, ".claude.json": true, ".gitconfig": true,
		".gitmodules": true, ".envrc": true, ".netrc": true, ".pypirc": true,
	}
}

// isProtected reports whether writing p touches a protected file or
// directory. .claude/worktrees is the exception the reference makes.
func isProtected(p string, fold bool) bool {
	parts := strings.Split(p, "/")
	for i, c := range parts {
		if fold {
			c = strings.ToLower(c)
		}
		if protectedDirs()[c] {
			if c == ".claude" && i+1 < len(parts) && parts[i+1] == "worktrees" {
				continue
			}
			return true
		}
	}
	last := parts[len(parts)-1]
	if fold {
		last = strings.ToLower(last)
	}
	return protectedFiles()[last]
}

// isNetworkPath reports whether a path given by the model names a network
// location (UNC), which the reference never approves without asking.
func isNetworkPath(p string) bool {
	return strings.HasPrefix(p, "//") || strings.HasPrefix(p, `\\`)
}
