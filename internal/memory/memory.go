// Package memory finds, reads and renders a session's CLAUDE.md files: the
// standing instructions a user or a project keeps for the agent.
//
// Three kinds of file are looked for, each behind its setting source:
//
//	user     <user dir>/CLAUDE.md (the user dir is ~/.claude by default)
//	project  CLAUDE.md and .claude/CLAUDE.md in the working directory and
//	         each parent up to the repository root (the first directory
//	         holding .git) or the home directory
//	local    CLAUDE.local.md in those same directories
//
// The user file comes first; then the directories from the outermost down
// to the working directory, each giving its CLAUDE.md, .claude/CLAUDE.md
// and CLAUDE.local.md in that order. A file may pull in others with @path
// imports (see [Imports]); an imported file follows the file that imports
// it, depth first, and has that file's kind. Every file appears once.
//
// Every file is judged on the file it reaches, after links: Options.Admit
// is asked about the path as written and about its physical path, and a
// project or local file (found or imported) that leads outside the project
// and the user dir is left out; the physical path is then read without
// following links (see [ReadPhysical]).
//
// Nothing here is fatal: a file that cannot be read, is not text, or an
// import that is missing, cyclic, too deep, denied or outside the project
// is left out and described in [Result.Problems], for the caller's
// diagnostics.
package memory

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// Kind is where a file comes from; it decides the setting source that
// loads it and the words it is introduced with.
type Kind string

// The kinds of memory file.
const (
	User    Kind = "user"    // the user's global file
	Project Kind = "project" // checked into the codebase
	Local   Kind = "local"   // the user's own file for this project, not checked in
)

// Description is the kind as the rendered block names it.
func (k Kind) Description() string {
	switch k {
	case User:
		return "user's private global instructions for all projects"
	case Local:
		return "user's private project instructions, not checked in"
	default:
		return "project instructions, checked into the codebase"
	}
}

// DefaultMaxDepth is how many @import hops are followed from a file found
// by location when Options.MaxDepth is 0.
const DefaultMaxDepth = 5

// MaxFileSize is the largest file read; a larger one is left out.
const MaxFileSize = 1 << 20

// Options say where to look and what to load. Cwd must be absolute.
type Options struct {
	Cwd string
	// Home is the user's home directory: the walk up from Cwd stops
	// there, and "~" in an import means it. Empty means neither.
	Home string
	// UserDir holds the user file; empty means Home/.claude (no user file
	// when Home is empty too).
	UserDir string
	// User, Project and Local select the kinds to load.
	User, Project, Local bool
	// Excludes are glob patterns (with ** for any number of directories)
	// matched against a file's absolute path; a file that matches one is
	// not loaded, found by location or imported. Patterns that are not
	// valid globs are reported in Result.Problems and otherwise ignored.
	Excludes []string
	// MaxDepth bounds the @import hops; 0 means DefaultMaxDepth.
	MaxDepth int
	// Admit, if set, is asked before any file is read (found by location
	// or imported), with the path as written and, when it differs, with
	// the physical path the name leads to (its links resolved); a non-nil
	// error for either leaves the file out, as a problem naming the error.
	// The caller's permission rules go here.
	Admit func(path string, k Kind) error
	// ProjectRoots are the directories project and local files may
	// import from (with their subdirectories), besides the user dir: an
	// import in such a file that leads elsewhere — ~/.ssh, /etc, or a
	// link to them — is left out, so a checked-in file cannot send the
	// user's private files to the model; a project or local file found by
	// location that is a link leading outside them (and outside its own
	// directory) is left out too. Empty means [ProjectRoot] of Cwd: the
	// repository root, or Cwd itself outside a repository (never the
	// home directory or "/"). User files may import anything.
	ProjectRoots []string
}

// File is one loaded file.
type File struct {
	// Path is the file's absolute path.
	Path string
	Kind Kind
	// Text is the file's content as written (without a UTF-8 byte order
	// mark), import lines included.
	Text string
	// ImportedFrom is the path of the file whose @import brought this one
	// in; empty for a file found by location.
	ImportedFrom string
}

// Result is what Load found.
type Result struct {
	// Files are the loaded files, in the order they are rendered.
	Files []File
	// Problems describe what was left out and why, one sentence each.
	Problems []string
}

