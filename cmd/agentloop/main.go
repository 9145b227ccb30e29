// Command agentloop runs an agent on a prompt and prints the result.
//
//	agentloop -p "What does main.go do?"
//	echo "Summarise README.md" | agentloop -p --output-format json
//	cat build.log | agentloop -p "Why did the build fail?"
//	agentloop -p "Fix the failing test" --allowedTools Edit,Bash --max-turns 20
//
// Its flags and its stream-json output follow the reference CLI, so tools
// written for that CLI can drive agentloop. Credentials come from
// ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN; ANTHROPIC_BASE_URL points it at
// any compatible endpoint, ANTHROPIC_CUSTOM_HEADERS adds headers and
// ANTHROPIC_MODEL picks the model, from the environment or the settings'
// env (not from a project's own settings files for the endpoint, headers
// and credentials). As root, --dangerously-skip-permissions needs
// IS_SANDBOX=1. Exit status: 0 on success; 1 on an error result,
// a failure to start or a bad command line; 0 after SIGINT, which
// interrupts the run as the reference does, and 143 on SIGTERM. In json and stream-json output a failure to start is also an
// error result on stdout.
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
	"sync"
	"syscall"

	"github.com/agentloop/agentloop"
	// Grows the main goroutine's stack before the other initialisers run
	// (see the package's documentation; TestMainStackGrowsFirst).
	_ "github.com/agentloop/agentloop/internal/mainstack"
	"github.com/agentloop/agentloop/settings"
)

func main() {
	hideCredentials()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	code := runSignalled(sigs, func() { signal.Stop(sigs) }, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	os.Exit(code)
}

// errInterrupted is the cause of a run cancelled by a signal.
var errInterrupted = errors.New("interrupted")

// runSignalled is run with signal handling: the first signal on sigs
// stops the handling (stopSignals) so that a second one ends the process
// at once, and then:
//   - SIGINT, when the mode took it as an interrupt (stream-json input:
//     the running turn ends with its partial reply, marker and result,
//     and no further input is read), ends the command with exit 0, as the
//     reference does;
//   - otherwise the run is cancelled: it still prints what it has (its
//     partial reply, the marker and the result); after SIGINT the exit
//     code is 0, as the reference's, and after SIGTERM 143 (128 + the
//     signal's number, what a shell reports for a process the signal
//     killed), a stream-json session writing nothing more (no result
//     line), as the reference.
func runSignalled(sigs <-chan os.Signal, stopSignals func(), args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	ctx, hooks := withSignalHooks(ctx)
	var (
		got         os.Signal
		interrupted bool
		wg          sync.WaitGroup
		done        = make(chan struct{})
	)
	wg.Go(func() {
		select {
		case got = <-sigs:
			stopSignals()
			if got == os.Interrupt && hooks.sigint() {
				interrupted = true
				return
			}
			if got == syscall.SIGTERM {
				hooks.sigterm()
			}
			cancel(fmt.Errorf("%w (%v)", errInterrupted, got))
		case <-done:
		}
	})
	code := run(ctx, args, stdin, stdout, stderr)
	close(done)
	wg.Wait()
	if interrupted || got == os.Interrupt {
		return exitOK
	}
	if s, ok := got.(syscall.Signal); ok {
		return 128 + int(s)
	}
	return code
}

// run is the whole command, with its streams passed in for tests. It
// returns the exit code (see exitStatusText): 0 on success, 1 on an error
// result, a failure to start or a bad command line.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "acp" {
		return runACP(ctx, args[1:], stdin, stdout, stderr) // acp.go
	}
	if len(args) > 0 && args[0] == "serve" {
		return runServe(ctx, args[1:], stdout, stderr) // serve.go
	}
	c, err := parseArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "agentloop: %v\n", strings.TrimPrefix(err.Error(), "usage: "))
		return exitFailure
	}
	switch {
	case c.showHelp:
		fmt.Fprint(stdout, usageText())
		return exitOK
	case c.showVersion:
		fmt.Fprintf(stdout, "agentloop %s\n", agentloop.Version)
		return exitOK
	}
	logger, closeLog, err := c.openLog(stderr)
	if err != nil {
		return c.startupFailure(err, stdout, stderr)
	}
	defer closeLog()
	warn := func(text string) {
		if logger != nil {
			logger.Warn(text, slog.String("tag", "cli"))
			return
		}
		fmt.Fprintf(stderr, "agentloop: warning: %s\n", text)
	}
	for _, w := range c.warnings {
		warn(w)
	}
	if err := c.checkBypassAsRoot(); err != nil { // bypass_root.go
		return c.startupFailure(err, stdout, stderr)
	}
	defer c.startTelemetry(ctx, warn)() // telemetry.go
	if c.sdk.inputFormat == "stream-json" {
		return runStreamJSON(ctx, c, stdin, stdout, stderr, logger, warn) // streamjson.go
	}
	if len(c.mcp.sdk) > 0 {
		// The host serves an sdk server over the control channel.
		return c.startupFailure(fmt.Errorf("--mcp-config: server %q is of type sdk, which needs --input-format stream-json", c.mcp.sdk[0]), stdout, stderr)
	}
	if err := c.checkResume(); err != nil { // startup.go
		return c.startupFailure(err, stdout, stderr)
	}
	prompt, err := readPrompt(ctx, c, stdin, warn)
	if err != nil {
		return c.startupFailure(err, stdout, stderr)
	}
	opts, err := c.options()
	if err != nil {
		return c.startupFailure(err, stdout, stderr)
	}
	opts.Logger = logger
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	return printRun(agentloop.Query(ctx, prompt, opts), c, out, stderr)
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
		AutoCompactWindow:      c.autoCompact,
		Effort:                 c.effort,
		IncludePartialMessages: c.partial,
		SessionID:              c.sessionID,
		Settings:               c.settings,
		IncludeHookEvents:      c.hookEvents,
		ForwardSubagentText:    c.sdk.forwardSubagentText,
		Agents:                 c.agents,
		Resume:                 c.resume,
		Continue:               c.cont,
		ForkSession:            c.fork,
		NoSessionPersistence:   c.noPersist,
	}
	o.ExcludeDynamicSystemPrompt = c.excludeDyn
	o.Title = c.name
	if c.noSkills {
		o.Skills = []string{}
	}
	o.Observer = c.observer // telemetry.go
	c.applyMCP(o)
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
	if err := c.applySDKFlags(o); err != nil {
		return nil, err
	}
	return o, nil
}

