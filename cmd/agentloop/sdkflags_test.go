package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/google/go-cmp/cmp"
)

// optionsView is the part of agentloop.Options the SDK flags set.
type optionsView struct {
	Mode              string
	Append            string
	Thinking          *agentloop.ThinkingConfig
	MaxThinkingTokens int
	Resume            string
	Continue          bool
	Fork              bool
	SessionID         string
	StrictMCP         bool
	MCPServers        []string
	AutoCompact       int64
	ExcludeDynamic    bool
	HookEvents        bool
	Agents            []string
	Tools             []string
	Allowed           []string
	Disallowed        []string
	Sources           int // -1: not set
	Schema            bool
	Model             string
	Fallback          []string
	MaxTurns          int
	Budget            float64
	Effort            string
	AddDirs           []string
	NoPersist         bool
	Partial           bool
	Plugins           []agentloop.PluginConfig
}

func viewOf(o *agentloop.Options) optionsView {
	v := optionsView{
		Mode: string(o.PermissionMode), Append: o.AppendSystemPrompt, Thinking: o.Thinking, MaxThinkingTokens: o.MaxThinkingTokens,
		Resume: o.Resume, Continue: o.Continue, Fork: o.ForkSession, SessionID: o.SessionID, StrictMCP: o.StrictMCPConfig,
		AutoCompact: o.AutoCompactWindow, ExcludeDynamic: o.ExcludeDynamicSystemPrompt, HookEvents: o.IncludeHookEvents,
		Tools: o.Tools, Allowed: o.AllowedTools, Disallowed: o.DisallowedTools, Sources: -1, Schema: o.OutputFormat != nil,
		Model: o.Model, Fallback: o.FallbackModels, MaxTurns: o.MaxTurns, Budget: o.MaxBudgetUSD, Effort: o.Effort,
		AddDirs: o.AdditionalDirectories, NoPersist: o.NoSessionPersistence, Partial: o.IncludePartialMessages,
		Plugins: o.Plugins,
	}
	for name := range o.MCPServers {
		v.MCPServers = append(v.MCPServers, name)
	}
	for name := range o.Agents {
		v.Agents = append(v.Agents, name)
	}
	if o.SettingSources != nil {
		v.Sources = len(o.SettingSources)
	}
	return v
}