// Load finds and reads the files o selects. It only reads the file system.
func Load(o Options) Result {
	l := &loader{o: o, seen: map[string]bool{}}
	if len(l.o.ProjectRoots) == 0 && (o.Project || o.Local) {
		// Not walkUp's top: outside a repository the walk goes up to the
		// home directory or "/", and the whole of it is no project.
		l.o.ProjectRoots = []string{ProjectRoot(o.Cwd, o.Home)}
	}
	if d := userDirOf(o); d != "" {
		// Personal instructions kept in the user dir may be imported by
		// a project file: the usual way to add one's own rules to a
		// shared CLAUDE.md.
		l.o.ProjectRoots = append(slices.Clip(l.o.ProjectRoots), d)
	}
	if l.o.MaxDepth <= 0 {
		l.o.MaxDepth = DefaultMaxDepth
	}
	for _, p := range o.Excludes {
		if doublestar.ValidatePathPattern(p) {
			l.excludes = append(l.excludes, p)
		} else {
			l.problem("claudeMdExcludes pattern %q is not a valid glob; it excludes nothing", p)
		}
	}
	userDir := userDirOf(o)
	userFile := ""
	if userDir != "" {
		userFile = filepath.Join(userDir, "CLAUDE.md")
	}
	if o.User && userFile != "" {
		l.found(userFile, User, userDir)
	}
	if o.Project || o.Local {
		for _, d := range walkUp(o.Cwd, o.Home) {
			if o.Project {
				l.found(filepath.Join(d, "CLAUDE.md"), Project, d)
				if p := filepath.Join(d, ".claude", "CLAUDE.md"); p != userFile {
					l.found(p, Project, d)
				}
			}
			if o.Local {
				l.found(filepath.Join(d, "CLAUDE.local.md"), Local, d)
			}
		}
	}
	return l.res
}

// userDirOf is the directory of the user file: Options.UserDir, else
// Home/.claude, else "".
func userDirOf(o Options) string {
	if o.UserDir == "" && o.Home != "" {
		return filepath.Join(o.Home, ".claude")
	}
	return o.UserDir
}

// RepoRoot returns the repository root of dir: dir or its nearest parent
// that holds a .git entry (a directory, or a file in a worktree). ok is
// false when there is none.
func RepoRoot(dir string) (root string, ok bool) {
	for d := filepath.Clean(dir); ; {
		if lexists(filepath.Join(d, ".git")) {
			return d, true
		}
		p := filepath.Dir(d)
		if p == d {
			return "", false
		}
		d = p
	}
}

