// Package toolsearch keeps deferred tools out of the request until the model
// asks for them: it decides which tools are deferred ([Plan]), searches them
// ([Catalog.Search]), renders the ToolSearch tool's result ([Render]) and
// reads back from a history which deferred tools have been loaded
// ([Loaded]).
//
// Whether a tool is loaded is a function of the conversation (a
// ToolSearch result that carries its definition), not of state kept
// beside it; the catalog itself changes only when the session's tools do
// (Catalog.Replace). A resumed session therefore declares the same tools
// it did before, and a compaction that summarises a ToolSearch result away
// unloads the tools it loaded, as the reference does.
package toolsearch

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/tool"
)

// ToolName is the name of the tool that loads deferred tools.
const ToolName = "ToolSearch"

// EnvVar is the environment variable that switches tool search, as the
// reference names it.
const EnvVar = "ENABLE_TOOL_SEARCH"

// DefaultAutoPercent is the share of the context window that deferrable
// definitions must reach for "auto" to defer them.
const DefaultAutoPercent = 10

// Mode is how a session defers tools. The zero Mode is on: every
// deferrable tool is deferred.
type Mode struct {
	// Off declares every tool up front.
	Off bool
	// AutoPercent, when above zero, defers the deferrable tools only when
	// their definitions together reach this percentage of the model's
	// context window.
	AutoPercent int
}

// ErrMode reports a tool search setting that is not one of the values
// ParseMode accepts.
var ErrMode = errors.New("tool search setting must be true, false, auto or auto:N (N a percentage from 0 to 100)")

// ParseMode reads a setting in the form of the ENABLE_TOOL_SEARCH
// variable: "" or "true" (on), "false" (off), "auto" (on above
// DefaultAutoPercent of the context window) or "auto:N" (N percent).
// Case and surrounding space do not matter; "1"/"0", "on"/"off" and
// "yes"/"no" are accepted too.
func ParseMode(s string) (Mode, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	switch v {
	case "", "true", "1", "on", "yes":
		return Mode{}, nil
	case "false", "0", "off", "no":
		return Mode{Off: true}, nil
	case "auto":
		return Mode{AutoPercent: DefaultAutoPercent}, nil
	}
	if rest, ok := strings.CutPrefix(v, "auto:"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(rest))
		if err != nil || n < 0 || n > 100 {
			return Mode{}, fmt.Errorf("%q: %w", s, ErrMode)
		}
		if n == 0 {
			return Mode{}, nil // deferred at any size: always on
		}
		return Mode{AutoPercent: n}, nil
	}
	return Mode{}, fmt.Errorf("%q: %w", s, ErrMode)
}

// Plan returns the tools of infos that the session defers under m, in the
// order given: none when m is off or no tool is deferrable
// (tool.Info.Deferrable); otherwise all the deferrable ones, except that in
// auto mode they stay declared unless their definitions together reach
// AutoPercent of contextWindow tokens. A tool named ToolName is never
// deferred.
//
// The size of the definitions is estimated, not counted with a
// tokenizer: the bytes of each deferrable tool's name, description,
// search hint and input schema (as given, JSON bytes), added up and divided
// by four, the rule of thumb for English and JSON that agentloop uses
// elsewhere too. Auto mode defers when size/4 >= contextWindow*AutoPercent/100.
// An unknown context window (zero) counts as reached.
func Plan(m Mode, infos []tool.Info, contextWindow int64) []tool.Info {
	return AppendPlan(nil, m, infos, contextWindow)
}

// AppendPlan is Plan appending to dst, for a caller with a scratch slice;
// with nothing deferred it returns dst unchanged.
func AppendPlan(dst []tool.Info, m Mode, infos []tool.Info, contextWindow int64) []tool.Info {
	if m.Off {
		return dst
	}
	out := dst
	size := 0
	for _, in := range infos {
		if in.Deferrable() && in.Name != ToolName {
			out = append(out, in)
			size += DefinitionSize(in)
		}
	}
	if m.AutoPercent > 0 && contextWindow > 0 && int64(size/4)*100 < contextWindow*int64(m.AutoPercent) {
		return dst
	}
	return out
}

// DefinitionSize is the size in bytes that [Plan] counts for
// a tool's definition: name, description, search hint and input schema.
func DefinitionSize(in tool.Info) int {
	return len(in.Name) + len(in.Description) + len(in.SearchHint) + len(in.InputSchema)
}