// TestSDKFlagsMapped: the flags the SDKs pass that agentloop honours set
// their options, in both the --flag=value form the TypeScript SDK uses and
// the --flag value form.
func TestSDKFlagsMapped(t *testing.T) {
	dir := t.TempDir()
	appendFile := filepath.Join(dir, "append.txt")
	agentsFile := filepath.Join(dir, "agents.json")
	for p, body := range map[string]string{
		appendFile: "APPENDED FROM FILE",
		agentsFile: `{"reviewer":{"description":"Reviews code","prompt":"You review code."}}`,
	} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const id = "11111111-1111-4111-8111-111111111111"
	cases := []struct {
		name string
		args []string
		want func(*optionsView)
	}{
		{"skip permissions", []string{"--dangerously-skip-permissions"}, func(v *optionsView) { v.Mode = "bypassPermissions" }},
		{"skip permissions and bypass mode", []string{"--dangerously-skip-permissions", "--permission-mode=bypassPermissions"}, func(v *optionsView) { v.Mode = "bypassPermissions" }},
		{"allow skip permissions", []string{"--allow-dangerously-skip-permissions"}, func(*optionsView) {}},
		{"manual mode", []string{"--permission-mode=manual"}, func(v *optionsView) { v.Mode = "default" }},
		{"append file =", []string{"--append-system-prompt-file=" + appendFile}, func(v *optionsView) { v.Append = "APPENDED FROM FILE" }},
		{"append file", []string{"--append-system-prompt-file", appendFile}, func(v *optionsView) { v.Append = "APPENDED FROM FILE" }},
		{"adaptive display", []string{"--thinking=adaptive", "--thinking-display=omitted"}, func(v *optionsView) {
			v.Thinking = &agentloop.ThinkingConfig{Type: "adaptive", Display: "omitted"}
		}},
		{"budget display", []string{"--max-thinking-tokens=2048", "--thinking-display", "summarized"}, func(v *optionsView) {
			v.Thinking = &agentloop.ThinkingConfig{Type: "enabled", BudgetTokens: 2048, Display: "summarized"}
		}},
		{"budget alone", []string{"--max-thinking-tokens=2048"}, func(v *optionsView) { v.MaxThinkingTokens = 2048 }},
		{"-r alone", []string{"-r"}, func(v *optionsView) { v.Continue = true }},
		{"-r before a flag", []string{"-r", "--fork-session"}, func(v *optionsView) { v.Continue, v.Fork = true, true }},
		{"-r id", []string{"-r", id}, func(v *optionsView) { v.Resume = id }},
		{"--resume=id", []string{"--resume=" + id, "--fork-session"}, func(v *optionsView) { v.Resume, v.Fork = id, true }},
		{"continue", []string{"--continue"}, func(v *optionsView) { v.Continue = true }},
		{"input format text =", []string{"--input-format=text"}, func(*optionsView) {}},
		{"input format text", []string{"--input-format", "text"}, func(*optionsView) {}},
		{"permission prompts none", []string{"--permission-prompts=none"}, func(*optionsView) {}},
		{"session id", []string{"--session-id=" + id}, func(v *optionsView) { v.SessionID = id }},
		{"mcp config", []string{"--mcp-config", `{"mcpServers":{"echo":{"command":"echo"}}}`, "--strict-mcp-config"}, func(v *optionsView) {
			v.MCPServers, v.StrictMCP = []string{"echo"}, true
		}},
		{"autocompact", []string{"--autocompact=50000"}, func(v *optionsView) { v.AutoCompact = 50000 }},
		{"plugin dirs", []string{"--plugin-dir=/a", "--plugin-dir", "b", "--plugin-dir-no-mcp=/c", "--plugin-dir-no-mcp", "d"}, func(v *optionsView) {
			v.Plugins = []agentloop.PluginConfig{{Path: "/a"}, {Path: "b"}, {Path: "/c", SkipMCP: true}, {Path: "d", SkipMCP: true}}
		}},
		{"exclude dynamic", []string{"--exclude-dynamic-system-prompt-sections"}, func(v *optionsView) { v.ExcludeDynamic = true }},
		{"hook events", []string{"--include-hook-events"}, func(v *optionsView) { v.HookEvents = true }},
		{"agents file =", []string{"--agents=" + agentsFile}, func(v *optionsView) { v.Agents = []string{"reviewer"} }},
		{"empty tools", []string{"--tools="}, func(v *optionsView) { v.Tools = []string{} }},
		{"camelCase tool lists", []string{"--allowedTools=Read,Bash(echo:*)", "--disallowedTools=WebFetch,WebSearch"}, func(v *optionsView) {
			v.Allowed, v.Disallowed = []string{"Read", "Bash(echo:*)"}, []string{"WebFetch", "WebSearch"}
		}},
		{"no setting sources", []string{"--setting-sources="}, func(v *optionsView) { v.Sources = 0 }},
		{"json schema =", []string{`--json-schema={"type":"object"}`}, func(v *optionsView) { v.Schema = true }},
		{"the rest in = form", []string{"--model=claude-sonnet-4-5", "--fallback-model=claude-haiku-4-5", "--max-turns=3", "--max-budget-usd=1.5",
			"--effort=high", "--add-dir=/x", "--no-session-persistence", "--output-format=stream-json", "--verbose", "--include-partial-messages"},
			func(v *optionsView) {
				v.Model, v.Fallback, v.MaxTurns, v.Budget, v.Effort = "claude-sonnet-4-5", []string{"claude-haiku-4-5"}, 3, 1.5, "high"
				v.AddDirs, v.NoPersist, v.Partial = []string{"/x"}, true, true
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseArgs(append([]string{"-p", "hi"}, tc.args...))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.warnings) != 0 {
				t.Errorf("warnings %q", c.warnings)
			}
			o, err := c.options()
			if err != nil {
				t.Fatal(err)
			}
			want := viewOf(&agentloop.Options{})
			tc.want(&want)
			if diff := cmp.Diff(want, viewOf(o)); diff != "" {
				t.Errorf("options (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSDKFlagsRefused: a flag whose feature is missing, and whose absence
// would change the run, stops the command with exit 1 and one line on
// stderr naming it, before any request.
func TestSDKFlagsRefused(t *testing.T) {
	cases := [][]string{
		{"--session-mirror"},
		{"--project-config-root=/r"},
		{"--managed-settings", `{"permissions":{}}`},
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			srv := agentlooptest.NewTB(t)
			code, out, errOut := runCLI(t, srv, "", append([]string{"-p", "hi"}, args...)...)
			name, _, _ := strings.Cut(args[0], "=")
			if code != 1 || !strings.HasPrefix(errOut, "agentloop: "+name) || !strings.Contains(errOut, "not supported yet") ||
				strings.Count(errOut, "\n") != 1 {
				t.Errorf("exit %d, stderr %q; want 1 and one line naming %s as not supported yet", code, errOut, name)
			}
			if out != "" || srv.Len() != 0 {
				t.Errorf("stdout %q, %d requests", out, srv.Len())
			}
		})
	}
	_, err := parseArgs([]string{"-p", "hi", "--session-mirror"})
	if !errors.Is(err, errUnsupported) {
		t.Errorf("--session-mirror: error %v does not match errUnsupported", err)
	}
}

// TestSDKFlagsWarned: a flag accepted without its feature, where running
// without it loses nothing the caller relies on, runs with one warning on
// stderr, however often it is given.
func TestSDKFlagsWarned(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--await-initialize"}, "--await-initialize is ignored"},
		{[]string{"--initialize-fields=settings,disallowedTools"}, "--initialize-fields is ignored"},
		{[]string{"--managed-settings-in-initialize"}, "--managed-settings-in-initialize is ignored"},
		{[]string{"--replay-user-messages"}, "--replay-user-messages is ignored"},
		{[]string{"--prompt-suggestions"}, "--prompt-suggestions is ignored"},
		{[]string{"--channels=x", "--channels", "y"}, "--channels is ignored"},
		{[]string{"--thinking-display=summarized"}, "--thinking-display is ignored"},
		{[]string{"--thinking=disabled", "--thinking-display=summarized"}, "--thinking-display is ignored"},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
			code, out, errOut := runCLI(t, srv, "", append([]string{"-p", "hi"}, tc.args...)...)
			if code != 0 || out != "ok\n" {
				t.Fatalf("exit %d stdout %q stderr %q", code, out, errOut)
			}
			if !strings.HasPrefix(errOut, "agentloop: warning: "+tc.want+": ") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr %q, want one warning starting %q", errOut, tc.want)
			}
		})
	}
}

