// Command agentloop runs an agent on a prompt and prints the result.
//
//	agentloop -p "What does main.go do?"
//	echo "Summarise README.md" | agentloop -p --output-format json
//	agentloop -p "Fix the failing test" --allowedTools Edit,Bash --max-turns 20
//
// Its flags and its stream-json output follow the reference CLI, so tools
// written for that CLI can drive agentloop. Credentials come from
// ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL points it at
// any compatible endpoint.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/settings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command, with its streams passed in for tests. It returns
// the exit code: 0 on success, 1 on an error result or failure, 2 on a bad
// command line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	c, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "agentloop: %v\n", strings.TrimPrefix(err.Error(), "usage: "))
		return 2
	}
	switch {
	case c.showHelp:
		fmt.Fprint(stdout, usageText())
		return 0
	case c.showVersion:
		fmt.Fprintf(stdout, "agentloop %s\n", agentloop.Version)
		return 0
	}
	prompt, err := readPrompt(c, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "agentloop: %v\n", err)
		return 2
	}
	opts, err := c.options()
	if err != nil {
		fmt.Fprintf(stderr, "agentloop: %v\n", err)
		return 2
	}
	closeLog, err := c.setLogger(opts, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "agentloop: %v\n", err)
		return 2
	}
	defer closeLog()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	return printRun(agentloop.Query(ctx, prompt, opts), c, out, stderr)
}

// readPrompt takes the prompt from the argument, --prompt-file or stdin.
func readPrompt(c *config, stdin io.Reader) (string, error) {
	switch {
	case c.hasPrompt:
		if strings.TrimSpace(c.prompt) == "" {
			return "", errors.New("the prompt is empty")
		}
		return c.prompt, nil
	case c.promptFile != "":
		b, err := os.ReadFile(c.promptFile)
		if err != nil {
			return "", fmt.Errorf("reading the prompt file: %w", err)
		}
		if strings.TrimSpace(string(b)) == "" {
			return "", fmt.Errorf("the prompt file %s is empty", c.promptFile)
		}
		return string(b), nil
	}
	if f, ok := stdin.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			return "", errors.New("no prompt: give one as an argument (agentloop -p \"…\") or on standard input")
		}
	}
	b, err := io.ReadAll(stdin)
	if err != nil {
		return "", fmt.Errorf("reading the prompt from standard input: %w", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", errors.New("no prompt: give one as an argument (agentloop -p \"…\") or on standard input")
	}
	return string(b), nil
}

// options maps the command line onto agentloop.Options.
func (c *config) options() (*agentloop.Options, error) {
	o := &agentloop.Options{
		Model:                  c.model,
		FallbackModels:         c.fallback,
		SystemPrompt:           c.systemPrompt,
		AppendSystemPrompt:     c.appendSystem,
		AdditionalDirectories:  c.addDirs,
		AllowedTools:           c.allowed,
		DisallowedTools:        c.disallowed,
		PermissionMode:         agentloop.PermissionMode(c.mode),
		MaxTurns:               c.maxTurns,
		MaxBudgetUSD:           c.maxBudget,
		MaxTokens:              c.maxTokens,
		Effort:                 c.effort,
		IncludePartialMessages: c.partial,
		SessionID:              c.sessionID,
		Settings:               c.settings,
		IncludeHookEvents:      c.hookEvents,
		Agents:                 c.agents,
		Resume:                 c.resume,
		Continue:               c.cont,
		ForkSession:            c.fork,
		NoSessionPersistence:   c.noPersist,
	}
	if c.sourcesSet {
		o.SettingSources = []settings.SettingSource{}
		for _, s := range c.sources {
			o.SettingSources = append(o.SettingSources, settings.SettingSource(s))
		}
	}
	if c.jsonSchema != "" {
		o.OutputFormat = &agentloop.OutputFormat{Type: "json_schema", Schema: json.RawMessage(c.jsonSchema)}
	}
	switch {
	case c.thinking == agentloop.ThinkingAdaptive || c.thinking == agentloop.ThinkingDisabled:
		o.Thinking = &agentloop.ThinkingConfig{Type: c.thinking}
		if c.maxThinking > 0 {
			return nil, errors.New("--max-thinking-tokens goes with --thinking enabled, not " + c.thinking)
		}
	case c.maxThinking > 0:
		o.MaxThinkingTokens = c.maxThinking
	}
	if c.toolsSet {
		o.Tools = append([]string{}, c.tools...)
	}
	if c.systemPromptF != "" {
		if c.systemPrompt != "" {
			return nil, errors.New("give --system-prompt or --system-prompt-file, not both")
		}
		b, err := os.ReadFile(c.systemPromptF)
		if err != nil {
			return nil, fmt.Errorf("reading the system prompt file: %w", err)
		}
		o.SystemPrompt = string(b)
	}
	return o, nil
}

// setLogger points opts.Logger at the diagnostics log the flags ask for:
// --debug-file appends to a file, --debug writes to stderr.
func (c *config) setLogger(opts *agentloop.Options, stderr io.Writer) (func(), error) {
	switch {
	case c.debugFile != "":
		f, err := os.OpenFile(c.debugFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("--debug-file: %w", err)
		}
		opts.Logger = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
		return func() { f.Close() }, nil
	case c.debug:
		opts.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return func() {}, nil
}

// printRun consumes the stream and prints it in the chosen format. Lines
// are flushed as they are written.
func printRun(stream agentloop.Stream, c *config, out *bufio.Writer, stderr io.Writer) int {
	var (
		result *agentloop.ResultMessage
		all    []agentloop.Message
		runErr error
	)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for m, err := range stream {
		if err != nil {
			runErr = err
			break
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			result = r
		}
		if d, ok := agentloop.DiagnosticOf(m); ok && c.outputFormat != "stream-json" && !c.debug && c.debugFile == "" {
			// Only stream-json carries the message; elsewhere the
			// user would not see it.
			fmt.Fprintf(stderr, "agentloop: warning: %s\n", d.Text)
		}
		switch {
		case c.outputFormat == "stream-json":
			if err := enc.Encode(m); err != nil {
				fmt.Fprintf(stderr, "agentloop: writing output: %v\n", err)
				return 1
			}
			out.Flush()
		case c.outputFormat == "json" && c.verbose:
			all = append(all, m)
		}
	}
	if result == nil {
		if runErr == nil {
			runErr = errors.New("the run ended without a result")
		}
		out.Flush()
		fmt.Fprintf(stderr, "agentloop: %s\n", strings.TrimPrefix(runErr.Error(), "agentloop: "))
		return 1
	}
	switch c.outputFormat {
	case "json":
		var v any = result
		if c.verbose {
			v = all
		}
		if err := enc.Encode(v); err != nil {
			fmt.Fprintf(stderr, "agentloop: writing output: %v\n", err)
			return 1
		}
	case "text":
		if result.Result != nil {
			fmt.Fprintln(out, *result.Result)
		} else {
			fmt.Fprintln(out, strings.Join(result.Errors, "\n"))
		}
	}
	if result.IsError {
		return 1
	}
	return 0
}
