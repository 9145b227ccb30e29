package conversation

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/assemble"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/observe"
	"github.com/agentloop/agentloop/pricing"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
)

// PermissionMode is agentloop.PermissionMode.
type PermissionMode = vocab.PermissionMode

// The permission modes, by their names in the root package.
const (
	PermissionDefault     = vocab.PermissionDefault
	PermissionAcceptEdits = vocab.PermissionAcceptEdits
	PermissionPlan        = vocab.PermissionPlan
	PermissionDontAsk     = vocab.PermissionDontAsk
	PermissionBypass      = vocab.PermissionBypass
	PermissionAuto        = vocab.PermissionAuto
)

// Config is agentloop.Options as the session reads it: the same fields,
// documented there, in the same order (the root's wiring.go copies them
// and its tests hold the two lists together). A nil *Config means the
// defaults.
type Config struct {
	Model          string
	FallbackModels []string

	SystemPrompt               string
	AppendSystemPrompt         string
	ExcludeDynamicSystemPrompt bool
	EmptySystemPrompt          bool

	Cwd                   string
	AdditionalDirectories []string

	Tools           []string
	CustomTools     []Tool
	ToolSearch      ToolSearchMode
	MCPServers      map[string]MCPServerConfig
	MCPConnector    MCPConnector
	StrictMCPConfig bool
	MCPStartTimeout time.Duration
	Plugins         []PluginConfig
	AllowedTools    []string
	DisallowedTools []string
	PermissionMode  PermissionMode
	CanUseTool      CanUseTool
	// PermissionPromptTool: Options.PermissionPromptTool (permission_prompt_tool.go).
	PermissionPromptTool string

	Hooks                map[hooks.Event][]hooks.Matcher
	IncludeHookEvents    bool
	ForwardSubagentText  bool
	SettingSources       []settings.SettingSource
	ConfineProjectConfig bool
	Skills               []string
	Sandbox              *SandboxSettings
	Settings             string

	MaxTurns           int
	MaxBudgetUSD       float64
	ModelPricing       map[string]pricing.Rates
	Effort             string
	MaxTokens          int
	ContextManagement  *ContextManagement
	AutoCompactWindow  int64
	DisableAutoCompact bool
	Thinking           *ThinkingConfig
	MaxThinkingTokens  int

	OutputFormat               *OutputFormat
	MaxStructuredOutputRetries int

	Betas      []string
	TaskBudget *TaskBudget

	IncludePartialMessages bool

	Agents map[string]AgentDefinition

	Agent string

	AskUser tool.AskUserFunc

	ToolHost *tool.Host

	Provider                model.Provider
	API                     *APIOptions
	SessionID               string
	Resume                  string
	Continue                bool
	ForkSession             bool
	ResumeSessionAt         string
	ResumeDropsTurn         string
	Title                   string
	NoSessionPersistence    bool
	ConfigDir               string
	SessionStore            sessions.Store
	SessionStoreLeaseTTL    time.Duration
	EnableFileCheckpointing bool

	Env               map[string]string
	ExposeCredentials bool

	Logger *slog.Logger

	Observer observe.Observer
}

// ErrInvalidOption reports an option value that cannot be used. The error
// also wraps its cause where there is one: [ErrUnknownValue] for a value
// outside a vocabulary, a *settings.Error for a malformed settings file.
var ErrInvalidOption = assemble.ErrInvalidOption