// walkUp lists cwd and its parents up to the first repository root, the
// home directory or the file system's root, outermost first.
func walkUp(cwd, home string) []string {
	var dirs []string
	d := filepath.Clean(cwd)
	for {
		dirs = append(dirs, d)
		if lexists(filepath.Join(d, ".git")) {
			break
		}
		if home != "" && d == filepath.Clean(home) {
			break
		}
		p := filepath.Dir(d)
		if p == d {
			break
		}
		d = p
	}
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

type loader struct {
	o        Options
	excludes []string
	seen     map[string]bool // identities of the files loaded so far
	res      Result
}

func (l *loader) problem(format string, args ...any) {
	l.res.Problems = append(l.res.Problems, fmt.Sprintf(format, args...))
}

// errOutsideProject leaves out an import of a project or local file that
// leads outside the project, and errLinkOutside a project or local file
// found by location that is a link leading there.
var (
	errOutsideProject = errors.New("a project file may only import files inside the project")
	errLinkOutside    = errors.New("a project file may only lead to files inside the project")
)

// admit judges the file path names, whose physical path (links
// resolved) is phys: a project or local file must lead inside the project
// roots (or, found by location, inside dir, the directory it was found
// for), and Options.Admit must admit both path and phys.
func (l *loader) admit(path, phys string, k Kind, imported bool, dir string) error {
	leads := func(err error) error {
		if phys != filepath.Clean(path) {
			return fmt.Errorf("it leads to %s: %w", phys, err)
		}
		return err
	}
	if k != User {
		switch {
		case imported && !Within(phys, l.o.ProjectRoots...):
			return leads(errOutsideProject)
		case !imported && !Within(phys, append(slices.Clip(l.o.ProjectRoots), dir)...):
			return leads(errLinkOutside)
		}
	}
	if l.o.Admit == nil {
		return nil
	}
	if err := l.o.Admit(path, k); err != nil {
		return err
	}
	if phys != filepath.Clean(path) {
		if err := l.o.Admit(phys, k); err != nil {
			return leads(err)
		}
	}
	return nil
}

// excluded reports whether path matches a claudeMdExcludes pattern.
func (l *loader) excluded(path string) bool {
	for _, p := range l.excludes {
		if ok, _ := doublestar.PathMatch(p, path); ok {
			return true
		}
	}
	return false
}

// found loads a file found by location for directory dir; a missing one
// is not a problem.
func (l *loader) found(path string, k Kind, dir string) {
	if l.excluded(path) {
		return
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return
	}
	if l.seen[identity(path)] {
		return
	}
	l.load(path, k, "", "", dir, 0, nil)
}

// load reads path and appends it, then follows its imports. from is the
// importing file ("" for a file found by location) and imp the import as
// written there, dir the directory a file found by location was found for,
// depth the import hops from a file found by location, and stack the
// identities of the files on the way.
//
// The file is judged and read on its physical path: a name that cannot be
// resolved is judged as written (so that a refusal does not depend on
// whether a file outside exists) and then reported missing.
func (l *loader) load(path string, k Kind, from, imp, dir string, depth int, stack []string) {
	phys, perr := Physical(path)
	if perr != nil {
		phys = filepath.Clean(path)
	}
	err := l.admit(path, phys, k, from != "", dir)
	var text string
	switch {
	case err != nil:
	case perr != nil:
		err = readErr(perr)
	default:
		if testAfterJudge != nil {
			testAfterJudge(phys)
		}
		text, err = readText(phys)
	}
	if err != nil {
		if from == "" {
			l.problem("CLAUDE.md file %s is left out: %v", path, err)
		} else {
			l.problem("import @%s in %s is left out: %s: %v", imp, from, path, err)
		}
		return
	}
	id := phys
	l.seen[id] = true
	if strings.TrimSpace(text) != "" {
		l.res.Files = append(l.res.Files, File{Path: path, Kind: k, Text: text, ImportedFrom: from})
	}
	stack = append(stack, id)
	for _, imp := range Imports(text) {
		target := l.resolve(imp, filepath.Dir(path))
		if target == "" {
			l.problem("import @%s in %s is left out: ~ needs a home directory", imp, path)
			continue
		}
		if l.excluded(target) {
			continue
		}
		tid := identity(target)
		switch {
		case contains(stack, tid):
			l.problem("import @%s in %s is left out: it leads back to %s, a cycle", imp, path, target)
		case l.seen[tid]:
			// Already given in full, earlier.
		case depth+1 > l.o.MaxDepth:
			l.problem("import @%s in %s is left out: imports nest at most %d deep", imp, path, l.o.MaxDepth)
		default:
			l.load(target, k, path, imp, "", depth+1, stack)
		}
	}
}

// resolve makes an import path absolute: ~ is the home directory, and a
// relative path is relative to dir, the importing file's directory. It
// returns "" for a ~ path without a home directory.
func (l *loader) resolve(p, dir string) string {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if l.o.Home == "" {
			return ""
		}
		return filepath.Join(l.o.Home, p[1:])
	case filepath.IsAbs(p):
		return filepath.Clean(p)
	default:
		return filepath.Join(dir, p)
	}
}

// testAfterJudge, set by tests, runs between the judgement of a file and
// its read: a test swaps a link in there.
var testAfterJudge func(phys string)

// readText reads a memory file at its physical path phys, without
// following links, and checks that it is text.
func readText(phys string) (string, error) {
	b, err := ReadPhysical(phys, MaxFileSize)
	if err != nil {
		return "", readErr(err)
	}
	b = []byte(strings.TrimPrefix(string(b), "\xef\xbb\xbf"))
	if !utf8.Valid(b) || strings.IndexByte(string(b), 0) >= 0 {
		return "", errors.New("it is not a UTF-8 text file")
	}
	return string(b), nil
}

// readErr words an error of reading a memory file for a problem.
func readErr(err error) error {
	var big *TooLargeError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("no such file")
	case errors.Is(err, ErrIsDir), errors.Is(err, ErrNotRegular), errors.Is(err, ErrMoved), errors.As(err, &big):
		return err
	}
	return fmt.Errorf("cannot read it: %w", err)
}

// identity is what tells two paths to one file apart: the path with its
// symbolic links resolved, where that works.
func identity(path string) string {
	if r, err := Physical(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
