package memory

import "strings"

// Imports returns the @import paths of a memory file's text, in order.
//
// An import is an "@" at the start of a line or after white space,
// followed by a path up to the next white space ("\ " is a space inside
// the path). Trailing punctuation (.,;:!?) and closing brackets or quotes
// are not part of the path. Only what looks like a path counts: it has a
// "/" or a ".", or starts with "~"; so "@alice" (a mention) and
// "me@example.com" are not imports, nor is anything inside a fenced code
// block or an inline code span, nor a URL.
func Imports(text string) []string {
	var out []string
	fence := ""
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimLeft(line, " \t")
		if fence != "" {
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fence = t[:3]
			continue
		}
		out = append(out, lineImports(withoutCodeSpans(line))...)
	}
	return out
}

// withoutCodeSpans blanks the text between pairs of backticks.
func withoutCodeSpans(line string) string {
	if !strings.Contains(line, "`") {
		return line
	}
	parts := strings.Split(line, "`")
	var b strings.Builder
	for i, p := range parts {
		switch {
		case i%2 == 0:
			b.WriteString(p)
		case i == len(parts)-1:
			b.WriteString("`" + p) // an unpaired backtick opens nothing
		default:
			b.WriteString(" ")
		}
	}
	return b.String()
}

// lineImports returns the imports of one line outside code.
func lineImports(line string) []string {
	var out []string
	for i := 0; i < len(line); i++ {
		if line[i] != '@' || (i > 0 && !isSpace(line[i-1])) {
			continue
		}
		var p strings.Builder
		j := i + 1
		for j < len(line) && !isSpace(line[j]) {
			if line[j] == '\\' && j+1 < len(line) && line[j+1] == ' ' {
				p.WriteByte(' ')
				j += 2
				continue
			}
			p.WriteByte(line[j])
			j++
		}
		i = j - 1
		path := strings.TrimRight(p.String(), ".,;:!?)]}>\"'")
		if looksLikePath(path) {
			out = append(out, path)
		}
	}
	return out
}

func looksLikePath(p string) bool {
	if p == "" || p[0] == '@' || strings.Contains(p, "://") || strings.Trim(p, ".") == "" {
		return false
	}
	return strings.ContainsAny(p, "/.") || p[0] == '~'
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
