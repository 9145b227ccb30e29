package permission

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

type ruleKind uint8

const (
	kindWhole  ruleKind = iota // the whole tool (or a tool-name glob)
	kindBash                   // a Bash/Monitor command pattern
	kindPath                   // a Read/Edit path pattern
	kindDomain                 // WebFetch(domain:…)
	kindParam                  // Tool(param:value)
	kindName                   // Agent(type), Skill(name)
	kindOpaque                 // a specifier the checker cannot evaluate (PowerShell)
	kindInert                  // accepted but never consulted (see Rule.Warning)
)

// rule is a compiled rule of a rule set.
type rule struct {
	Value    RuleValue
	Behavior Behavior
	Source   Source
	// Warning says why the rule has no effect, for rules the reference
	// accepts but never consults (and a few more, see the package doc).
	Warning string

	kind     ruleKind
	toolGlob *wildcard
	bash     *bashPattern
	path     *pathPattern
	pathTool string // Glob/Grep path rules act on that tool only
	domain   *domainPattern
	param    *paramPattern
	name     *namePattern
}

// String is the rule's text.
func (r *rule) String() string { return r.Value.String() }

var paramReOnce lazy.Value[*regexp.Regexp] // the value of paramRe, built at its first use

func paramRe() *regexp.Regexp { return paramReOnce.Get(newParamRe) }

