package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/agentloop/agentloop/internal/vocab"
)

// layer is one parsed settings file.
type layer struct {
	source  Source
	path    string
	display string
	root    string

	allow, deny, ask []string
	defaultMode      string
	addDirs          []string
	permExtra        map[string]json.RawMessage
	// disableBypass and disableAuto are set when the file says
	// "disable" for permissions.disableBypassPermissionsMode and
	// permissions.disableAutoMode.
	disableBypass, disableAuto bool
	block                      blockLayer // permissions_block.go

	hookEvents []string // in file order
	hooks      map[string][]HookMatcher

	env                                    map[string]string
	model                                  *string
	autoCompactEnabled                     *bool
	autoCompactWindow                      *int64
	disableAllHooks, allowManagedHooksOnly *bool
	extra                                  map[string]json.RawMessage
	warnings                               []string
	sandbox                                *sandboxLayer
	managed                                *Managed // the managed-only keys (managed.go); policy file only
}

// Modes are the values permissions.defaultMode accepts ("manual" is read
// as "default"), in the reference's order: those of the one definition of
// the permission modes that Options and the CLI use too (a test holds the
// two together). It is spelled out, not computed, so that it costs no
// process anything at start-up.
var Modes = []string{
	string(vocab.PermissionDefault), string(vocab.PermissionAcceptEdits), string(vocab.PermissionBypass),
	string(vocab.PermissionPlan), string(vocab.PermissionDontAsk), string(vocab.PermissionAuto),
}

// HookEvents are the hook event names the reference knows, in its order.
// A settings file may name others; they are kept, with a warning.
var HookEvents = []string{
	"PreToolUse", "PostToolUse", "PostToolUseFailure", "PostToolBatch", "Notification",
	"UserPromptSubmit", "UserPromptExpansion", "SessionStart", "SessionEnd", "Stop", "StopFailure",
	"SubagentStart", "SubagentStop", "PreCompact", "PostCompact", "PreModelSwitch",
	"PostModelSwitch", "PermissionRequest", "PermissionDenied", "Setup", "TeammateIdle",
	"TaskCreated", "TaskCompleted", "Elicitation", "ElicitationResult", "ConfigChange",
	"WorktreeCreate", "WorktreeRemove", "InstructionsLoaded", "CwdChanged", "FileChanged",
	"DirectoryAdded", "MessageDisplay", "PreSkillShellCommand",
}

var hookTypes = []string{"command", "prompt", "agent", "http", "mcp_tool"}

