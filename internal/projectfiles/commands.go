package projectfiles

import (
	"path/filepath"
	"strconv"
	"strings"
)

// Command is one slash command: a Markdown file under .claude/commands.
// Its name is its path below that directory without ".md", with
// subdirectories joined by ':' (commands/frontend/lint.md is
// "frontend:lint").
type Command struct {
	Name         string
	Description  string
	ArgumentHint string
	// AllowedTools are permission rules in force while the command's
	// prompt runs; Model is the model of that run ("" for the session's).
	AllowedTools []string
	Model        string
	Path         string
	Body         string
	Source       string
}

type commandFront struct {
	Description  string `yaml:"description"`
	ArgumentHint string `yaml:"argument-hint"`
	AllowedTools List   `yaml:"allowed-tools"`
	Model        string `yaml:"model"`
}

func (l *loader) commands(d Dir) {
	for _, root := range l.roots("command", d, "commands", d.ExtraCommands) {
		l.commandsIn(d, root)
	}
}

// commandsIn loads the commands of root: a directory of .md files, or
// one .md file.
func (l *loader) commandsIn(d Dir, root string) {
	for _, path := range l.mdFiles("command", root) {
		rel, err := filepath.Rel(root, path)
		if err != nil {
			continue
		}
		if rel == "." {
			rel = filepath.Base(path) // root is the file itself
		}
		name := strings.ReplaceAll(filepath.ToSlash(strings.TrimSuffix(rel, filepath.Ext(rel))), "/", ":")
		if why := validName(name); why != "" {
			l.problem("command file %s is ignored: %s", path, why)
			continue
		}
		name = d.named(name)
		data, ok := l.read(d, "command", path)
		if !ok {
			continue
		}
		var f commandFront
		body, keys, err := parse(data, &f)
		if err != nil {
			l.problem("command file %s is ignored: %v", path, err)
			continue
		}
		if extra := unknownKeys(keys, "description", "argument-hint", "allowed-tools", "model"); len(extra) > 0 {
			l.problem("command /%s (%s): frontmatter keys %s are not honoured", name, path, strings.Join(extra, ", "))
		}
		if !l.claim("command", name, path) {
			continue
		}
		desc := strings.TrimSpace(f.Description)
		if desc == "" {
			desc = firstLine(body)
		}
		l.res.Commands = append(l.res.Commands, Command{Name: name, Description: desc, ArgumentHint: f.ArgumentHint,
			AllowedTools: f.AllowedTools, Model: f.Model, Path: path, Body: body, Source: d.Source})
	}
}

// ParseInvocation reads a prompt of the form "/name args…": ok is false
// when the prompt does not start with a slash followed by a name (so
// "/ tmp", "//x" and "/usr/bin/ls" are not invocations: a name holds no
// slash). args is the rest of the prompt after the name and the blank
// that follows it, trimmed.
func ParseInvocation(prompt string) (name, args string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(prompt, " \t"), "/")
	if !found {
		return "", "", false
	}
	end := strings.IndexAny(rest, " \t\r\n")
	if end < 0 {
		end = len(rest)
	}
	name = rest[:end]
	if name == "" || strings.Contains(name, "/") || validName(name) != "" {
		return "", "", false
	}
	return name, strings.TrimSpace(rest[end:]), true
}

// Expand fills a command or skill body with the arguments of its
// invocation, as the reference does: $ARGUMENTS becomes args as typed;
// $0, $1, … and $ARGUMENTS[0], $ARGUMENTS[1], … are the positional
// arguments counted from zero (split on blanks; "double" or 'single'
// quotes group words). A positional placeholder past the last argument
// is left as written. When the body uses none of these forms and args is
// not empty, "\n\nARGUMENTS: <args>" is appended, so the arguments are
// never lost.
func Expand(body, args string) string {
	pos := Fields(args)
	used := false
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		if body[i] != '$' {
			b.WriteByte(body[i])
			continue
		}
		rest := body[i+1:]
		if strings.HasPrefix(rest, "ARGUMENTS") {
			used = true
			after := rest[len("ARGUMENTS"):]
			if n, w, ok := index(after); ok {
				if n < len(pos) {
					b.WriteString(pos[n])
				} else {
					b.WriteString(body[i : i+1+len("ARGUMENTS")+w])
				}
				i += len("ARGUMENTS") + w
				continue
			}
			b.WriteString(args)
			i += len("ARGUMENTS")
			continue
		}
		j := i + 1
		for j < len(body) && body[j] >= '0' && body[j] <= '9' {
			j++
		}
		if j == i+1 {
			b.WriteByte('$')
			continue
		}
		used = true
		n, err := strconv.Atoi(body[i+1 : j])
		if err == nil && n < len(pos) {
			b.WriteString(pos[n])
		} else {
			b.WriteString(body[i:j])
		}
		i = j - 1
	}
	out := b.String()
	if !used && strings.TrimSpace(args) != "" {
		out += "\n\nARGUMENTS: " + args
	}
	return out
}

// index reads "[N]" at the start of s: the number, the bytes it spans.
func index(s string) (n, width int, ok bool) {
	end := strings.IndexByte(s, ']')
	if !strings.HasPrefix(s, "[") || end < 2 {
		return 0, 0, false
	}
	n, err := strconv.Atoi(s[1:end])
	if err != nil || n < 0 {
		return 0, 0, false
	}
	return n, end + 1, true
}

// Fields splits args on blanks, keeping words inside "double" or 'single'
// quotes together (quotes removed). An unclosed quote runs to the end.
func Fields(args string) []string {
	var out []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range args {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}
