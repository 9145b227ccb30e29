package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/agentloop/agentloop"
)

// The --debug filter.
//
// --debug=<filter> narrows the diagnostics log to some categories. The
// filter is a comma-separated list of names; a name is a category of
// debugCategory ("hooks", "mcp", …) or a record's exact tag
// ("hook_failed"); "!name" leaves that name out. With at least one name
// that is not negated, only records matching one of those names are kept;
// a record matching a negated name is always dropped. Names are
// case-insensitive. "--debug=api,hooks" keeps the model-call and hook
// records; "--debug=!mcp" keeps all but the MCP ones.
//
// The filter is given only in the --debug=<filter> form: a bare --debug
// never takes the next argument, so "agentloop -p --debug 'hello'" keeps
// 'hello' as the prompt.

// debugCategory returns the --debug category of the tag of a diagnostics
// log record (its "tag" attribute), or "" for a tag not listed, which is
// its own category. "mirror_error" is a store copy that failed
// (persist.go).
func debugCategory(tag string) string {
	switch tag {
	case agentloop.DiagSettings, agentloop.DiagOption:
		return "settings"
	case agentloop.DiagHook, agentloop.DiagHookFailed, agentloop.DiagHookMessage, agentloop.DiagHookCallbackFailed:
		return "hooks"
	case agentloop.DiagRule:
		return "permissions"
	case agentloop.DiagTool, tagToolCall:
		return "tools"
	case agentloop.DiagTranscript, agentloop.DiagSessionStore, agentloop.DiagWritesLost, "mirror_error":
		return "session"
	case agentloop.DiagSandbox:
		return "sandbox"
	case agentloop.DiagMemory:
		return "memory"
	case agentloop.DiagProjectFile:
		return "files"
	case agentloop.DiagAgent:
		return "agents"
	case agentloop.DiagMCP:
		return "mcp"
	case agentloop.DiagPlugin:
		return "plugins"
	case agentloop.DiagPricing, tagModelCall:
		return "api"
	case tagCLI:
		return "cli"
	}
	return ""
}

// Tags of the records the command writes itself.
const (
	tagCLI       = "cli"        // a problem with the command line or the input
	tagModelCall = "model_call" // one model call (debugtrace.go)
	tagToolCall  = "tool_call"  // one tool call (debugtrace.go)
)

// debugFilter is a parsed --debug filter. The zero value keeps every
// record.
type debugFilter struct {
	include []string // sorted, lower case; empty: every name is included
	exclude []string // sorted, lower case
}

// parseDebugFilter parses a --debug filter. Empty items are skipped; an
// item must be a name of letters, digits, '_' and '-', optionally after
// one '!'. The empty filter keeps everything.
func parseDebugFilter(s string) (debugFilter, error) {
	var f debugFilter
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		neg := strings.HasPrefix(item, "!")
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(item, "!")))
		if !validDebugName(name) {
			return debugFilter{}, fmt.Errorf("--debug filter %q: %q is not a category name (letters, digits, '_' and '-', optionally after '!')", s, item)
		}
		if neg {
			f.exclude = append(f.exclude, name)
		} else {
			f.include = append(f.include, name)
		}
	}
	slices.Sort(f.include)
	slices.Sort(f.exclude)
	f.include, f.exclude = slices.Compact(f.include), slices.Compact(f.exclude)
	return f, nil
}

func validDebugName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// String is the filter in the form parseDebugFilter reads.
func (f debugFilter) String() string {
	items := slices.Clone(f.include)
	for _, x := range f.exclude {
		items = append(items, "!"+x)
	}
	return strings.Join(items, ",")
}

// keeps reports whether a record with tag passes the filter. A record
// without a tag has the category "" and matches no name.
func (f debugFilter) keeps(tag string) bool {
	names := []string{strings.ToLower(tag)}
	if c := debugCategory(tag); c != "" {
		names = append(names, c)
	}
	match := func(list []string) bool {
		return slices.ContainsFunc(names, func(n string) bool { _, ok := slices.BinarySearch(list, n); return ok })
	}
	if match(f.exclude) {
		return false
	}
	return len(f.include) == 0 || match(f.include)
}

// all reports whether the filter keeps every record.
func (f debugFilter) all() bool { return len(f.include) == 0 && len(f.exclude) == 0 }

// filterHandler passes to next the records whose tag the filter keeps.
// The tag is the record's "tag" attribute, or one given earlier to
// WithAttrs.
type filterHandler struct {
	next   slog.Handler
	filter debugFilter
	tag    string // from WithAttrs
	group  bool   // WithGroup was called: later attributes are not top-level
}

// newFilterHandler wraps next with f; the zero filter returns next.
func newFilterHandler(next slog.Handler, f debugFilter) slog.Handler {
	if f.all() {
		return next
	}
	return &filterHandler{next: next, filter: f}
}

func (h *filterHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

func (h *filterHandler) Handle(ctx context.Context, r slog.Record) error {
	tag := h.tag
	if !h.group {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "tag" {
				tag = a.Value.String()
				return false
			}
			return true
		})
	}
	if !h.filter.keeps(tag) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h *filterHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	if !c.group {
		for _, a := range attrs {
			if a.Key == "tag" {
				c.tag = a.Value.String()
			}
		}
	}
	c.next = h.next.WithAttrs(attrs)
	return &c
}

func (h *filterHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.group = true
	c.next = h.next.WithGroup(name)
	return &c
}
