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

	"github.com/agentloop/agentloop/internal/memory"
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
	// Within, when set, bounds where the files of this directory may
	// lead: a skill, command or agent file whose physical path (its links
	// resolved) is not inside one of these directories — a link in a
	// cloned repository's .claude to ~/.ssh/id_rsa, say — is left out and
	// reported. Empty means no bound (the user's own directory, a
	// plugin the host chose).
	Within []string
}

// Options are Load's.
type Options struct {
	// Admit, if set, is asked before a skill, command or agent file is
	// read, with the path as found and, when it differs, with the physical
	// path it leads to (its links resolved); a non-nil error for either
	// leaves the file out, reported with the error. The caller's Read
	// deny rules go here.
	Admit func(path string) error
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

// testAfterJudge, set by tests, runs between the judgement of a file and
// its read: a test swaps a link in there.
var testAfterJudge func(phys string)

// maxFileSize bounds what is read of one file: these files are prompts,
// and a huge one is a mistake.
const maxFileSize = 1 << 20

// Load reads the skills, commands and agents of dirs, which are ordered
// from the highest precedence to the lowest: of two entries of one kind
// with the same name, the one from the earlier directory is kept and the
// other reported. A directory that does not exist is skipped silently
// (having no .claude/skills is the common case).
//
// Every file is judged on the file it reaches: its name is resolved
// (memory.Physical), the physical path must lie within the Dir's Within
// and be admitted by o.Admit (as must the name), and the physical path is
// then read without following links (memory.ReadPhysical), so a link
// swapped in after the judgement makes the read fail.
func Load(dirs []Dir, o Options) Result {
	var r Result
	l := &loader{res: &r, seen: map[string]string{}, admit: o.Admit}
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
	res   *Result
	seen  map[string]string // kind + "\x00" + name → the path that won
	admit func(path string) error
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

// read returns the contents of a file of d, reporting (and returning
// false for) one that cannot be read, is too large, leads outside
// d.Within or is not admitted. It judges and reads the physical file.
func (l *loader) read(d Dir, kind, path string) ([]byte, bool) {
	phys, err := memory.Physical(path)
	if err != nil {
		l.problem("%s file %s is ignored: %v", kind, path, err)
		return nil, false
	}
	linked := phys != filepath.Clean(path)
	if len(d.Within) > 0 && !memory.Within(phys, d.Within...) {
		l.problem("%s file %s is left out: it leads to %s, outside the project and the user directory", kind, path, phys)
		return nil, false
	}
	if l.admit != nil {
		if err := l.admit(path); err != nil {
			l.problem("%s file %s is left out: %v", kind, path, err)
			return nil, false
		}
		if linked {
			if err := l.admit(phys); err != nil {
				l.problem("%s file %s is left out: it leads to %s: %v", kind, path, phys, err)
				return nil, false
			}
		}
	}
	if testAfterJudge != nil {
		testAfterJudge(phys)
	}
	data, err := memory.ReadPhysical(phys, maxFileSize)
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