func newParamRe() *regexp.Regexp {
	return regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*):(.*)$`)
}

// compileRule prepares a rule for matching.
func compileRule(v RuleValue, b Behavior, src Source, bases pathBases, fold bool) (*rule, error) {
	r := &rule{Value: v, Behavior: b, Source: src}
	tool, content := v.ToolName, strings.TrimSpace(v.RuleContent)
	inert := func(why string) (*rule, error) {
		r.kind, r.Warning = kindInert, fmt.Sprintf("rule %s is ignored: %s", v, why)
		return r, nil
	}
	if strings.Contains(tool, "*") {
		if content != "" && content != "*" {
			return inert("a tool-name glob takes no specifier")
		}
		if b == Allow {
			// Allow globs must start with a literal mcp__<server>__.
			rest, ok := strings.CutPrefix(tool, "mcp__")
			server, _, hasTool := strings.Cut(rest, "__")
			if !ok || !hasTool || server == "" || strings.Contains(server, "*") {
				return inert("allow rules accept tool-name globs only after a literal mcp__<server>__")
			}
		}
		w := newWildcard(tool)
		r.kind, r.toolGlob = kindWhole, &w
		return r, nil
	}
	if content == "" || content == "*" || tool == "WebFetch" && content == "domain:*" {
		r.kind = kindWhole
		return r, nil
	}
	param := func() (*rule, error) {
		m := paramRe().FindStringSubmatch(content)
		if b == Allow {
			return inert("parameter rules apply to deny and ask rules only")
		}
		if primaryFields()[m[1]] {
			return inert("parameter rules cannot name the field " + m[1])
		}
		r.kind, r.param = kindParam, &paramPattern{key: m[1], value: newWildcard(m[2])}
		return r, nil
	}
	isParam := func() bool {
		m := paramRe().FindStringSubmatch(content)
		if m == nil {
			return false
		}
		if keys, ok := paramKeys()[tool]; ok {
			return keys[m[1]]
		}
		return true
	}
	switch tool {
	case "Bash", "Monitor":
		if isParam() {
			return param()
		}
		if rest, ok := strings.CutPrefix(content, "command:"); ok {
			if b == Allow {
				return inert("parameter rules cannot name the field command")
			}
			// The reference ignores this form; a deny or ask rule written
			// so is read as the command pattern it obviously means.
			content = strings.TrimSpace(rest)
		}
		p := compileBashPattern(content)
		r.kind, r.bash = kindBash, &p
		return r, nil
	case "PowerShell":
		if b == Allow {
			return inert("PowerShell command rules are not evaluated by this checker")
		}
		r.kind = kindOpaque
		return r, nil
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep":
		if b == Allow && tool != "Read" && tool != "Edit" {
			return inert(tool + " path rules are never consulted; use Edit(…) or Read(…)")
		}
		p, err := compilePathPattern(content, b, bases, fold)
		if err != nil {
			return nil, &RuleError{v.String(), err.Error()}
		}
		r.kind, r.path = kindPath, &p
		if tool == "Glob" || tool == "Grep" {
			r.pathTool = tool
		}
		return r, nil
	case "WebFetch":
		if d, ok := strings.CutPrefix(content, "domain:"); ok {
			p, err := compileDomain(d)
			if err != nil {
				return nil, &RuleError{v.String(), err.Error()}
			}
			r.kind, r.domain = kindDomain, &p
			return r, nil
		}
		if isParam() {
			return param()
		}
		return inert("WebFetch rules take the form WebFetch(domain:host)")
	case "Agent":
		if isParam() {
			return param()
		}
		p := newNamePattern(content)
		r.kind, r.name = kindName, &p
		return r, nil
	case "Skill":
		if isParam() {
			return param()
		}
		p := newNamePattern(content)
		r.kind, r.name = kindName, &p
		return r, nil
	}
	if isParam() {
		return param()
	}
	return inert(tool + " takes no specifier")
}

// appliesTo reports whether the rule concerns calls of tool at all.
func (r *rule) appliesTo(tool string) bool {
	if r.toolGlob != nil {
		return r.toolGlob.match(tool)
	}
	rt := r.Value.ToolName
	if rt == tool {
		return true
	}
	if isMCPTool(rt) && !strings.Contains(strings.TrimPrefix(rt, "mcp__"), "__") {
		return strings.HasPrefix(tool, rt+"__") // mcp__server covers its tools
	}
	switch r.kind {
	case kindWhole, kindPath:
		// Read rules govern every reading tool and Edit rules every
		// writing one, as the reference looks them up.
		switch toolClass(tool) {
		case classRead:
			return rt == "Read" || r.kind == kindPath && rt == tool
		case classEdit:
			if r.kind == kindPath && r.Behavior != Allow && (rt == "Write" || rt == "MultiEdit" || rt == "NotebookEdit") {
				return true
			}
			return rt == "Edit"
		}
	}
	return false
}

// bashPattern is a compiled Bash(…) specifier.
type bashPattern struct {
	full, head wildcard
	tail       bool // a trailing " *" (or ":*") that may also match nothing
}

// compileBashPattern reads a command pattern: "npm run build" (exact),
// "git status:*" (legacy prefix), "*" anywhere matching any text. The text
// is put through the shell parser, so that quoting in the rule is
// normalized the way it is in commands.
func compileBashPattern(content string) bashPattern {
	base, tail := content, false
	if b, ok := strings.CutSuffix(content, ":*"); ok {
		base, tail = b, true
	} else if b, ok := strings.CutSuffix(content, " *"); ok {
		base, tail = strings.TrimRight(b, " "), true
	}
	c := canonPattern(base)
	p := bashPattern{head: newWildcard(c), tail: tail}
	if tail {
		p.full = newWildcard(c + " *")
	} else {
		p.full = p.head
	}
	return p
}

// canonPattern renders a pattern's text as commands are rendered, when it
// reads as one simple command.
func canonPattern(base string) string {
	a := &analyzer{pattern: true}
	a.parse(strings.ReplaceAll(base, "*", patternStar))
	if len(a.problems) > 0 || len(a.cmds) != 1 || len(a.redirs) > 0 || len(a.cmds[0].args) == 0 {
		return base
	}
	c := a.cmds[0]
	for _, w := range c.args {
		if w.kind != wordLiteral {
			return base
		}
	}
	for _, as := range c.assigns {
		if as.value.kind != wordLiteral {
			return base
		}
	}
	return strings.ReplaceAll(renderCommand(c.assigns, c.args, true, false), patternStar, "*")
}

// renderDeny renders a form for deny and ask rules: like renderCommand,
// but a glob counts as unknown, since files can be named anything.
func renderDeny(args []shWord) string {
	parts := make([]string, len(args))
	for i, w := range args {
		if w.kind == wordGlob {
			parts[i] = unknownWord
		} else {
			parts[i] = w.canon(false)
		}
	}
	return strings.Join(parts, " ")
}

// renderCommand renders a simple command for matching: its assignments
// (all of them, or only those an allow rule may not ignore) and its words.
func renderCommand(assigns []shAssign, args []shWord, pattern, dropSafe bool) string {
	var parts []string
	for _, as := range assigns {
		if dropSafe && safeAssign(as) {
			continue
		}
		parts = append(parts, as.name+"="+as.value.canon(pattern))
	}
	for _, w := range args {
		parts = append(parts, w.canon(pattern))
	}
	return strings.Join(parts, " ")
}

func (p bashPattern) match(s string) bool { return p.full.match(s) || p.tail && p.head.match(s) }

func (p bashPattern) mayMatch(s string) bool {
	return p.full.mayMatch(s) || p.tail && p.head.mayMatch(s)
}

func (p bashPattern) hasStar() bool { return p.tail || p.full.hasStar() }

// paramPattern is a compiled Tool(param:value) specifier.
type paramPattern struct {
	key   string
	value wildcard
}

// match reports whether the input's top-level scalar field matches. A
// missing field never matches.
func (p paramPattern) match(input map[string]json.RawMessage) bool {
	raw, ok := input[p.key]
	if !ok {
		return false
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	var s string
	switch v := v.(type) {
	case string:
		s = v
	case bool, float64:
		s = strings.TrimSpace(string(raw))
	default:
		return false
	}
	return p.value.match(s)
}
