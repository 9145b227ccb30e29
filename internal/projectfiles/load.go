package projectfiles

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Dir is one .claude directory to load from.
type Dir struct {
	// Path is the .claude directory itself.
	Path string
	// Source names the setting source it belongs to ("user", "project",
	// "plugin"), recorded on what is loaded from it.
	Source string
	// Namespace, when set, prefixes every name loaded from the directory
	// as "<Namespace>:<name>", so that the skills, commands and agents of
	// two plugins never clash (a plugin's are namespaced by its name).
	Namespace string
	// ExtraCommands, ExtraAgents and ExtraSkills are further places to
	// load each kind from, besides the default subdirectory of Path: a
	// directory laid out like the default one, or a single file (a
	// command or agent .md file, a skill directory holding SKILL.md).
	// Unlike a missing default subdirectory, a missing extra path is
	// reported.
	ExtraCommands, ExtraAgents, ExtraSkills []string
}

// named is name in d's namespace.
func (d Dir) named(name string) string {
	if d.Namespace == "" {
		return name
	}
	return d.Namespace + ":" + name
}

// roots are the default subdirectory sub of d.Path, which may be missing,
// then the extra paths, which must exist.
func (l *loader) roots(kind string, d Dir, sub string, extra []string) []string {
	out := []string{filepath.Join(d.Path, sub)}
	for _, p := range extra {
		if _, err := os.Stat(p); err != nil {
			l.problem("%s path %s is ignored: %v", kind, p, err)
			continue
		}
		out = append(out, p)
	}
	return out
}

// Result is what Load found. Each list is sorted by name and holds one
// entry per name.
type Result struct {
	Skills   []Skill
	Commands []Command
	Agents   []Agent
	// Problems describes, one sentence each, the files left out (unreadable,
	// malformed frontmatter, a bad name) and the entries another one of the
	// same name shadows.
	Problems []string
}

// maxFileSize bounds what is read of one file: these files are prompts,
// and a huge one is a mistake.
const maxFileSize = 1 << 20

// Load reads the skills, commands and agents of dirs, which are ordered
// from the highest precedence to the lowest: of two entries of one kind
// with the same name, the one from the earlier directory is kept and the
// other reported. A directory that does not exist is skipped silently
// (having no .claude/skills is the common case).
func Load(dirs []Dir) Result {
	var r Result
	l := &loader{res: &r, seen: map[string]string{}}
	for _, d := range dirs {
		l.skills(d)
		l.commands(d)
		l.agents(d)
	}
	sort.Slice(r.Skills, func(i, j int) bool { return r.Skills[i].Name < r.Skills[j].Name })
	sort.Slice(r.Commands, func(i, j int) bool { return r.Commands[i].Name < r.Commands[j].Name })
	sort.Slice(r.Agents, func(i, j int) bool { return r.Agents[i].Name < r.Agents[j].Name })
	return r
}

type loader struct {
	res  *Result
	seen map[string]string // kind + "\x00" + name → the path that won
}

func (l *loader) problem(format string, args ...any) {
	l.res.Problems = append(l.res.Problems, fmt.Sprintf(format, args...))
}

// claim records name as taken for kind by path; false (and a problem) when
// an earlier directory already supplied it.
func (l *loader) claim(kind, name, path string) bool {
	key := kind + "\x00" + name
	if prev, ok := l.seen[key]; ok {
		l.problem("%s %q in %s is ignored: %s defines the same name and takes precedence", kind, name, path, prev)
		return false
	}
	l.seen[key] = path
	return true
}

// read returns a file's contents, reporting (and returning false for) one
// that cannot be read or is too large.
func (l *loader) read(kind, path string) ([]byte, bool) {
	info, err := os.Stat(path)
	if err == nil && info.Size() > maxFileSize {
		l.problem("%s file %s is ignored: it is larger than %d bytes", kind, path, maxFileSize)
		return nil, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		l.problem("%s file %s is ignored: %v", kind, path, err)
		return nil, false
	}
	return data, true
}

// mdFiles lists the .md files under root, recursively, sorted; nil when
// root does not exist.
func (l *loader) mdFiles(kind, root string) []string {
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return fs.SkipAll
			}
			l.problem("%s directory %s: %v", kind, p, err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md") {
			out = append(out, p)
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		l.problem("%s directory %s: %v", kind, root, err)
	}
	slices.Sort(out)
	return out
}

// validName reports why name cannot name a skill, command or agent ("" when
// it can): it appears in permission rules (Skill(name)) and after a slash
// in prompts, so it may not hold spaces, parentheses, commas or control
// characters, nor start with a slash.
func validName(name string) string {
	switch {
	case name == "":
		return "its name is empty"
	case strings.HasPrefix(name, "/"):
		return "its name starts with a slash"
	case strings.ContainsAny(name, "(), \t*\\"):
		return "its name holds a space, a parenthesis, a comma, a backslash or '*'"
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return "its name holds a control character"
		}
	}
	return ""
}

// unknownKeys lists the keys of a frontmatter mapping that are not in
// known, sorted.
func unknownKeys(m map[string]any, known ...string) []string {
	var out []string
	for k := range m {
		if !slices.Contains(known, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