// openLog opens the diagnostics log the flags ask for: --debug-file
// appends to a file, --debug writes to stderr. It is nil without either.
// The --debug=<filter> applies to either (debugfilter.go), and c.trace
// is set to write a line per model and tool call (debugtrace.go).
func (c *config) openLog(stderr io.Writer) (*slog.Logger, func(), error) {
	w, closeLog := stderr, func() {}
	switch {
	case c.debugFile != "":
		f, err := os.OpenFile(c.debugFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--debug-file: %w", err)
		}
		w, closeLog = f, func() { f.Close() }
	case c.debug:
	default:
		return nil, func() {}, nil
	}
	logger := slog.New(newFilterHandler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}), c.debugFilter))
	c.trace = newDebugTrace(logger)
	return logger, closeLog, nil
}

// printRun consumes the stream and prints it in the chosen format. Lines
// are flushed as they are written.
func printRun(stream agentloop.Stream, c *config, out *bufio.Writer, stderr io.Writer) int {
	var (
		result  *agentloop.ResultMessage
		all     []agentloop.Message
		runErr  error
		started bool // a message arrived: the session started
		lost    lostWrites
	)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for m, err := range stream {
		if err != nil {
			runErr = err
			break
		}
		started = true
		lost.see(m)
		c.trace.see(m) // debugtrace.go
		if r, ok := m.(*agentloop.ResultMessage); ok {
			result = r
		}
		if d, ok := agentloop.DiagnosticOf(m); ok && c.outputFormat != "stream-json" && !c.debug && c.debugFile == "" {
			// Only stream-json carries the message; elsewhere the
			// user would not see it.
			fmt.Fprintf(stderr, "agentloop: warning: %s\n", d.Text)
		}
		if sm, ok := m.(*agentloop.SystemMessage); ok && sm.APIRetry != nil && c.outputFormat != "stream-json" {
			fmt.Fprintln(stderr, retryLine(sm.APIRetry))
		}
		switch {
		case c.outputFormat == "stream-json":
			for _, v := range append([]agentloop.Message{m}, c.afterInit(m)...) {
				if err := enc.Encode(v); err != nil {
					fmt.Fprintf(stderr, "agentloop: writing output: %v\n", err)
					return 1
				}
			}
			out.Flush()
		case c.outputFormat == "json" && c.verbose:
			all = append(all, m)
		}
	}
	if result == nil {
		if !started && runErr != nil {
			return c.startupFailure(runErr, out, stderr)
		}
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
	if lost.report(c.outputFormat, stderr) || result.IsError {
		return 1
	}
	return 0
}