// validate checks the options that can be wrong on their own, and spells
// an aliased permission mode ("manual") canonically.
func (o *Config) validate() error {
	if o.PermissionMode != "" {
		m, err := ParsePermissionMode(string(o.PermissionMode))
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		o.PermissionMode = m
	}
	if o.Model != "" && strings.TrimSpace(o.Model) == "" {
		return fmt.Errorf("%w: Model %q is blank: give a model id or alias, or leave it empty for the default", ErrInvalidOption, o.Model)
	}
	if o.PermissionPromptTool != "" {
		if o.CanUseTool != nil {
			return fmt.Errorf("%w: set CanUseTool or PermissionPromptTool, not both", ErrInvalidOption)
		}
		if !strings.HasPrefix(o.PermissionPromptTool, "mcp__") {
			return fmt.Errorf("%w: PermissionPromptTool %q is not an MCP tool name (mcp__server__tool)", ErrInvalidOption, o.PermissionPromptTool)
		}
	}
	if o.MaxTurns < 0 {
		return fmt.Errorf("%w: MaxTurns %d is negative", ErrInvalidOption, o.MaxTurns)
	}
	if o.MaxBudgetUSD < 0 || o.MaxBudgetUSD != o.MaxBudgetUSD {
		return fmt.Errorf("%w: MaxBudgetUSD %v must be a positive number", ErrInvalidOption, o.MaxBudgetUSD)
	}
	if o.AutoCompactWindow < 0 {
		return fmt.Errorf("%w: AutoCompactWindow %d is negative", ErrInvalidOption, o.AutoCompactWindow)
	}
	if o.MaxTokens < 0 {
		return fmt.Errorf("%w: MaxTokens %d is negative", ErrInvalidOption, o.MaxTokens)
	}
	if o.SessionID != "" && (o.Resume != "" || o.Continue) && !o.ForkSession {
		return fmt.Errorf("%w: SessionID with Resume or Continue needs ForkSession", ErrInvalidOption)
	}
	if o.ForkSession && o.Resume == "" && !o.Continue {
		return fmt.Errorf("%w: ForkSession needs Resume or Continue", ErrInvalidOption)
	}
	if o.SessionStoreLeaseTTL < 0 {
		return fmt.Errorf("%w: SessionStoreLeaseTTL %v is negative", ErrInvalidOption, o.SessionStoreLeaseTTL)
	}
	if o.SessionStore != nil && o.NoSessionPersistence {
		return fmt.Errorf("%w: SessionStore needs session persistence", ErrInvalidOption)
	}
	if o.SessionStore != nil && o.EnableFileCheckpointing {
		return fmt.Errorf("%w: EnableFileCheckpointing cannot be combined with SessionStore", ErrInvalidOption)
	}
	if err := checkContextManagement(o.ContextManagement); err != nil {
		return err
	}
	if o.MaxThinkingTokens < 0 {
		return fmt.Errorf("%w: MaxThinkingTokens %d is negative", ErrInvalidOption, o.MaxThinkingTokens)
	}
	if o.MaxThinkingTokens > 0 && o.Thinking != nil {
		return fmt.Errorf("%w: set Thinking or MaxThinkingTokens, not both", ErrInvalidOption)
	}
	if t := o.Thinking; t != nil {
		typ, err := ParseThinkingType(t.Type)
		if err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
		if typ == ThinkingEnabled && t.BudgetTokens < 1024 {
			return fmt.Errorf("%w: thinking budget %d: enabled thinking needs a budget of at least 1024 tokens", ErrInvalidOption, t.BudgetTokens)
		}
		if t.Display != "" {
			if _, err := ParseThinkingDisplay(t.Display); err != nil {
				return fmt.Errorf("%w: %w", ErrInvalidOption, err)
			}
		}
	}
	if o.MaxStructuredOutputRetries < 0 {
		return fmt.Errorf("%w: MaxStructuredOutputRetries %d is negative", ErrInvalidOption, o.MaxStructuredOutputRetries)
	}
	if f := o.OutputFormat; f != nil {
		if f.Type != "" && f.Type != "json_schema" {
			return fmt.Errorf("%w: output format type %q (only json_schema exists)", ErrInvalidOption, f.Type)
		}
		if len(f.Schema) == 0 {
			return fmt.Errorf("%w: output format has no schema", ErrInvalidOption)
		}
	}
	if o.Effort != "" {
		if _, err := ParseEffort(o.Effort); err != nil {
			return fmt.Errorf("%w: %w", ErrInvalidOption, err)
		}
	}
	if err := checkSkillsOption(o.Skills); err != nil { // skills_option.go
		return err
	}
	if err := o.checkNewOptions(); err != nil { // betas.go
		return err
	}
	return nil
}

// ThinkingConfig is agentloop.ThinkingConfig as the session reads it; the fields are
// documented there.
type ThinkingConfig struct {
	Type         string
	BudgetTokens int
	Display      string
}

func (t *ThinkingConfig) model() *model.Thinking {
	if t == nil {
		return nil
	}
	return &model.Thinking{Type: t.Type, BudgetTokens: t.BudgetTokens, Display: t.Display}
}
