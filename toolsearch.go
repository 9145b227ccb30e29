package agentloop

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// ToolSearchMode switches tool search (Options.ToolSearch). With tool
// search on, deferrable tools (tool.Info.Defer, or tool.Info.MCP, and not
// tool.Info.AlwaysLoad) are not declared to the model up front: it is told
// their names and loads the ones it needs with the ToolSearch tool, which
// keeps a large catalogue of tools out of every request.
type ToolSearchMode string

// The tool search modes. A mode "auto:N", N a percentage, is ToolSearchAuto
// with its own threshold.
const (
	// ToolSearchDefault leaves the choice to the ENABLE_TOOL_SEARCH
	// variable (the process environment, the settings' env, Options.Env,
	// the last one set winning), and is on when it is unset.
	ToolSearchDefault ToolSearchMode = ""
	// ToolSearchOn defers every deferrable tool.
	ToolSearchOn ToolSearchMode = "true"
	// ToolSearchOff declares every tool up front.
	ToolSearchOff ToolSearchMode = "false"
	// ToolSearchAuto defers the deferrable tools only when their
	// definitions add up to 10% of the model's context window or more.
	ToolSearchAuto ToolSearchMode = "auto"
)

// toolSearch decides which of ts the session defers (toolsearch.Plan) and
// returns the tools with ToolSearch added, and the catalog of the deferred
// ones, or ts and nil when nothing is deferred. An invalid
// Options.ToolSearch is an error; an invalid ENABLE_TOOL_SEARCH value is
// reported as a diagnostic and counts as unset.
func (s *session) toolSearch(ts []tool.Tool) ([]tool.Tool, *toolsearch.Catalog, error) {
	var mode toolsearch.Mode
	if s.opts.ToolSearch != ToolSearchDefault {
		m, err := toolsearch.ParseMode(string(s.opts.ToolSearch))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: ToolSearch: %w", ErrInvalidOption, err)
		}
		mode = m
	} else if v, ok := lastEnv(s.environ(), toolsearch.EnvVar); ok {
		m, err := toolsearch.ParseMode(v)
		if err != nil {
			s.diag.add(DiagOption, fmt.Sprintf("%s: %v; tool search stays on", toolsearch.EnvVar, err))
		}
		mode = m
	}
	infos := make([]tool.Info, len(ts))
	for i, t := range ts {
		infos[i] = t.Info()
	}
	p, _, _ := pricing.Lookup(s.model)
	deferred := toolsearch.Plan(mode, infos, p.ContextWindow)
	if len(deferred) == 0 {
		return ts, nil, nil
	}
	for _, in := range infos {
		if in.Name == toolsearch.ToolName {
			s.diag.add(DiagOption, fmt.Sprintf("a tool is named %s already, so tool search is off and all %d deferrable tools are declared", toolsearch.ToolName, len(deferred)))
			return ts, nil, nil
		}
	}
	if s.lin != nil && s.lin.Disallowed(toolsearch.ToolName) {
		s.diag.add(DiagOption, fmt.Sprintf("%s is disallowed, so tool search is off and all %d deferrable tools are declared", toolsearch.ToolName, len(deferred)))
		return ts, nil, nil
	}
	c := toolsearch.NewCatalog(deferred)
	return append(append([]tool.Tool(nil), ts...), tools.ToolSearch(c)), c, nil
}

// environ is the environment the session's settings apply to: the one its
// tools' processes get.
func (s *session) environ() []string {
	if s.env.Environ == nil {
		return os.Environ()
	}
	return s.env.Environ
}

// lastEnv is the value of the last definition of name in environ (the
// os.Environ form), as a process started with it would see it.
func lastEnv(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}
