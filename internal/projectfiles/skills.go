package projectfiles

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Skill is one skill: a directory under .claude/skills holding SKILL.md
// and, beside it, any supporting files the body refers to.
type Skill struct {
	// Name is the frontmatter's name, else the directory's name.
	Name string
	// Description tells the model when to use it: the frontmatter's
	// description, else the first non-empty line of the body.
	Description string
	// AllowedTools are permission rules ("Read", "Bash(git diff:*)") the
	// skill asks to have granted while it is in use.
	AllowedTools []string
	// Dir is the skill's directory and Path its SKILL.md.
	Dir, Path string
	// Files lists the supporting files, relative to Dir, sorted (at most
	// maxSupportFiles of them).
	Files []string
	// Body is the Markdown after the frontmatter.
	Body string
	// Source is the Dir.Source it came from.
	Source string
}

type skillFront struct {
	Name         string `yaml:"name"`
	Description  string `yaml:"description"`
	AllowedTools List   `yaml:"allowed-tools"`
}

// maxSupportFiles bounds the supporting files listed for a skill.
const maxSupportFiles = 100

func (l *loader) skills(d Dir) {
	for i, root := range l.roots("skill", d, "skills", d.ExtraSkills) {
		if _, err := os.Stat(filepath.Join(root, "SKILL.md")); err == nil && i > 0 {
			l.skill(d, root) // an extra path that is one skill's directory
			continue
		}
		entries, err := os.ReadDir(root)
		if err != nil {
			if !os.IsNotExist(err) {
				l.problem("skills directory %s: %v", root, err)
			}
			continue
		}
		for _, e := range entries {
			dir := filepath.Join(root, e.Name())
			if info, err := os.Stat(dir); err != nil || !info.IsDir() {
				continue // a stray file beside the skill directories
			}
			if _, err := os.Stat(filepath.Join(dir, "SKILL.md")); err != nil {
				l.problem("skill directory %s is ignored: it has no SKILL.md", dir)
				continue
			}
			l.skill(d, dir)
		}
	}
}

// skill loads the skill of dir, which holds SKILL.md.
func (l *loader) skill(d Dir, dir string) {
	path := filepath.Join(dir, "SKILL.md")
	data, ok := l.read(d, "skill", path)
	if !ok {
		return
	}
	var f skillFront
	body, keys, err := parse(data, &f)
	if err != nil {
		l.problem("skill file %s is ignored: %v", path, err)
		return
	}
	name := strings.TrimSpace(f.Name)
	if name == "" {
		name = filepath.Base(dir)
	}
	if why := validName(name); why != "" {
		l.problem("skill file %s is ignored: %s", path, why)
		return
	}
	name = d.named(name)
	if extra := unknownKeys(keys, "name", "description", "allowed-tools"); len(extra) > 0 {
		l.problem("skill %s (%s): frontmatter keys %s are not honoured", name, path, strings.Join(extra, ", "))
	}
	if !l.claim("skill", name, path) {
		return
	}
	desc := strings.TrimSpace(f.Description)
	if desc == "" {
		desc = firstLine(body)
	}
	l.res.Skills = append(l.res.Skills, Skill{Name: name, Description: desc, AllowedTools: f.AllowedTools,
		Dir: dir, Path: path, Files: supportFiles(dir), Body: body, Source: d.Source})
}

// supportFiles lists the files of a skill directory other than SKILL.md.
func supportFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil || rel == "SKILL.md" {
			return nil
		}
		if len(out) == maxSupportFiles {
			return fs.SkipAll
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(out)
	return out
}

// firstLine is the first non-empty line of s, without Markdown heading
// marks.
func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#")); line != "" {
			return line
		}
	}
	return ""
}
