package conversation

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/assemble"
	"github.com/agentloop/agentloop/internal/diag"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/lineage"
	"github.com/agentloop/agentloop/internal/mcphost"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/internal/toolenv"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/agentloop/agentloop/tools"
	"github.com/google/uuid"
)

// Session is one live conversation: the engine session of the main loop
// with everything its options resolved to (settings, permissions, hooks,
// sandbox, MCP servers, subagents, transcript and store). Query makes one
// per run and Client one per client; it outlives its runs. The engine
// session is made at its first use (engine_lazy.go): an idle session
// keeps what it will be made from.
//
// NewSession builds it; Run takes a prompt through the loop; Clear,
// Compact, Rewind and ContextUsage are the session's controls; ID is its
// current id; Close releases it. Run, Clear, Compact, Rewind and
// ContextUsage must not overlap (the caller serialises them: Client holds
// one active query at a time); ID may be called at any time.
type Session struct {
	opts         *Config // the resolved options, read-only once set up; shared (config_share.go)
	env          *tool.Env
	idMu         sync.Mutex                     // guards env.SessionID against a /clear while Client.SessionID reads it
	engMu        sync.Mutex                     // guards engPend and the making of eng (engine_lazy.go)
	eng          atomic.Pointer[engine.Session] // the main loop; made at its first use (engine)
	engPend      *pendingEngine                 // what eng is made from; nil once it is (unless it failed)
	model        string
	mode         PermissionMode
	tools        []string // the tool names of init, taken at the first (toolNames)
	apiKeySource string
	apiProvider  string            // the built-in provider's platform; "" with Options.Provider (providers.go)
	prices       pricing.Overrides // modelPricing and Options.ModelPricing (providers.go)
	hooks        *hooks.Dispatcher
	checker      *permission.Checker
	sb           *sandboxState    // the Bash sandbox (sandbox.go)
	lin          *lineage.Lineage // shared with every subagent (agent.go)
	configDir    string
	transcript   *transcript
	diag         *diagnostics
	origin       string                   // "resume" or "fork" when it goes on from a saved session (hookglue.go)
	endReason    string                   // the SessionEnd reason; "" is "other" (hookglue.go)
	renamed      string                   // the title /rename set, "" for none (title.go)
	memory       string                   // the rendered CLAUDE.md block, "" for none (memory.go)
	compactCfg   *engine.Compaction       // the engine's compaction settings (compaction.go)
	clearContext []string                 // SessionStart context after /clear, for the next prompt (compaction.go)
	files        projectFiles             // skills, commands and agents from .claude directories (projectfiles.go)
	mcp          *mcphost.Host            // the MCP servers; nil when none is configured (mcp_glue.go)
	ckpt         *fileCheckpoints         // file checkpoints; nil when off (checkpoint.go)
	main         *mainAgent               // the main-thread agent; nil without Options.Agent (agent_main.go)
	refusal      string                   // why ResumeDropsTurn refused the resume; "" when it did not (resume_at.go)
	policy       *settings.Managed        // the managed policy's own keys; nil when none (managed_policy.go, managed)
	autoMode     *autoModeRules           // the settings' autoMode object, nil when unset (classifier_rules.go)
	rs           atomic.Pointer[runState] // what runs fill; made by the first (run_state.go)
	mcpBlocked   []MCPServerStatus        // the MCP servers the policy stopped (managed_policy.go)

	// toolsOnce and the flags are together so that they share two words:
	// an idle Client keeps its Session, whose size class (at most 512
	// bytes, the largest class without the allocator's 8-byte header)
	// this decides.
	toolsOnce   sync.Once // guards tools
	started     bool      // SessionStart hooks have run
	ended       bool      // SessionEnd hooks have run
	tempResults bool      // env.ResultsDir is a temporary directory (results_dir.go)
	forkedAt    bool      // the fork already ends at ResumeSessionAt (resume_at.go)

	// mainHP is the main loop's hook points, built by the first call of
	// one of them (mainHooks).
	mainHP atomic.Pointer[engine.HookPoints]

	// getenv is the model client's environment: the settings' env over
	// the process's (settings_env.go).
	getenv func(string) string
}

