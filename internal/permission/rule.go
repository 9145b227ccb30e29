package permission

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// RuleValue is one permission rule as the reference's JSON carries it
// (PermissionRuleValue): a tool name and an optional specifier.
type RuleValue struct {
	ToolName    string `json:"toolName"`
	RuleContent string `json:"ruleContent,omitempty"`
}

// String renders the rule in the text form that ParseRule reads: Tool, or
// Tool(content) with parentheses and backslashes in content escaped.
func (v RuleValue) String() string {
	if v.RuleContent == "" {
		return v.ToolName
	}
	var b strings.Builder
	b.WriteString(v.ToolName)
	b.WriteByte('(')
	for _, r := range v.RuleContent {
		if r == '(' || r == ')' || r == '\\' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte(')')
	return b.String()
}

// RuleError is the error for a malformed rule; it names the rule.
type RuleError struct {
	Rule   string
	Reason string
}

func (e *RuleError) Error() string {
	return fmt.Sprintf("permission: malformed rule %q: %s", e.Rule, e.Reason)
}

// ParseRule reads a rule in the form Tool or Tool(specifier).
//
// The tool name is made of letters, digits, '_', '-', '.' and, for
// tool-name globs, '*'. The specifier runs from the first '(' to the final
// ')'. Inside it, "\(" and "\)" stand for literal parentheses and "\\" for
// a backslash; any other backslash is kept as written, and unescaped
// parentheses must balance. Tool() and Tool(*) mean the whole tool, as
// plain Tool does; ParseRule keeps the content as written and the matcher
// treats them alike. Legacy tool names (Task, KillShell, …) are mapped to
// their current names.
func ParseRule(s string) (RuleValue, error) {
	orig := s
	s = strings.TrimSpace(s)
	if s == "" {
		return RuleValue{}, &RuleError{orig, "empty rule"}
	}
	if !utf8.ValidString(s) {
		return RuleValue{}, &RuleError{orig, "not valid UTF-8"}
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return RuleValue{}, &RuleError{orig, "control character in rule"}
		}
	}
	open := strings.IndexByte(s, '(')
	name := s
	content := ""
	if open >= 0 {
		name = strings.TrimSpace(s[:open])
		if !strings.HasSuffix(s, ")") {
			return RuleValue{}, &RuleError{orig, "missing closing ')' at the end"}
		}
		c, err := unescapeContent(s[open+1 : len(s)-1])
		if err != nil {
			return RuleValue{}, &RuleError{orig, err.Error()}
		}
		content = c
	} else if strings.ContainsRune(s, ')') {
		return RuleValue{}, &RuleError{orig, "')' without '('"}
	}
	if name == "" {
		return RuleValue{}, &RuleError{orig, "missing tool name"}
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.' || r == '*') {
			return RuleValue{}, &RuleError{orig, fmt.Sprintf("invalid character %q in tool name %q", r, name)}
		}
	}
	return RuleValue{ToolName: canonicalToolName(name), RuleContent: content}, nil
}

// unescapeContent undoes the escaping of a rule specifier and checks that
// unescaped parentheses balance.
func unescapeContent(s string) (string, error) {
	// Without a backslash there is nothing to unescape: s itself is the
	// content, and no copy is made.
	plain := !strings.Contains(s, `\`)
	var b strings.Builder
	if !plain {
		b.Grow(len(s))
	}
	depth := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !plain && c == '\\' && i+1 < len(s) && (s[i+1] == '(' || s[i+1] == ')' || s[i+1] == '\\') {
			b.WriteByte(s[i+1])
			i++
			continue
		}
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return "", errors.New("unbalanced ')' in the specifier (escape it as \\))")
			}
		}
		if !plain {
			b.WriteByte(c)
		}
	}
	if depth != 0 {
		return "", errors.New("unbalanced '(' in the specifier (escape it as \\()")
	}
	if plain {
		return s, nil
	}
	return b.String(), nil
}

// MustParseRule is ParseRule for rules known to be well formed; it panics
// on a malformed one.
func MustParseRule(s string) RuleValue {
	v, err := ParseRule(s)
	if err != nil {
		panic(err)
	}
	return v
}