// TestFileCheckpointingEnv: the variable the TypeScript SDK sets for
// enableFileCheckpointing turns file checkpointing on, without a warning.
func TestFileCheckpointingEnv(t *testing.T) {
	t.Setenv("CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING", "true")
	c, err := parseArgs([]string{"-p", "hi"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.warnings) != 0 {
		t.Errorf("warnings %q, want none", c.warnings)
	}
	o, err := c.options()
	if err != nil {
		t.Fatal(err)
	}
	if !o.EnableFileCheckpointing {
		t.Error("EnableFileCheckpointing is off")
	}
}

// TestSDKFlagsContradict: --dangerously-skip-permissions with another
// mode, and both forms of the appended system prompt, are errors.
func TestSDKFlagsContradict(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--dangerously-skip-permissions", "--permission-mode", "plan"}, "contradict"},
		{[]string{"--append-system-prompt", "a", "--append-system-prompt-file", "f"}, "not both"},
		{[]string{"--input-format", "xml"}, `--input-format "xml": want text or stream-json`},
		{[]string{"--permission-prompts", "maybe"}, `--permission-prompts "maybe": want host or none`},
		{[]string{"--thinking-display", "loud"}, `--thinking-display: unknown thinking display "loud"`},
	} {
		if _, err := parseArgs(append([]string{"-p", "hi"}, tc.args...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
	c, err := parseArgs([]string{"-p", "hi", "--append-system-prompt-file", filepath.Join(t.TempDir(), "missing")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.options(); err == nil || !strings.Contains(err.Error(), "--append-system-prompt-file") {
		t.Errorf("missing file: error %v", err)
	}
}

// TestTSSDKSpawnLine: the command line the TypeScript SDK spawns (its
// fixed prefix) parses, and so does an SDK command line with nearly every
// flag, without a warning.
func TestTSSDKSpawnLine(t *testing.T) {
	prefix := []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	if _, err := parseArgs(prefix); err != nil {
		t.Errorf("SDK prefix: error %v", err)
	}
	soup := []string{"--output-format", "stream-json", "--verbose", "--thinking=adaptive", "--thinking-display=summarized",
		"--effort=high", "--max-turns=3", "--max-budget-usd=1.5", "--model=claude-sonnet-4-5", "--betas=a,b",
		`--json-schema={"type":"object"}`, "--debug", "--permission-prompts=none", "--allowedTools=Read,Bash(echo:*)",
		"--disallowedTools=WebFetch", "--tools=Read,Write", "--mcp-config", `{"mcpServers":{}}`, "--setting-sources=project",
		"--strict-mcp-config", "--permission-mode=acceptEdits", "--allow-dangerously-skip-permissions",
		"--fallback-model=claude-haiku-4-5", "--include-hook-events", "--include-partial-messages", "--add-dir=/a",
		"--fork-session", "--continue", "--session-id=11111111-1111-4111-8111-111111111111", "--no-session-persistence",
		"--settings", `{"env":{}}`, "say hi"}
	c, err := parseArgs(soup)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.options(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), c.warnings); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestUnknownFlagProcess: the command as a process exits 1 on an unknown
// option, with the message on stderr, as the reference does (the SDK
// shows that text to its caller).
func TestUnknownFlagProcess(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--output-format", "stream-json", "--verbose", "--some-unknown-flag")
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), runMainEnv+"=1")
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("run: %v, want exit status 1", err)
	}
	if got := errOut.String(); got != "agentloop: unknown option --some-unknown-flag (see --help)\n" || out.Len() != 0 {
		t.Errorf("stdout %q stderr %q", out.String(), got)
	}
}

// TestSDKRunOptionFlags: the SDKs' run options that map to library
// options (--agent, --task-budget, --resume-session-at,
// --resume-drops-turn, --betas, --system-prompt "") set them, and bad
// values are errors naming the flag.
func TestSDKRunOptionFlags(t *testing.T) {
	id := "11111111-1111-4111-8111-111111111111"
	c, err := parseArgs([]string{"-p", "hi", "--agent=reviewer", "--task-budget", "50000", "--resume", id,
		"--resume-session-at=" + id, "--resume-drops-turn", id, "--betas=a,b", "--betas", "c", "--system-prompt", "", "--forward-subagent-text"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.warnings) != 0 {
		t.Errorf("warnings %q", c.warnings)
	}
	o, err := c.options()
	if err != nil {
		t.Fatal(err)
	}
	type view struct {
		Agent, At, Drops string
		Budget           int
		Betas            []string
		Empty, Forward   bool
	}
	got := view{Agent: o.Agent, At: o.ResumeSessionAt, Drops: o.ResumeDropsTurn, Betas: o.Betas, Empty: o.EmptySystemPrompt,
		Forward: o.ForwardSubagentText}
	if o.TaskBudget != nil {
		got.Budget = o.TaskBudget.Total
	}
	want := view{Agent: "reviewer", At: id, Drops: id, Budget: 50000, Betas: []string{"a", "b", "c"}, Empty: true, Forward: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("options (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--task-budget=0"}, "--task-budget"},
		{[]string{"--task-budget=lots"}, "--task-budget"},
		{[]string{"--agent="}, "--agent"},
		{[]string{"--resume-drops-turn", id}, "--resume-drops-turn needs --resume-session-at"},
	} {
		if _, err := parseArgs(append([]string{"-p", "hi"}, tc.args...)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one containing %q", tc.args, err, tc.want)
		}
	}
}
