package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/agentloop/agentloop/internal/quickev"
)

// verdict is a decision in the making.
type verdict struct {
	b          Behavior
	reasonType string
	reason     string
	rule       *rule
	path       string
	msg        string
	firm       bool // an Ask that the auto-mode classifier may not settle
	suggest    []Update
	resolved   string // a file tool's physical path, as judged
	blocked    bool   // the block settings decided (block.go)
}

// decide decides on call. The input is decoded first, in a frame of its
// own, and the decision made after it returns: the decoder's recursion does
// not stack on the decision's larger frame (a decision is made deep in a
// turn's stack, where every byte adds to the stack each session's goroutine
// grows to).
func (st *state) decide(ctx context.Context, call Call) Decision {
	return st.decideWith(ctx, &call, decodeInput(call.Input))
}

// decodeInput decodes a call's input, an object; nil when it is not one.
// A flat object is read by quickev, as encoding/json reads it, with a
// fraction of its stack (see tool.Schema.Validate's decoding).
//
//go:noinline
func decodeInput(raw json.RawMessage) map[string]json.RawMessage {
	input := map[string]json.RawMessage{}
	if quickev.ReadFlatObject(raw, func(k string, v []byte) bool {
		input[k] = bytes.Clone(v)
		return true
	}) {
		return input
	}
	return decodeInputJSON(raw)
}

// decodeInputJSON is decodeInput with encoding/json.
//
//go:noinline
func decodeInputJSON(raw json.RawMessage) map[string]json.RawMessage {
	var input map[string]json.RawMessage
	if json.Unmarshal(raw, &input) != nil {
		return nil
	}
	return input
}

// decideWith is decide for call, whose input decoded to input.
//
//go:noinline
func (st *state) decideWith(ctx context.Context, call *Call, input map[string]json.RawMessage) Decision {
	tool := canonicalToolName(call.Tool)
	cwd := call.Cwd
	if cwd == "" || !filepath.IsAbs(cwd) {
		cwd = st.cwd()
	}
	cwd = filepath.Clean(cwd)
	b := st.blockedVerdict(tool, input, cwd) // block.go
	if b != nil && b.b != Ask {
		return st.finish(ctx, call, tool, b)
	}
	v := st.judge(tool, input, call, cwd)
	if b != nil && v.b != Deny {
		// A deny rule still denies; nothing else is asked less.
		return st.finish(ctx, call, tool, b)
	}
	return st.finish(ctx, call, tool, &v)
}

// blockedVerdict is blockVerdict's verdict, nil when the block settings
// decide nothing. Not inlined, and on the heap: decideWith's frame is under
// the checks of judge (see decide).
//
//go:noinline
func (st *state) blockedVerdict(tool string, input map[string]json.RawMessage, cwd string) *verdict {
	if b, ok := st.blockVerdict(tool, input, cwd); ok {
		return &b
	}
	return nil
}

// finish applies the auto and dontAsk modes to an Ask and builds the
// Decision.
func (st *state) finish(ctx context.Context, call *Call, tool string, vp *verdict) Decision {
	v := *vp
	resolved := v.resolved
	if v.b == Allow && v.reasonType == ReasonRule && st.mode == ModeAuto && st.classifyAll &&
		st.classifier != nil && toolClass(tool) == classShell {
		// autoMode.classifyAllShell: an allow rule does not settle a
		// shell command in auto mode; the classifier does.
		v = verdict{b: Ask, reasonType: ReasonMode, msg: msgClassifyAll(tool, v.rule), resolved: v.resolved}
	}
	if v.b == Ask && !v.firm && st.mode == ModeAuto && st.classifier != nil {
		res, err := st.classifier.Classify(ctx, ClassifyRequest{
			Tool: tool, Input: call.Input, Cwd: call.Cwd, Dirs: append([]string(nil), st.dirs...), Reason: v.msg,
		})
		if err == nil {
			switch res.Behavior {
			case Allow:
				v = verdict{b: Allow, reasonType: ReasonClassifier, reason: res.Reason}
			case Deny:
				v = verdict{b: Deny, reasonType: ReasonClassifier, reason: res.Reason, msg: msgClassifier(tool, res.Reason), path: v.path}
			}
		}
	}
	if v.b == Ask && st.mode == ModeDontAsk {
		v.b = Deny
		v.msg += dontAskNote
		v.suggest = nil
		if v.reasonType == "" {
			v.reasonType = ReasonMode
		}
	}
	d := Decision{Behavior: v.b, Message: v.msg, ReasonType: v.reasonType, Reason: v.reason, BlockedPath: v.path, Path: resolved,
		Blocked: v.blocked}
	if v.rule != nil {
		d.Rule, d.RuleSource = v.rule.String(), v.rule.Source
	}
	if v.b == Ask {
		d.Suggestions = v.suggest
	}
	if v.b == Allow {
		d.Message, d.BlockedPath = "", ""
	}
	return d
}

