package conversation

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
)

// ToolSearchMode switches tool search (Options.ToolSearch). With tool
// search on, deferrable tools (tool.Info.Defer, or tool.Info.MCP, and not
// tool.Info.AlwaysLoad; and the on-demand built-ins NotebookEdit,
// TaskStop, WebFetch and WebSearch unless Options.Tools names them) are
// not declared to the model up front: it is told their names (and search
// hints) and loads the ones it needs with the ToolSearch tool, which
// keeps a large catalogue of tools out of every request.
type ToolSearchMode string

// The tool search modes. A mode "auto:N", N a percentage, is ToolSearchAuto
// with its own threshold.
const (
	// ToolSearchDefault leaves the choice to the ENABLE_TOOL_SEARCH
	// variable (the process environment, the settings' env, Options.Env,
	// the last one set winning). Unset (or empty, or invalid), tool search
	// is on except where the reference turns it off: for models older
	// than the 4.5 generation, for an ANTHROPIC_BASE_URL other than
	// Anthropic's API (loopback addresses count as Anthropic's; only
	// checked when the session builds its own provider) and with
	// CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS set. A diagnostic says when
	// that happens.
	ToolSearchDefault ToolSearchMode = ""
	// ToolSearchOn defers every deferrable tool, whatever the model and
	// the API address (the search runs in agentloop, not in the API).
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
//
// Deferrable are the tools whose tool.Info.Deferrable says so (MCP tools,
// tools with Defer) and the on-demand built-ins (tools.OnDemand:
// NotebookEdit, TaskStop, WebFetch, WebSearch) unless Options.Tools names
// them: a tool the caller asked for by name is declared up front, as the
// reference declares every tool of an explicit --tools list. The core
// built-ins (Bash, Read, Edit, Write, Glob, Grep, …) are never deferred.
//
// In the default mode (neither Options.ToolSearch nor ENABLE_TOOL_SEARCH
// set) tool search is off, with a diagnostic, where the reference turns it
// off (see autoOff).
func (s *Session) toolSearch(ts []tool.Tool) ([]tool.Tool, *toolsearch.Catalog, error) {
	var mode toolsearch.Mode
	chosen := true // the mode was set, rather than left to the default
	if s.opts.ToolSearch != ToolSearchDefault {
		m, err := toolsearch.ParseMode(string(s.opts.ToolSearch))
		if err != nil {
			return nil, nil, fmt.Errorf("%w: ToolSearch: %w", ErrInvalidOption, err)
		}
		mode = m
	} else if v, ok := lastEnv(s.environ(), toolsearch.EnvVar); ok && strings.TrimSpace(v) != "" {
		m, err := toolsearch.ParseMode(v)
		if err != nil {
			s.diag.Add(DiagOption, fmt.Sprintf("%s: %v; it counts as unset", toolsearch.EnvVar, err))
			chosen = false
		}
		mode = m
	} else {
		chosen = false
	}
	scratch := infoScratch.Get().(*[]tool.Info)
	defer func() {
		b := (*scratch)[:cap(*scratch)]
		clear(b) // keep no tool's text alive through the pool
		*scratch = b[:0]
		infoScratch.Put(scratch)
	}()
	infos := s.appendDeferrableInfos((*scratch)[:0], ts)
	p, _, _ := pricing.Lookup(s.model)
	deferred := toolsearch.AppendPlan(infos[len(infos):], mode, infos, p.ContextWindow)
	*scratch = deferred[:0]
	if cap(infos) > cap(deferred) {
		*scratch = infos[:0]
	}
	if len(deferred) == 0 {
		return ts, nil, nil
	}
	if !chosen {
		if why := s.autoOff(); why != "" {
			s.diag.Add(DiagOption, fmt.Sprintf("tool search is off by default %s, so all %d deferrable tools are declared; set %s=true or Options.ToolSearch to turn it on",
				why, len(deferred), toolsearch.EnvVar))
			return ts, nil, nil
		}
	}
	for _, in := range infos {
		if in.Name == toolsearch.ToolName {
			s.diag.Add(DiagOption, fmt.Sprintf("a tool is named %s already, so tool search is off and all %d deferrable tools are declared", toolsearch.ToolName, len(deferred)))
			return ts, nil, nil
		}
	}
	if s.lin != nil && s.lin.Disallowed(toolsearch.ToolName) {
		s.diag.Add(DiagOption, fmt.Sprintf("%s is disallowed, so tool search is off and all %d deferrable tools are declared", toolsearch.ToolName, len(deferred)))
		return ts, nil, nil
	}
	c := toolsearch.NewCatalog(deferred)
	// Exactly as long as needed: the engine keeps the list.
	out := make([]tool.Tool, len(ts)+1)
	copy(out, ts)
	out[len(ts)] = tools.ToolSearch(c)
	return out, c, nil
}

// infoScratch holds the scratch slices toolSearch plans in: neither the
// tools' infos nor the deferred ones outlive the call (NewCatalog copies).
var infoScratch = sync.Pool{New: func() any { s := make([]tool.Info, 0, 64); return &s }}

// appendDeferrableInfos appends the Info of each of ts to dst, with Defer
// set on the on-demand built-ins that Options.Tools does not name. A
// built-in is a tool that is neither from an MCP server nor one of
// Options.CustomTools.
func (s *Session) appendDeferrableInfos(dst []tool.Info, ts []tool.Tool) []tool.Info {
	custom := map[string]bool{}
	for _, t := range s.opts.CustomTools {
		if t != nil {
			custom[t.Info().Name] = true
		}
	}
	for _, t := range ts {
		in := t.Info()
		if !in.MCP && !custom[in.Name] && tools.OnDemand(in.Name) && !slices.Contains(s.opts.Tools, in.Name) {
			in.Defer = true
		}
		dst = append(dst, in)
	}
	return dst
}

// autoOff says why the default mode keeps tool search off for this
// session, as the reference does, or "" when nothing does: a model older
// than the 4.5 generation (toolsearch.ModelSupported), an
// ANTHROPIC_BASE_URL that is not Anthropic's API (toolsearch.FirstParty;
// only when the session builds its own provider, since the address of an
// Options.Provider is unknown), or CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS
// set.
func (s *Session) autoOff() string {
	if !toolsearch.ModelSupported(s.model) {
		return fmt.Sprintf("for model %s (older than the 4.5 generation)", s.model)
	}
	if s.opts.Provider == nil {
		if u := s.clientGetenv("ANTHROPIC_BASE_URL"); !toolsearch.FirstParty(u) { // settings_env.go
			return fmt.Sprintf("for ANTHROPIC_BASE_URL %s (not Anthropic's API)", u)
		}
	}
	if s.betasOff() {
		return fmt.Sprintf("with %s set", toolsearch.DisableBetasVar)
	}
	return ""
}

// betasOff reports whether CLAUDE_CODE_DISABLE_EXPERIMENTAL_BETAS switches
// the API's experimental betas off: then tool search, when on, keeps its
// text form (engine.Config.NoToolReferences).
func (s *Session) betasOff() bool {
	v, ok := lastEnv(s.environ(), toolsearch.DisableBetasVar)
	return ok && toolsearch.Truthy(v)
}

// environ is the environment the session's settings apply to: the one its
// tools' processes get.
func (s *Session) environ() []string {
	if s.env.Environ == nil {
		return os.Environ()
	}
	return s.env.Environ
}

// lastEnv is the value of the last definition of name in environ (the
// os.Environ form), as a process started with it would see it.
func lastEnv(environ []string, name string) (string, bool) {
	prefix := name + "="
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], prefix); ok {
			return v, true
		}
	}
	return "", false
}
