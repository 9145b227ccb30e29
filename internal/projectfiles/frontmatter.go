// Package projectfiles discovers the Markdown files a project and a user
// keep under .claude/ to extend a session: skills
// (skills/<name>/SKILL.md), slash commands (commands/**/*.md) and
// subagents (agents/*.md). Each file is an optional YAML frontmatter block
// followed by a Markdown body. Loading never fails as a whole: a file that
// cannot be read or whose frontmatter is malformed is left out and
// described in the result's Problems, for the caller to report.
package projectfiles

import (
	"bytes"
	"fmt"
	"strings"

	"go.yaml.in/yaml/v4"
)

// Split separates a file into its frontmatter and its body. The
// frontmatter is the text between a first line "---" and the next line
// "---" (trailing spaces and a CR before the newline allowed); without an
// opening line the whole file is the body and front is nil. An opening
// line without a closing one is an error: the author meant frontmatter and
// the file would otherwise be sent as a prompt with its header in it.
// A leading UTF-8 byte order mark is skipped.
func Split(data []byte) (front []byte, body string, err error) {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	first, rest, _ := bytes.Cut(data, []byte("\n"))
	if !isFence(first) {
		return nil, string(data), nil
	}
	for off := 0; off <= len(rest); {
		line, after, found := bytes.Cut(rest[off:], []byte("\n"))
		if isFence(line) {
			front = rest[:off]
			if !found {
				return front, "", nil
			}
			return front, string(after), nil
		}
		if !found {
			break
		}
		off += len(line) + 1
	}
	return nil, "", fmt.Errorf("the frontmatter opened by the first line \"---\" is never closed by a line \"---\"")
}

// isFence reports whether line is a frontmatter delimiter.
func isFence(line []byte) bool {
	return string(bytes.TrimRight(line, " \t\r")) == "---"
}

// parse splits data and decodes its frontmatter into dst, returning the
// body with surrounding blank lines trimmed and the frontmatter as a plain
// mapping (nil without frontmatter), for finding keys dst does not know.
func parse(data []byte, dst any) (string, map[string]any, error) {
	front, body, err := Split(data)
	if err != nil {
		return "", nil, err
	}
	var keys map[string]any
	if len(bytes.TrimSpace(front)) > 0 {
		if err := yaml.Unmarshal(front, &keys); err != nil {
			return "", nil, fmt.Errorf("malformed frontmatter: %w", err)
		}
		if err := yaml.Unmarshal(front, dst); err != nil {
			return "", nil, fmt.Errorf("malformed frontmatter: %w", err)
		}
	}
	return strings.TrimSpace(body), keys, nil
}

// List is a frontmatter field that holds names either as a YAML list or
// as one string separated by commas (or spaces, when there is no comma),
// the two forms the reference accepts for tools lists.
type List []string

// UnmarshalYAML implements yaml.Unmarshaler.
func (l *List) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = splitNames(s)
		return nil
	case yaml.SequenceNode:
		var out []string
		for _, item := range n.Content {
			var s string
			if err := item.Decode(&s); err != nil {
				return fmt.Errorf("line %d: a list entry must be a string: %w", item.Line, err)
			}
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
		*l = out
		return nil
	}
	return fmt.Errorf("line %d: expected a list or a comma-separated string", n.Line)
}

// splitNames splits "Read, Grep" or "Read Grep" into names. Commas win,
// so "Bash(git diff:*), Read" keeps the space inside the rule.
func splitNames(s string) []string {
	var parts []string
	if strings.Contains(s, ",") {
		parts = strings.Split(s, ",")
	} else {
		parts = strings.Fields(s)
	}
	var out []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