func stringField(input map[string]json.RawMessage, key string) string {
	raw, ok := input[key]
	if !ok {
		return ""
	}
	if s, ok := quickev.ReadString(raw); ok {
		return s // what encoding/json gives, with far less stack (see decide)
	}
	return decodeString(raw)
}

// decodeString decodes raw, a JSON string; "" when it is not one.
//
//go:noinline
func decodeString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func allow(reasonType string, r *rule) verdict {
	return verdict{b: Allow, reasonType: reasonType, rule: r}
}

// judge runs the evaluation order: deny rules, ask rules, the mode, allow
// rules, then the defaults of the tool; what is left is asked.
//
// The file tools' path checks are taken from a small frame (judgeRest
// holds the other verdicts): they resolve paths, deep in a turn's stack,
// where every byte adds to the stack each session's goroutine grows to.
func (st *state) judge(tool string, input map[string]json.RawMessage, call *Call, cwd string) verdict {
	if class := toolClass(tool); (class == classRead || class == classEdit) && st.toolRule(Deny, tool, input) == nil {
		return st.judgePath(tool, class, input, cwd)
	}
	return st.judgeRest(tool, input, call, cwd)
}

// judgeRest is judge for what is not a file tool's path check.
//
//go:noinline
func (st *state) judgeRest(tool string, input map[string]json.RawMessage, call *Call, cwd string) verdict {
	if r := st.toolRule(Deny, tool, input); r != nil {
		return verdict{b: Deny, reasonType: ReasonRule, rule: r, msg: msgDenyRule(tool, "", r)}
	}
	class := toolClass(tool)
	switch class {
	case classShell:
		if _, ok := input["command"]; ok || tool == "Bash" {
			return st.judgeShell(tool, input, cwd, stringField(input, "command"))
		}
	case classRead, classEdit:
		return st.judgePath(tool, class, input, cwd)
	}
	what := st.subject(tool, input)
	if r, may := st.specificRule(Deny, tool, input); r != nil {
		if !may {
			return verdict{b: Deny, reasonType: ReasonRule, rule: r, msg: msgDenyRule(tool, what, r)}
		}
		return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, msg: msgMayDeny(tool, what, r)}
	}
	if r := st.toolRule(Ask, tool, input); r != nil {
		return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, msg: msgAskRule(tool, what, r)}
	}
	if r, _ := st.specificRule(Ask, tool, input); r != nil {
		return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, msg: msgAskRule(tool, what, r)}
	}
	if class == classAsk || call.RequiresUserInteraction {
		return verdict{b: Ask, reasonType: ReasonOther, firm: true, msg: msgPerson(tool)}
	}
	if class == classPShell {
		for _, r := range st.compiled {
			if r.kind == kindOpaque && r.appliesTo(tool) {
				return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, msg: msgMayDeny(tool, "this command", r)}
			}
		}
	}
	if st.mode == ModeBypass {
		return allow(ReasonMode, nil)
	}
	if r := st.toolRule(Allow, tool, input); r != nil {
		return allow(ReasonRule, r)
	}
	if r, may := st.specificRule(Allow, tool, input); r != nil && !may {
		return allow(ReasonRule, r)
	}
	switch class {
	case classSafe:
		return allow("", nil) // the reference reports no reason for these (Agent, StructuredOutput)
	case classOther:
		if call.ReadOnly {
			return allow(ReasonMode, nil)
		}
	}
	v := verdict{b: Ask, reasonType: ReasonMode, msg: msgTool(tool)}
	switch class {
	case classFetch:
		u := stringField(input, "url")
		host, ok := fetchHost(u)
		if !ok {
			host = ""
		}
		v.msg = msgFetch(u, host)
		if host != "" {
			v.suggest = []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal,
				Rules: []RuleValue{{ToolName: "WebFetch", RuleContent: "domain:" + host}}}}
		}
	default:
		v.suggest = []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceLocal, Rules: []RuleValue{{ToolName: tool}}}}
	}
	return v
}

// subject describes what a call works on, for messages.
func (st *state) subject(tool string, input map[string]json.RawMessage) string {
	switch tool {
	case "WebFetch":
		return stringField(input, "url")
	case "Agent":
		return "subagent " + agentType(input)
	case "Skill":
		return "skill " + stringField(input, "skill")
	}
	return ""
}

func agentType(input map[string]json.RawMessage) string {
	if t := stringField(input, "subagent_type"); t != "" {
		return t
	}
	return "general-purpose"
}

