package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/observe"
)

// config is the parsed command line.
type config struct {
	print         bool
	prompt        string
	hasPrompt     bool
	promptFile    string
	outputFormat  string
	verbose       bool
	partial       bool
	model         string
	fallback      []string
	maxTurns      int
	maxBudget     float64
	autoCompact   int64 // --autocompact tokens; 0: auto
	systemPrompt  string
	appendSystem  string
	effort        string
	tools         []string
	toolsSet      bool
	allowed       []string
	disallowed    []string
	mode          string
	addDirs       []string
	jsonSchema    string
	maxThinking   int
	settings      string
	sources       []string
	sourcesSet    bool
	hookEvents    bool
	agents        map[string]agentloop.AgentDefinition
	resume        string
	cont          bool
	fork          bool
	noPersist     bool
	thinking      string
	sessionID     string
	showVersion   bool
	showHelp      bool
	maxTokens     int
	systemPromptF string
	debug         bool
	debugFilter   debugFilter // --debug=<filter> (debugfilter.go)
	debugFile     string
	trace         *debugTrace // per model and tool call log lines (debugtrace.go); nil: none
	excludeDyn    bool
	name          string   // --name: Options.Title
	noSkills      bool     // --disable-slash-commands: no skills offered
	mcp           mcpFlags // --mcp-config, --strict-mcp-config (mcpflags.go)
	sdk           sdkFlags // the flags of sdkFlagDefs (sdkflags.go)
	// warnings are problems with the command line that do not stop the
	// run, such as unknown fields in --agents.
	warnings []string
	// warningsStreamed: the warnings were written after the init
	// message of a stream-json output (streamwarn.go).
	warningsStreamed bool

	// observer is OpenTelemetry as the environment sets it up
	// (telemetry.go); nil: off.
	observer observe.Observer
}

// errUsage marks errors in the command line.
var errUsage = errors.New("usage")

type flagKind int

const (
	kBool flagKind = iota
	kString
	kList
	kOptional // a string that may be left out: set gets "" then
	kEqValue  // a switch that takes a value only as --flag=value: set gets "" without one
	kOptBool  // a switch that may be followed by one of boolWords: set gets "" without one
)

// flagDef is one flag. The tables of flags (flagDefs, sdkFlagDefs,
// refFlagDefs) are static data: their setters are function literals that
// capture nothing and their help texts constants, so that building them
// costs no process anything at start-up.
type flagDef struct {
	names []string
	kind  flagKind
	// help is the flag's line in --help; a vocabulary's name in braces
	// ("{efforts}") stands for its values (newVocabHelp).
	help string
	set  func(c *config, v string) error
}

