// Package toolsearch keeps deferred tools out of the request until the model
// asks for them: it decides which tools are deferred ([Plan]), searches them
// ([Catalog.Search]), renders the ToolSearch tool's result ([Render]) and
// reads back from a history which deferred tools have been loaded
// ([Loaded]).
//
// The catalog is immutable once built, so it needs no locking: whether a
// tool is loaded is a function of the conversation (a ToolSearch result
// that carries its definition), not of state kept beside it. A resumed
// session therefore declares the same tools it did before, and a
// compaction that summarises a ToolSearch result away unloads the tools it
// loaded, as the reference does.
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
// auto mode they stay declared while their definitions add up to less than
// AutoPercent of contextWindow tokens (estimated as four characters a
// token). A tool named ToolName is never deferred.
func Plan(m Mode, infos []tool.Info, contextWindow int64) []tool.Info {
	if m.Off {
		return nil
	}
	var out []tool.Info
	size := 0
	for _, in := range infos {
		if in.Deferrable() && in.Name != ToolName {
			out = append(out, in)
			size += len(in.Name) + len(in.Description) + len(in.InputSchema)
		}
	}
	if m.AutoPercent > 0 && contextWindow > 0 && int64(size/4)*100 < contextWindow*int64(m.AutoPercent) {
		return nil
	}
	return out
}