// toolRule finds a rule of behavior b that names the whole tool, or a
// parameter rule that the input matches.
func (st *state) toolRule(b Behavior, tool string, input map[string]json.RawMessage) *rule {
	for _, r := range st.compiled {
		if r.Behavior != b || !r.appliesTo(tool) {
			continue
		}
		switch r.kind {
		case kindWhole:
			return r
		case kindParam:
			if r.param.match(input) {
				return r
			}
		}
	}
	return nil
}

// specificRule finds a rule of behavior b with a specifier that matches a
// WebFetch, Agent or Skill call. may is set when the call's subject cannot
// be known and the rule might match it.
func (st *state) specificRule(b Behavior, tool string, input map[string]json.RawMessage) (*rule, bool) {
	for _, r := range st.compiled {
		if r.Behavior != b || r.Value.ToolName != tool {
			continue
		}
		switch r.kind {
		case kindDomain:
			host, ok := fetchHost(stringField(input, "url"))
			if !ok {
				if b != Allow {
					return r, true
				}
				continue
			}
			if m, may := r.domain.matchAs(b, host); m {
				return r, may
			}
		case kindName:
			switch tool {
			case "Agent":
				if r.name.match(agentType(input)) {
					return r, false
				}
			case "Skill":
				skill := stringField(input, "skill")
				full := strings.TrimSpace(skill + " " + stringField(input, "args"))
				if r.name.match(full) || b != Allow && r.name.match(skill) {
					return r, false
				}
			}
		}
	}
	return nil, false
}

// pathRulesFor lists the path rules of behavior b that govern reading (or
// writing) a path with tool. Edit rules govern every writing tool and Read
// rules every reading one; a Read deny rule also blocks writes; Glob and
// Grep path rules (deny and ask only) act on their own tool.
func (st *state) pathRulesFor(b Behavior, write bool, tool string) []*rule {
	var out []*rule
	for _, r := range st.compiled {
		if r.Behavior != b || r.kind != kindPath {
			continue
		}
		t := r.Value.ToolName
		var ok bool
		if write {
			ok = t == "Edit" || b != Allow && (t == "Write" || t == "MultiEdit" || t == "NotebookEdit") || b == Deny && t == "Read"
		} else {
			ok = t == "Read" || r.pathTool != "" && r.pathTool == tool
		}
		if ok {
			out = append(out, r)
		}
	}
	return out
}

// matchingCand returns the first candidate that r matches.
func matchingCand(r *rule, cands []string) string {
	for _, c := range cands {
		if r.path.match(c) {
			return c
		}
	}
	return ""
}

// shownPath picks the candidate a message names: one outside the working
// directories if there is one (that is what needs approval), else the
// first.
func (st *state) shownPath(cands []string) string {
	for _, c := range cands {
		if !st.insideAll([]string{c}) {
			return c
		}
	}
	if len(cands) == 0 {
		return ""
	}
	return cands[0]
}

// matchPath finds the rule among rules that matches any candidate (deny,
// ask), or, with all, that covers every candidate (allow: a link and its
// target must both be allowed).
func matchPath(rules []*rule, cands []string, all bool) *rule {
	if len(cands) == 0 {
		return nil
	}
	if !all {
		for _, r := range rules {
			for _, c := range cands {
				if r.path.match(c) {
					return r
				}
			}
		}
		return nil
	}
	var first *rule
	for _, c := range cands {
		var hit *rule
		for _, r := range rules {
			if r.path.match(c) {
				hit = r
				break
			}
		}
		if hit == nil {
			return nil
		}
		if first == nil {
			first = hit
		}
	}
	return first
}

// judgePath decides Read, Glob, Grep, LSP (reading) and Edit, Write,
// NotebookEdit, MultiEdit (writing).
func (st *state) judgePath(tool string, class int, input map[string]json.RawMessage, cwd string) verdict {
	raw := stringField(input, pathField(tool))
	if raw == "" && (tool == "Glob" || tool == "Grep") {
		raw = cwd
	}
	abs, err := absolute(cwd, st.home, raw)
	if err != nil {
		return verdict{b: Ask, reasonType: ReasonOther, msg: msgNoPath(tool)}
	}
	// The file tools open the cleaned path; phys is the file that reaches,
	// and the one they are told to work on (Decision.Path).
	clean := filepath.Clean(abs)
	cands, phys := candidatesPhys(abs)
	v := st.judgePathAt(tool, class == classEdit, input, raw, clean, cands)
	if isFileTool(tool) {
		v.resolved = phys
	}
	return v
}