var flagDefs = []flagDef{
	{[]string{"-p", "--print"}, kBool, "print the response and exit (the only mode)", func(c *config, _ string) error { c.print = true; return nil }},
	{[]string{"--output-format"}, kString, "text (default), json or stream-json", func(c *config, v string) error {
		switch v {
		case "text", "json", "stream-json":
			c.outputFormat = v
			return nil
		}
		return fmt.Errorf("--output-format %q: want text, json or stream-json", v)
	}},
	{[]string{"--verbose"}, kBool, "with json, print every message; needed for stream-json", func(c *config, _ string) error { c.verbose = true; return nil }},
	{[]string{"--include-partial-messages"}, kBool, "add raw stream events (stream-json)", func(c *config, _ string) error { c.partial = true; return nil }},
	{[]string{"--model"}, kString, "model id or alias (opus, sonnet, haiku, fable)", func(c *config, v string) error {
		if strings.TrimSpace(v) == "" {
			return errors.New("--model: want a model id or alias, not an empty string")
		}
		c.model = v
		return nil
	}},
	{[]string{"--fallback-model"}, kList, "models to use when the main one is overloaded (comma-separated)", func(c *config, v string) error { c.fallback = append(c.fallback, splitList(v)...); return nil }},
	{[]string{"--max-turns"}, kString, "stop after this many tool-using turns", func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("--max-turns %q: want a whole number of at least 1", v)
		}
		c.maxTurns = n
		return nil
	}},
	{[]string{"--max-budget-usd"}, kString, "stop once the run has cost this many dollars", func(c *config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f <= 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("--max-budget-usd %q: want a positive number of dollars", v)
		}
		c.maxBudget = f
		return nil
	}},
	{[]string{"--autocompact"}, kString, "auto, or the context window in tokens that automatic compaction keeps within", func(c *config, v string) error {
		if v == "auto" {
			c.autoCompact = 0
			return nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("--autocompact %q: want auto or a whole number of tokens", v)
		}
		c.autoCompact = n
		return nil
	}},
	{[]string{"--max-tokens"}, kString, "cap each reply at this many output tokens", func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("--max-tokens %q: want a whole number of at least 1", v)
		}
		c.maxTokens = n
		return nil
	}},
	{[]string{"--system-prompt"}, kString, "replace the system prompt", func(c *config, v string) error {
		c.systemPrompt, c.sdk.emptySystemPrompt = v, v == ""
		return nil
	}},
	{[]string{"--system-prompt-file"}, kString, "replace the system prompt with a file's text", func(c *config, v string) error { c.systemPromptF = v; return nil }},
	{[]string{"--append-system-prompt"}, kString, "add text to the system prompt", func(c *config, v string) error { c.appendSystem = v; return nil }},
	{[]string{"--exclude-dynamic-system-prompt-sections"}, kBool, "send the environment in the first user message, keeping the system prompt the same across sessions",
		func(c *config, _ string) error { c.excludeDyn = true; return nil }},
	{[]string{"--effort"}, kString, "{efforts}", func(c *config, v string) error {
		e, err := vocab.ParseEffort(v)
		if err != nil {
			return fmt.Errorf("--effort: %w", err)
		}
		c.effort = string(e)
		return nil
	}},
	{[]string{"--tools"}, kList, `built-in tools to offer ("" for none, "default" for the default set)`, func(c *config, v string) error {
		c.toolsSet = true
		c.tools = append(c.tools, splitList(v)...)
		return nil
	}},
	{[]string{"--allowedTools", "--allowed-tools"}, kList, `rules for calls that run without asking, e.g. "Bash(npm test:*)" Write`, func(c *config, v string) error { c.allowed = append(c.allowed, splitList(v)...); return nil }},
	{[]string{"--disallowedTools", "--disallowed-tools"}, kList, "tools removed from the model's list", func(c *config, v string) error { c.disallowed = append(c.disallowed, splitList(v)...); return nil }},
	{[]string{"--permission-mode"}, kString, "{permission modes}", func(c *config, v string) error {
		m, err := vocab.ParsePermissionMode(v)
		if err != nil {
			return fmt.Errorf("--permission-mode: %w", err)
		}
		c.mode = string(m)
		return nil
	}},
	{[]string{"--add-dir"}, kList, "further directories the tools may use", func(c *config, v string) error { c.addDirs = append(c.addDirs, splitList(v)...); return nil }},
	{[]string{"--json-schema"}, kString, "JSON schema the final answer must match (structured output)", func(c *config, v string) error {
		if err := checkJSON([]byte(v)); err != nil {
			return fmt.Errorf("--json-schema: %w", err)
		}
		c.jsonSchema = v
		return nil
	}},
	{[]string{"--max-thinking-tokens"}, kString, "think with this token budget (at least 1024)", func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1024 {
			return fmt.Errorf("--max-thinking-tokens %q: want a whole number of at least 1024", v)
		}
		c.maxThinking = n
		return nil
	}},
	{[]string{"--thinking"}, kString, "{thinking types} (enabled goes with --max-thinking-tokens)", func(c *config, v string) error {
		t, err := vocab.ParseThinkingType(v)
		if err != nil {
			return fmt.Errorf("--thinking: %w", err)
		}
		c.thinking = string(t)
		return nil
	}},
	{[]string{"--settings"}, kString, "a settings file, or inline settings JSON", func(c *config, v string) error { c.settings = v; return nil }},
	{[]string{"--setting-sources"}, kString, `settings files to load: user,project,local ("" for none)`, func(c *config, v string) error {
		c.sourcesSet = true
		for _, s := range splitList(v) {
			switch s {
			case "user", "project", "local":
				c.sources = append(c.sources, s)
			default:
				return fmt.Errorf("--setting-sources %q: want a list of user, project and local", v)
			}
		}
		return nil
	}},
	{[]string{"--include-hook-events"}, kBool, "add hook_started and hook_response lines (stream-json)", func(c *config, _ string) error { c.hookEvents = true; return nil }},
	{[]string{"--agents"}, kString, `subagents as JSON, or a file of it: {"name": {"description": …, "prompt": …, "tools": […]}}`, func(c *config, v string) error {
		a, warnings, err := parseAgents(v)
		if err != nil {
			return fmt.Errorf("--agents: %w", err)
		}
		c.agents = a
		c.warnings = append(c.warnings, warnings...)
		return nil
	}},
	{[]string{"--mcp-config"}, kString, `MCP servers as JSON, or a file of it: {"mcpServers": {"name": {"command": …}}}; repeatable`, (*config).addMCPConfig},
	{[]string{"--strict-mcp-config"}, kBool, "use only the servers of --mcp-config, not .mcp.json", func(c *config, _ string) error { c.mcp.strict = true; return nil }},
	{[]string{"--resume", "-r"}, kOptional, "resume the session with this id; without one, the most recent session of this directory (as --continue)", func(c *config, v string) error {
		if v == "" {
			c.cont = true
			return nil
		}
		c.resume = v
		return nil
	}},
	{[]string{"--continue", "-c"}, kBool, "continue the most recent session of this directory", func(c *config, _ string) error { c.cont = true; return nil }},
	{[]string{"--fork-session"}, kBool, "with --resume or --continue: copy the session to a new id first", func(c *config, _ string) error { c.fork = true; return nil }},
	{[]string{"--no-session-persistence"}, kBool, "do not write the session's transcript", func(c *config, _ string) error { c.noPersist = true; return nil }},
	{[]string{"--session-id"}, kString, "use this UUID as the session id", func(c *config, v string) error { c.sessionID = v; return nil }},
	{[]string{"--prompt-file"}, kString, "read the prompt from a file", func(c *config, v string) error { c.promptFile = v; return nil }},
	{[]string{"--debug", "-d"}, kEqValue, `write the diagnostics log to standard error; --debug=<filter> keeps some categories ("api,hooks") or leaves some out ("!mcp")`,
		func(c *config, v string) error {
			f, err := parseDebugFilter(v)
			if err != nil {
				return err
			}
			c.debug, c.debugFilter = true, f
			return nil
		}},
	{[]string{"--debug-file"}, kString, "append the diagnostics log to this file (implies --debug; a --debug=<filter> applies)", func(c *config, v string) error { c.debugFile = v; return nil }},
	{[]string{"--version", "-v"}, kBool, "print the version", func(c *config, _ string) error { c.showVersion = true; return nil }},
	{[]string{"--help", "-h"}, kBool, "print this help", func(c *config, _ string) error { c.showHelp = true; return nil }},
}