// parse checks and reads one settings file. It returns every problem it
// finds; the layer is only usable when there are none.
func parse(data []byte, src Source, path, display, root string) (*layer, []error) {
	l := &layer{source: src, path: path, display: display, root: root,
		hooks: map[string][]HookMatcher{}, env: map[string]string{},
		permExtra: map[string]json.RawMessage{}, extra: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return l, nil // an empty file is an empty object
	}
	var check any
	if err := json.Unmarshal(data, &check); err != nil {
		return nil, []error{syntaxError(display, data, err)}
	}
	top, err := parseObject(data)
	if err != nil {
		return nil, []error{syntaxError(display, data, err)}
	}
	c := &checker{file: display}
	for _, key := range top.keys {
		raw := top.vals[key]
		if isNull(raw) {
			continue
		}
		switch key {
		case "permissions":
			l.readPermissions(c, raw)
		case "hooks":
			l.readHooks(c, raw)
		case "env":
			if o := c.object("env", raw); o != nil {
				for _, k := range o.keys {
					if v, ok := c.str("env."+k, o.vals[k]); ok {
						l.env[k] = v
					}
				}
			}
		case "model":
			if v, ok := c.str("model", raw); ok {
				l.model = &v
			}
		case "disableAutoMode":
			// The top-level spelling of permissions.disableAutoMode,
			// with the same meaning.
			if v, ok := c.str(key, raw); ok {
				if v != DisableValue {
					c.cause(key, &vocab.UnknownValueError{Kind: "value", Value: v, Allowed: []string{DisableValue}})
				} else {
					l.disableAuto = true
				}
			}
		case "autoCompactEnabled":
			if v, ok := c.boolean(key, raw); ok {
				l.autoCompactEnabled = &v
			}
		case "autoCompactWindow":
			var n int64
			if err := json.Unmarshal(raw, &n); err != nil || n <= 0 {
				c.bad(key, "must be a positive whole number of tokens, not %s", raw)
			} else {
				l.autoCompactWindow = &n
			}
		case "disableAllHooks":
			if v, ok := c.boolean(key, raw); ok {
				l.disableAllHooks = &v
			}
		case "sandbox":
			l.readSandbox(c, raw)
		case "allowManagedHooksOnly":
			if v, ok := c.boolean(key, raw); ok {
				l.allowManagedHooksOnly = &v
			}
		default:
			if isManagedKey(key) {
				l.readManaged(c, key, raw) // managed.go
				continue
			}
			l.extra[key] = raw
		}
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return l, nil
}

func (l *layer) readPermissions(c *checker, raw json.RawMessage) {
	o := c.object("permissions", raw)
	if o == nil {
		return
	}
	for _, key := range o.keys {
		raw := o.vals[key]
		if isNull(raw) {
			continue
		}
		field := "permissions." + key
		switch key {
		case "allow", "deny", "ask":
			rules := c.strs(field, raw, checkRule)
			switch key {
			case "allow":
				l.allow = rules
			case "deny":
				l.deny = rules
			default:
				l.ask = rules
			}
		case "defaultMode":
			if v, ok := c.str(field, raw); ok {
				if m, err := vocab.ParsePermissionMode(v); err != nil {
					c.cause(field, err)
				} else {
					l.defaultMode = string(m)
				}
			}
		case "disableBypassPermissionsMode", "disableAutoMode":
			if v, ok := c.str(field, raw); ok {
				if v != DisableValue {
					c.cause(field, &vocab.UnknownValueError{Kind: "value", Value: v, Allowed: []string{DisableValue}})
				} else if key == "disableAutoMode" {
					l.disableAuto = true
				} else {
					l.disableBypass = true
				}
			}
		case "additionalDirectories":
			l.addDirs = c.strs(field, raw, func(d string) string {
				if strings.TrimSpace(d) == "" {
					return "want a directory, got an empty string"
				}
				return ""
			})
		default:
			if !l.readBlockKey(c, key, raw) { // permissions_block.go
				l.permExtra[key] = raw
			}
		}
	}
}

func (l *layer) readHooks(c *checker, raw json.RawMessage) {
	o := c.object("hooks", raw)
	if o == nil {
		return
	}
	for _, ev := range o.keys {
		raw := o.vals[ev]
		if isNull(raw) {
			continue
		}
		field := "hooks." + ev
		if !slices.Contains(HookEvents, ev) {
			l.warnings = append(l.warnings, fmt.Sprintf("%s: %s: unknown hook event, its hooks never run", l.display, field))
		}
		items, ok := c.array(field, raw, "an array of matchers")
		if !ok {
			continue
		}
		var list []HookMatcher
		for i, item := range items {
			f := fmt.Sprintf("%s[%d]", field, i)
			mo := c.object(f, item)
			if mo == nil {
				continue
			}
			m := HookMatcher{Source: l.source, File: l.path}
			if v, ok := mo.get("matcher"); ok && !isNull(v) {
				m.Matcher, _ = c.str(f+".matcher", v)
			}
			hv, ok := mo.get("hooks")
			if !ok || isNull(hv) {
				c.bad(f+".hooks", "missing: want an array of hooks")
				continue
			}
			hooks, ok := c.array(f+".hooks", hv, "an array of hooks")
			if !ok {
				continue
			}
			for j, h := range hooks {
				if hk, ok := readHook(c, fmt.Sprintf("%s.hooks[%d]", f, j), h); ok {
					m.Hooks = append(m.Hooks, hk)
				}
			}
			list = append(list, m)
		}
		if _, seen := l.hooks[ev]; !seen {
			l.hookEvents = append(l.hookEvents, ev)
		}
		l.hooks[ev] = list
	}
}

func readHook(c *checker, field string, raw json.RawMessage) (Hook, bool) {
	o := c.object(field, raw)
	if o == nil {
		return Hook{}, false
	}
	h := Hook{Raw: raw}
	n := len(c.errs)
	tv, ok := o.get("type")
	if !ok || isNull(tv) {
		c.bad(field+".type", "missing: want one of %s", strings.Join(hookTypes, ", "))
		return h, false
	}
	h.Type, _ = c.str(field+".type", tv)
	if len(c.errs) > n {
		return h, false
	}
	if !slices.Contains(hookTypes, h.Type) {
		c.bad(field+".type", "unknown hook type %q (want one of %s)", h.Type, strings.Join(hookTypes, ", "))
		return h, false
	}
	if tv, ok := o.get("timeout"); ok && !isNull(tv) {
		if kind(tv) != "number" {
			c.wrongType(field+".timeout", "a number of seconds", tv)
		} else {
			_ = json.Unmarshal(tv, &h.Timeout)
			if !(h.Timeout > 0) {
				c.bad(field+".timeout", "want a positive number of seconds, got %s", string(bytes.TrimSpace(tv)))
			}
		}
	}
	switch h.Type {
	case "command":
		h.Command = requiredStr(c, o, field, "command", "a command hook needs a command")
	case "prompt":
		h.Prompt = requiredStr(c, o, field, "prompt", "a prompt hook needs a prompt")
	case "http":
		h.URL = requiredStr(c, o, field, "url", "an http hook needs a url")
		if h.URL != "" {
			if u, err := url.Parse(h.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				c.bad(field+".url", "want an http or https URL, got %q", h.URL)
			}
		}
	}
	readHookExtras(c, o, field, &h)
	return h, len(c.errs) == n
}

// requiredStr reads a hook's required, non-empty string field.
func requiredStr(c *checker, o *object, field, key, missing string) string {
	v, ok := o.get(key)
	if !ok || isNull(v) {
		c.bad(field+"."+key, "missing: %s", missing)
		return ""
	}
	s, ok := c.str(field+"."+key, v)
	if ok && strings.TrimSpace(s) == "" {
		c.bad(field+"."+key, "want a %s, got an empty string", key)
	}
	return s
}

// readHookExtras reads the optional fields of a hook entry, whatever its
// type: which of them a hook type honours is the dispatcher's business
// (package hooks), which warns about the others.
func readHookExtras(c *checker, o *object, field string, h *Hook) {
	optStr := func(key string, dst *string) {
		if v, ok := o.get(key); ok && !isNull(v) {
			*dst, _ = c.str(field+"."+key, v)
		}
	}
	optBool := func(key string, dst *bool) {
		if v, ok := o.get(key); ok && !isNull(v) {
			*dst, _ = c.boolean(field+"."+key, v)
		}
	}
	optStr("if", &h.If)
	optStr("shell", &h.Shell)
	optStr("statusMessage", &h.StatusMessage)
	optStr("model", &h.Model)
	optStr("onFailure", &h.OnFailure)
	if h.OnFailure != "" && h.OnFailure != "continue" && h.OnFailure != "block" {
		c.bad(field+".onFailure", "want \"continue\" or \"block\", got %q", h.OnFailure)
	}
	optBool("once", &h.Once)
	optBool("async", &h.Async)
	optBool("asyncRewake", &h.AsyncRewake)
	optBool("continueOnBlock", &h.ContinueOnBlock)
	if v, ok := o.get("args"); ok && !isNull(v) {
		h.Args = c.strs(field+".args", v, nil)
	}
	if v, ok := o.get("allowedEnvVars"); ok && !isNull(v) {
		h.AllowedEnvVars = c.strs(field+".allowedEnvVars", v, nil)
	}
	if v, ok := o.get("headers"); ok && !isNull(v) {
		if ho := c.object(field+".headers", v); ho != nil {
			h.Headers = map[string]string{}
			for _, k := range ho.keys {
				if s, ok := c.str(field+".headers."+k, ho.vals[k]); ok {
					h.Headers[k] = s
				}
			}
		}
	}
	h.Fields = append([]string(nil), o.keys...)
}

// checkRule returns what is wrong with a permission rule, or "".
func checkRule(r string) string {
	t := strings.TrimSpace(r)
	if t == "" {
		return "want a rule, got an empty string"
	}
	name, rest, has := strings.Cut(t, "(")
	if strings.TrimSpace(name) == "" {
		return fmt.Sprintf("malformed rule %q: no tool name", r)
	}
	if has && !strings.HasSuffix(rest, ")") {
		return fmt.Sprintf("malformed rule %q: missing \")\"", r)
	}
	if !has && strings.Contains(t, ")") {
		return fmt.Sprintf("malformed rule %q: unexpected \")\"", r)
	}
	return ""
}

// syntaxError turns a JSON decoding error into an Error with a position.
func syntaxError(display string, data []byte, err error) error {
	var se *json.SyntaxError
	var te *typeError
	switch {
	case errors.As(err, &te):
		return &Error{File: display, Msg: "want a JSON object, got " + te.got}
	case errors.As(err, &se):
		line, col := position(data, se.Offset)
		msg := se.Error()
		if msg == "unexpected end of JSON input" {
			msg = "unexpected end of input"
		}
		return &Error{File: display, Msg: fmt.Sprintf("invalid JSON at line %d, column %d: %s", line, col, msg), Err: se}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		line, col := position(data, int64(len(data)))
		return &Error{File: display, Msg: fmt.Sprintf("invalid JSON at line %d, column %d: unexpected end of input", line, col)}
	}
	return &Error{File: display, Msg: "invalid JSON: " + err.Error(), Err: err}
}

// position is the 1-based line and column of the byte before offset,
// where decoding stopped.
func position(data []byte, offset int64) (line, col int) {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset > 0 {
		offset-- // the offending byte has been consumed
	}
	line, col = 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	return line, col
}

// checker collects field errors of one file.
type checker struct {
	file string
	errs []error
}

func (c *checker) bad(field, format string, a ...any) {
	c.errs = append(c.errs, &Error{File: c.file, Field: field, Msg: fmt.Sprintf(format, a...)})
}

// cause records err as the problem of field; the *Error wraps it.
func (c *checker) cause(field string, err error) {
	c.errs = append(c.errs, &Error{File: c.file, Field: field, Msg: err.Error(), Err: err})
}

func (c *checker) wrongType(field, want string, raw json.RawMessage) {
	c.bad(field, "want %s, got %s", want, kind(raw))
}

func (c *checker) str(field string, raw json.RawMessage) (string, bool) {
	var s string
	if kind(raw) != "string" || json.Unmarshal(raw, &s) != nil {
		c.wrongType(field, "a string", raw)
		return "", false
	}
	return s, true
}

func (c *checker) boolean(field string, raw json.RawMessage) (bool, bool) {
	var b bool
	if kind(raw) != "boolean" || json.Unmarshal(raw, &b) != nil {
		c.wrongType(field, "a boolean", raw)
		return false, false
	}
	return b, true
}

func (c *checker) object(field string, raw json.RawMessage) *object {
	if kind(raw) != "object" {
		c.wrongType(field, "an object", raw)
		return nil
	}
	o, err := parseObject(raw)
	if err != nil {
		c.bad(field, "%v", err)
		return nil
	}
	return o
}

func (c *checker) array(field string, raw json.RawMessage, want string) ([]json.RawMessage, bool) {
	var items []json.RawMessage
	if kind(raw) != "array" || json.Unmarshal(raw, &items) != nil {
		c.wrongType(field, want, raw)
		return nil, false
	}
	return items, true
}

// strs reads an array of strings; check, if not nil, says what is wrong
// with an item ("" for nothing).
func (c *checker) strs(field string, raw json.RawMessage, check func(string) string) []string {
	items, ok := c.array(field, raw, "an array of strings")
	if !ok {
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		f := fmt.Sprintf("%s[%d]", field, i)
		s, ok := c.str(f, it)
		if !ok {
			continue
		}
		if check != nil {
			if msg := check(s); msg != "" {
				c.bad(f, "%s", msg)
				continue
			}
		}
		out = append(out, s)
	}
	return out
}