// judgePathAt is judgePath once the path is known: clean is the path as
// the tool names it, cands every form a check must consider.
func (st *state) judgePathAt(tool string, write bool, input map[string]json.RawMessage, raw, clean string, cands []string) verdict {
	show := clean
	known := true
	if tool == "Glob" {
		extra, ok := st.globRoot(stringField(input, "pattern"), clean)
		cands = addUnique(cands, extra...)
		known = ok
	}
	for _, b := range []Behavior{Deny, Ask} {
		if b == Ask {
			if r := st.toolRule(Ask, tool, input); r != nil {
				return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, path: show, msg: msgAskRule(tool, show, r)}
			}
		}
		rules := st.pathRulesFor(b, write, tool)
		r := matchPath(rules, cands, false)
		may := false
		if r == nil && !known && len(rules) > 0 {
			r, may = rules[0], true
		}
		if r == nil {
			continue
		}
		switch {
		case may:
			return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, path: show, msg: msgMayDeny(tool, show, r)}
		case b == Deny:
			return verdict{b: Deny, reasonType: ReasonRule, rule: r, path: show, msg: msgDenyRule(tool, matchingCand(r, cands), r)}
		default:
			return verdict{b: Ask, reasonType: ReasonRule, rule: r, firm: true, path: show, msg: msgAskRule(tool, show, r)}
		}
	}
	network := isNetworkPath(raw)
	protected := write && st.anyProtected(cands)
	if st.mode == ModeBypass {
		// Protected paths are asked even here (see doc.go).
		if protected {
			return verdict{b: Ask, reasonType: ReasonSafetyCheck, firm: true, path: show, msg: msgProtected(tool, st.shownProtected(cands))}
		}
		return allow(ReasonMode, nil)
	}
	inside := known && st.insideAll(cands)
	if !inside && known {
		show = st.shownPath(cands)
	}
	if write && st.mode == ModePlan {
		return verdict{b: Ask, reasonType: ReasonMode, path: show, msg: msgWritePlan(tool, show)}
	}
	if write && st.mode == ModeAcceptEdits && inside && !protected && !network {
		return allow(ReasonMode, nil)
	}
	if !protected && !network {
		if r := st.toolRule(Allow, tool, input); r != nil {
			return allow(ReasonRule, r)
		}
		if known {
			if r := matchPath(st.pathRulesFor(Allow, write, tool), cands, true); r != nil {
				return allow(ReasonRule, r)
			}
		}
	}
	if !write && inside && !network {
		return allow(ReasonMode, nil)
	}
	switch {
	case network:
		return verdict{b: Ask, reasonType: ReasonSafetyCheck, firm: true, path: show, msg: msgNetworkPath(tool, raw)}
	case protected:
		return verdict{b: Ask, reasonType: ReasonSafetyCheck, firm: true, path: show, msg: msgProtected(tool, st.shownProtected(cands))}
	case !write && !known:
		return verdict{b: Ask, reasonType: ReasonOther, path: show, msg: msgUnknownRoot(tool, stringField(input, "pattern"))}
	case !write:
		dir := show
		if tool == "Read" || tool == "LSP" {
			dir = filepath.Dir(show)
		}
		return verdict{b: Ask, reasonType: ReasonWorkingDir, path: show, msg: msgReadOutside(tool, show, st.dirs),
			suggest: []Update{{Type: UpdateAddRules, Behavior: Allow, Destination: SourceSession,
				Rules: []RuleValue{{ToolName: "Read", RuleContent: "/" + dir + "/**"}}}}}
	case !inside:
		return verdict{b: Ask, reasonType: ReasonWorkingDir, path: show, msg: msgWrite(tool, show),
			suggest: []Update{{Type: UpdateAddDirectories, Directories: []string{filepath.Dir(show)}, Destination: SourceSession}}}
	}
	return verdict{b: Ask, reasonType: ReasonMode, path: show, msg: msgWrite(tool, show),
		suggest: []Update{{Type: UpdateSetMode, Mode: ModeAcceptEdits, Destination: SourceSession}}}
}

// globRoot returns the directory a Glob pattern starts from, when the
// pattern leaves the search path (an absolute pattern, or ".."). It
// reports false when that directory cannot be known.
func (st *state) globRoot(pattern, base string) ([]string, bool) {
	if pattern == "" {
		return nil, true
	}
	if pattern == "~" || strings.HasPrefix(pattern, "~/") {
		if st.home == "" {
			return nil, false
		}
		pattern = st.home + pattern[1:]
	}
	full := pattern
	if !strings.HasPrefix(pattern, "/") {
		full = base + "/" + pattern
	}
	root, rest := doublestar.SplitPattern(full)
	if strings.Contains(rest, "..") || strings.Contains(root, `\`) {
		return nil, false
	}
	if !strings.HasPrefix(pattern, "/") && !strings.Contains(pattern, "..") {
		return nil, true
	}
	return candidates(root), true
}