func lookupFlag(name string) *flagDef {
	for _, defs := range [][]flagDef{flagDefs, sdkFlagDefs, refFlagDefs} {
		for i := range defs {
			if slices.Contains(defs[i].names, name) {
				return &defs[i]
			}
		}
	}
	return nil
}

// parseArgs reads the command line. Flags and the prompt may come in any
// order; values are given as --flag value or --flag=value; a list flag takes
// one value, split on commas and on spaces outside parentheses. "--" ends
// the flags. An empty argument that is no flag's value is no prompt: it is
// skipped, as the reference skips an empty prompt (the ACP adapter passes
// `--replay-user-messages ""`, and `-p ""` reads the prompt from stdin).
func parseArgs(args []string) (*config, error) {
	c := &config{outputFormat: "text"}
	var positional []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			for _, p := range args[i+1:] {
				if p != "" {
					positional = append(positional, p)
				}
			}
			break
		}
		if a == "" {
			continue // no prompt (see above)
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			positional = append(positional, a)
			continue
		}
		name, value, hasValue := strings.Cut(a, "=")
		def := lookupFlag(name)
		if def == nil {
			return nil, fmt.Errorf("%w: unknown option %s (see --help)", errUsage, name)
		}
		switch def.kind {
		case kBool:
			if hasValue {
				return nil, fmt.Errorf("%w: %s takes no value", errUsage, name)
			}
			if err := def.set(c, ""); err != nil {
				return nil, fmt.Errorf("%w: %w", errUsage, err)
			}
			continue
		case kString:
			if !hasValue {
				if i+1 >= len(args) {
					return nil, fmt.Errorf("%w: %s needs a value", errUsage, name)
				}
				i++
				value = args[i]
			}
			if err := def.set(c, value); err != nil {
				return nil, fmt.Errorf("%w: %w", errUsage, err)
			}
		case kOptBool:
			if !hasValue && i+1 < len(args) && slices.Contains(boolWords, args[i+1]) {
				i++
				value = args[i]
			}
			if value != "" && !slices.Contains(boolWords, value) {
				return nil, fmt.Errorf("%w: %s %q: want one of %s", errUsage, name, value, strings.Join(boolWords, ", "))
			}
			if err := def.set(c, value); err != nil {
				return nil, fmt.Errorf("%w: %w", errUsage, err)
			}
		case kEqValue:
			if err := def.set(c, value); err != nil {
				return nil, fmt.Errorf("%w: %w", errUsage, err)
			}
		case kOptional:
			if !hasValue && i+1 < len(args) && !isFlag(args[i+1]) {
				i++
				value = args[i]
			}
			if err := def.set(c, value); err != nil {
				return nil, fmt.Errorf("%w: %w", errUsage, err)
			}
		case kList:
			if !hasValue {
				if i+1 >= len(args) || isFlag(args[i+1]) {
					return nil, fmt.Errorf("%w: %s needs a value", errUsage, name)
				}
				i++
				value = args[i]
			}
			if err := def.set(c, value); err != nil {
				return nil, fmt.Errorf("%w: %w", errUsage, err)
			}
		}
	}
	if err := c.checkSubcommand(args); err != nil { // refflags.go
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	if len(positional) > 1 {
		return nil, fmt.Errorf("%w: more than one prompt given (%q and %q); quote the prompt", errUsage, positional[0], positional[1])
	}
	if len(positional) == 1 {
		c.prompt, c.hasPrompt = positional[0], true
	}
	if c.outputFormat == "stream-json" && !c.verbose {
		return nil, fmt.Errorf("%w: --output-format stream-json needs --verbose", errUsage)
	}
	if c.partial && c.outputFormat != "stream-json" {
		return nil, fmt.Errorf("%w: --include-partial-messages needs --output-format stream-json", errUsage)
	}
	if c.thinking == string(vocab.ThinkingEnabled) && c.maxThinking == 0 {
		return nil, fmt.Errorf("%w: --thinking enabled needs --max-thinking-tokens", errUsage)
	}
	if c.hasPrompt && c.promptFile != "" {
		return nil, fmt.Errorf("%w: give the prompt as an argument or with --prompt-file, not both", errUsage)
	}
	if err := c.checkSDKFlags(); err != nil {
		return nil, fmt.Errorf("%w: %w", errUsage, err)
	}
	return c, nil
}

