package conversation

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/assemble"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// pendingEngine is what NewSession resolved for the main loop's engine
// and only the engine keeps: an idle session (a Client before its first
// run) holds this rather than the engine session. The rest of the
// engine's configuration is read from the session when the engine is
// made (engineConfig); those parts do not change once the session is set
// up.
type pendingEngine struct {
	system     []model.Content
	tools      []tool.Tool
	opening    []model.Content // OpeningContext: CLAUDE.md, the skill listing
	deferred   *toolsearch.Catalog
	noToolRefs bool // the API's betas are off (betasOff), as the environment was at NewSession
	// err, once the engine is made, is why it was made without its tools
	// (a tool's Info changed since NewSession checked it); Run fails
	// with it.
	err error
}

// engineConfig is the main loop's engine configuration: p with what the
// session resolved.
func (s *Session) engineConfig(p *pendingEngine) engine.Config {
	o := s.opts
	return engine.Config{
		Provider:             s.env.Provider,
		Model:                s.model,
		FallbackModels:       assemble.Fallbacks(s.model, o.FallbackModels),
		System:               p.system,
		Tools:                p.tools,
		MaxTurns:             o.MaxTurns,
		MaxBudgetUSD:         o.MaxBudgetUSD,
		Budget:               s.lin,
		MaxTokens:            o.MaxTokens,
		ContextManagement:    o.ContextManagement,
		Effort:               o.Effort,
		Betas:                o.Betas,
		TaskBudget:           taskBudgetTokens(o.TaskBudget),
		Thinking:             thinkingFor(o),
		Partial:              o.IncludePartialMessages,
		OutputSchema:         outputSchema(o),
		MaxStructuredRetries: o.MaxStructuredOutputRetries,
		Env:                  s.env,
		OpeningContext:       p.opening,
		Compaction:           s.compactCfg,
		LocalCommand:         s.localCommand, // builtin_commands.go
		Deferred:             p.deferred,
		NoToolReferences:     p.noToolRefs,
		Authorize:            s.authorize,
		Concurrent:           s.concurrentCall,
		Hooks:                s.lazyMainHooks(), // agent.go
		Record:               s.recordAll,
		Prices:               s.prices,
		UnknownPrice:         s.unknownPrice,
		APIProvider:          s.apiProvider,
		Observer:             o.Observer,
	}
}

// deferEngine checks the engine configuration of p and keeps p for the
// engine's first use (engine): NewSession reports what engine.New would
// refuse. With now set (a run follows at once), the engine the check
// makes is kept instead.
func (s *Session) deferEngine(p *pendingEngine, now bool) error {
	if now {
		e, err := engine.New(s.engineConfig(p))
		if err != nil {
			return fmt.Errorf("agentloop: %w", err)
		}
		s.eng.Store(e)
		return nil
	}
	if err := engine.Check(s.engineConfig(p)); err != nil {
		return fmt.Errorf("agentloop: %w", err)
	}
	s.engPend = p
	return nil
}

// engine is the main loop's engine session, made by the first call once
// NewSession has set the session up; nil before (during NewSession).
// Safe for concurrent use.
func (s *Session) engine() *engine.Session {
	if e := s.eng.Load(); e != nil {
		return e
	}
	s.engMu.Lock()
	defer s.engMu.Unlock()
	if e := s.eng.Load(); e != nil {
		return e
	}
	p := s.engPend
	if p == nil {
		return nil
	}
	e, err := engine.New(s.engineConfig(p))
	if err != nil {
		// NewSession checked the same configuration: only a tool whose
		// Info changed since then gets here. The engine goes without
		// tools, which cannot fail, and the runs fail with err.
		cfg := s.engineConfig(p)
		cfg.Tools, cfg.Deferred = nil, nil
		if e, err2 := engine.New(cfg); err2 == nil {
			s.engPend = &pendingEngine{err: fmt.Errorf("agentloop: the tools changed since the session started: %w", err)}
			s.eng.Store(e)
			return e
		}
		return nil
	}
	s.engPend = nil
	s.eng.Store(e)
	return e
}

// engineErr is why the engine was made without its tools (see engine),
// nil when it was not.
func (s *Session) engineErr() error {
	s.engMu.Lock()
	defer s.engMu.Unlock()
	if s.eng.Load() == nil || s.engPend == nil {
		return nil
	}
	return s.engPend.err
}

// currentModel is the main loop's model: the engine's, or before the
// engine is made the one it will be made with. An idle session answers
// without making its engine.
func (s *Session) currentModel() string {
	if e := s.eng.Load(); e != nil {
		return e.Model()
	}
	return s.model
}

// currentEffort is the main loop's effort, as currentModel is its model.
func (s *Session) currentEffort() string {
	if e := s.eng.Load(); e != nil {
		return e.Effort()
	}
	return s.opts.Effort
}