// NewSession resolves o (nil means defaults) into a ready session: it
// validates the options, reads the settings, starts the MCP servers, the
// sandbox and the transcript, and restores a resumed conversation. ctx
// bounds the store I/O of that restore (Options.SessionStore). The caller
// owns the session and must Close it. The session copies *o and keeps no
// reference to it.
func NewSession(ctx context.Context, o *Config) (*Session, error) {
	return newSession(ctx, o, false)
}

// newSession is NewSession; runNow tells that a run follows at once (a
// one-shot Query), so the main loop's engine is made now rather than
// checked now and made again at the first run.
func newSession(ctx context.Context, o *Config, runNow bool) (*Session, error) {
	opts := new(Config) // shared with other sessions once resolved (config_share.go)
	if o != nil {
		*opts = *o
	}
	if testForceAllow.Load() {
		opts.DisallowedTools = nil // the permission layer is off (test seam)
	}
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cwd, dirs, err := assemble.Workspace(opts.Cwd, opts.AdditionalDirectories, os.Getwd)
	if err != nil {
		return nil, err
	}
	id, err := assemble.SessionID(opts.SessionID)
	if err != nil {
		return nil, err
	}
	home, _ := os.UserHomeDir()
	s := &Session{opts: opts, diag: diag.New(opts.Logger, id),
		apiKeySource: assemble.APIKeySource(opts.Provider != nil, os.Getenv)}
	provider := opts.Provider
	if provider != nil && opts.API.set() {
		s.diag.Add(DiagOption, "Options.API is ignored: it tunes the built-in provider, and Options.Provider is set")
	}
	flag, err := withSandboxOption(opts.Settings, opts.Sandbox)
	if err != nil {
		return nil, err
	}
	st, err := settings.Load(settings.Options{Cwd: cwd, Home: home, Sources: opts.SettingSources, Flag: flag,
		ManagedPath: managedPath()})
	if err != nil {
		return nil, fmt.Errorf("%w: settings: %w", ErrInvalidOption, err)
	}
	s.diag.AddAll(DiagSettings, st.Warnings)
	s.diag.Add(DiagSettings, unhonouredSettingsKeys(st.Extra)) // diagnostics.go
	s.getenv = s.clientEnv(st)                                 // settings_env.go
	if err := checkWorkingDirectoriesAsGiven(st); err != nil { // permission_block.go
		return nil, err
	}
	if s.autoMode, err = readAutoMode(st, func(w string) { s.diag.Add(DiagSettings, w) }); err != nil { // classifier_rules.go
		return nil, err
	}
	// The managed policy's own keys (managed_policy.go).
	if err := s.applyManagedPolicy(st); err != nil {
		return nil, err
	}
	if provider == nil {
		// Built once the settings are read: apiKeyHelper (providers.go).
		p, err := s.builtInProvider(st)
		if err != nil {
			return nil, err
		}
		provider = p
	} else {
		s.customProviderSettings(st)
	}
	s.prices = s.sessionPrices(st) // providers.go
	s.mode = PermissionMode(assemble.Mode(vocab.PermissionMode(opts.PermissionMode), st))
	s.model = assemble.Model(s.modelChoice(opts.Model), st) // ANTHROPIC_MODEL: settings_env.go
	dirs = assemble.SettingsDirs(dirs, st)
	s.env = &tool.Env{Cwd: cwd, AdditionalDirs: dirs, SessionID: id, Home: home,
		Provider: provider, Model: s.model, State: &tool.State{}, AskUser: opts.AskUser, Host: opts.ToolHost,
		Environ: toolEnviron(toolenv.Config{Base: os.Environ(), Settings: st.Env, Extra: opts.Env,
			KeepCredentials: opts.ExposeCredentials})}
	if err := s.loadPlugins(st); err != nil { // plugins.go
		return nil, err
	}
	tr, err := s.openTranscript(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.setupResultsDir(); err != nil {
		return nil, err
	}
	if err := s.setupCheckpoints(); err != nil {
		return nil, err
	}
	if s.checker, err = s.newChecker(st); err != nil {
		return nil, err
	}
	s.diag.AddAll(DiagRule, s.checker.Warnings())
	if err := s.setupSandbox(st); err != nil {
		return nil, err
	}
	s.env.ReadDenied, s.env.CheckedPath = s.readDenied, s.checkedPath
	if testForceAllow.Load() {
		s.env.ReadDenied = nil // the permission layer is off (test seam)
	}
	if s.hooks, err = s.newDispatcher(st.Hooks); err != nil {
		return nil, fmt.Errorf("%w: hooks: %w", ErrInvalidOption, err)
	}
	s.diag.AddAll(DiagHook, s.hooks.Warnings())
	s.loadProjectFiles()
	if err := s.applyMainAgent(st); err != nil { // agent_main.go
		return nil, err
	}
	if err := s.checkSessionModels(); err != nil { // managed_policy.go
		return nil, err
	}
	s.opts = shareConfig(s.opts) // resolved: read-only from here on
	opts = s.opts
	s.lin = s.newLineage()
	mcpTools, err := s.startMCP(ctx, st)
	if err != nil {
		return nil, err
	}
	toolset, err := s.selectTools(mcpTools)
	if err != nil {
		s.closeMCP()
		return nil, err
	}
	toolset = s.narrowToMainAgent(toolset)
	toolset, deferred, err := s.toolSearch(toolset)
	if err != nil {
		s.closeMCP()
		return nil, err
	}
	p := &pendingEngine{
		system:  systemPrompt(opts, s.env, s.model, s.mainAgentPrompt()),
		tools:   toolset,
		opening: append(s.loadContext(st), s.skillListing()...),
	}
	s.setCompaction(st)
	p.deferred, p.noToolRefs = deferred, s.betasOff()
	if err := s.deferEngine(p, runNow); err != nil { // engine_lazy.go
		s.closeMCP()
		return nil, err
	}
	// The MCP servers' watcher and a restored conversation need the
	// engine now; an idle new session makes it at its first use.
	if s.mcp != nil {
		s.watchMCP()
	}
	if tr != nil {
		eng := s.engine()
		if h, crashed := resumeHistory(tr); crashed {
			eng.SetHistoryInterrupted(h)
		} else {
			eng.SetHistory(h)
			if u, ok := lastReplyUsage(tr); ok {
				eng.NoteResumedContext(u) // compaction.go
			}
		}
		if tr.Cost != nil {
			eng.RestoreTotals(tr.Cost.TotalCostUSD, tr.Cost.ModelUsage)
		}
	}
	return s, nil
}

// environMemo is the last toolenv.Build of the process: its input and
// its result.
var environMemo struct {
	sync.Mutex
	in  toolenv.Config
	out []string
}

// toolEnviron is toolenv.Build(c), memoised: sessions started from the
// same process environment with the same settings env, Options.Env and
// ExposeCredentials (the usual case of many sessions in one process) share
// one result. The result is immutable and clipped (len == cap), so an
// append to it copies; its users only read it. The memo holds one entry,
// so varied inputs cost at most a comparison more than building.
func toolEnviron(c toolenv.Config) []string {
	m := &environMemo
	m.Lock()
	defer m.Unlock()
	if m.out != nil && m.in.KeepCredentials == c.KeepCredentials && slices.Equal(m.in.Base, c.Base) &&
		maps.Equal(m.in.Settings, c.Settings) && maps.Equal(m.in.Extra, c.Extra) {
		return m.out
	}
	out := slices.Clip(toolenv.Build(c))
	m.in = toolenv.Config{Base: slices.Clone(c.Base), Settings: maps.Clone(c.Settings), Extra: maps.Clone(c.Extra),
		KeepCredentials: c.KeepCredentials}
	m.out = out
	return out
}

// selectTools picks the session's tools (assemble.Select): the built-in
// ones by Options.Tools, the Agent tool, the custom tools, less the
// disallowed ones. The MCP servers' tools join the custom ones.
func (s *Session) selectTools(mcpTools []tool.Tool) ([]tool.Tool, error) {
	out, warnings, err := assemble.Select(assemble.ToolSet{
		Names: s.opts.Tools, Defaults: s.defaultToolNames(), Builtin: s.builtinTool,
		AskUser: s.opts.AskUser != nil, Agent: s.mainAgentTool, Custom: append(slices.Clone(s.opts.CustomTools), mcpTools...),
		Disallowed: s.lin.Disallowed,
	})
	s.diag.AddAll(DiagTool, warnings)
	return out, err
}

// initMessage is the system/init line that opens the stream.
func (s *Session) initMessage() *message.System {
	return &message.System{
		Subtype: message.SubtypeInit, SessionID: s.env.SessionID, UUID: uuid.NewString(),
		Init: &message.Init{
			Cwd: s.env.Cwd, Tools: s.toolNames(), MCPServers: s.mcpInit(), Model: s.engine().Model(),
			PermissionMode: string(s.currentMode()), SlashCommands: s.slashCommandNames(), APIKeySource: s.apiKeySource,
			Version: Version, OutputStyle: "default", Agents: s.agentNames(), Skills: s.skillNames(),
			Plugins: s.pluginInit(), AdditionalDirectories: orEmpty(s.env.AdditionalDirs), Effort: s.opts.Effort,
			SandboxEnabled: s.sandboxEnabled(), SandboxUnavailable: s.sandboxUnavailable(), Betas: s.opts.Betas,
		},
	}
}

// toolNames are the session's tool names as the first init message gave
// them (the first run's start, before any tool change the run applies).
func (s *Session) toolNames() []string {
	s.toolsOnce.Do(func() { s.tools = s.engine().ToolNames() })
	return s.tools
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Close releases what the session's tools left running.
func (s *Session) Close() {
	s.endSession()
	s.Release()
}

// Release frees what Close frees (MCP servers, shells, the sandbox, the
// transcript, saved results, checkpoints) without ending the
// conversation: no SessionEnd hooks run. A durable host calls it when the
// session goes on in another process. The session is not used after it.
func (s *Session) Release() {
	s.closeMCP()
	tools.Cleanup(s.env)
	s.closeSandbox()
	s.transcript.close()
	s.removeResultsDir()
	s.closeCheckpoints()
}

func thinkingFor(o *Config) *model.Thinking {
	if o.MaxThinkingTokens > 0 {
		return &model.Thinking{Type: ThinkingEnabled, BudgetTokens: o.MaxThinkingTokens}
	}
	return o.Thinking.model()
}

func outputSchema(o *Config) json.RawMessage {
	if o.OutputFormat == nil {
		return nil
	}
	return o.OutputFormat.Schema
}

// EngineConfig is the configuration the session built its main loop from:
// provider, system prompt, tools, authoriser, hooks and limits, resolved
// from the options and settings. A durable host (the temporal module)
// runs the same loop elsewhere and calls these to carry out its effects:
// the model request, a tool call, an authorisation. The functions and
// tools in it belong to the session: they stop working after Close. The
// model, thinking and effort are the current ones (the engine keeps the
// configuration; the session does not keep a copy).
func (s *Session) EngineConfig() engine.Config { return s.engine().Config() }

// InitMessage is the system/init message Run starts with: the session's
// id, model, mode, tools, MCP servers and the rest of what it resolved.
func (s *Session) InitMessage() *message.System { return s.initMessage() }