// isFlag reports whether an argument is an option rather than a value.
func isFlag(a string) bool {
	if !strings.HasPrefix(a, "-") || a == "-" {
		return false
	}
	name, _, _ := strings.Cut(a, "=")
	return lookupFlag(name) != nil || strings.HasPrefix(a, "--")
}

// splitList splits a list value on commas and on spaces outside
// parentheses, so "Bash(npm test:*),Read" and "Read Write" both work.
func splitList(v string) []string {
	var out []string
	depth, start := 0, 0
	flush := func(end int) {
		if s := strings.TrimSpace(v[start:end]); s != "" {
			out = append(out, s)
		}
	}
	for i, r := range v {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth > 0:
			depth--
		case (r == ',' || r == ' ') && depth == 0:
			flush(i)
			start = i + 1
		}
	}
	flush(len(v))
	return out
}

// writeFlags lists defs for --help; vocabs writes out the vocabularies
// (newVocabHelp).
func writeFlags(b *strings.Builder, defs []flagDef, vocabs *strings.Replacer) {
	for _, d := range defs {
		names := strings.Join(d.names, ", ")
		switch d.kind {
		case kString, kList:
			names += " <value>"
		case kOptional, kOptBool:
			names += " [value]"
		case kEqValue:
			names += "[=value]"
		}
		fmt.Fprintf(b, "  %-44s %s\n", names, vocabs.Replace(d.help))
	}
}

// newVocabHelp returns the replacer that writes out the vocabularies help
// texts name in braces.
func newVocabHelp() *strings.Replacer {
	return strings.NewReplacer(
		"{efforts}", vocab.Efforts.Want(),
		"{permission modes}", vocab.PermissionModes.Want(),
		"{thinking types}", vocab.ThinkingTypes.Want(),
		"{thinking displays}", vocab.ThinkingDisplays.Want(),
	)
}

func usageText() string {
	var b strings.Builder
	vocabs := newVocabHelp()
	b.WriteString("Usage: agentloop -p [options] [prompt]\n\nRuns an agent on the prompt (or standard input) and prints the result.\n\nOptions:\n")
	writeFlags(&b, flagDefs, vocabs)
	b.WriteString("\nFlags the Agent SDKs pass (see docs/design.md, \"Wire protocol groundwork\"):\n")
	writeFlags(&b, sdkFlagDefs, vocabs)
	b.WriteString("\nOther flags of the reference CLI (see docs/interop.md, \"Command-line flags\"):\n")
	writeFlags(&b, refFlagDefs, vocabs)
	b.WriteString("\nPiped input is the prompt; with a prompt argument it is added after it, on a new line.\n")
	b.WriteString("\nEnvironment: ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN (credentials), ANTHROPIC_BASE_URL (endpoint).\n")
	b.WriteString("\nExit status: " + exitStatusText + "\n")
	return b.String()
}
