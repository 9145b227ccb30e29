package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/sandbox"
	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model/anthropic"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// The diagnostics catalogue: one case per kind of thing agentloop notices
// but does not fail on. Each case sets the condition up for real (a file,
// a server, a failing disk or store), runs a Query against the scripted
// API, and pins both what a user sees in the stream and what the
// diagnostics log (Options.Logger) receives.

var (
	uuidPattern    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	entriesPattern = regexp.MustCompile(`\b\d+ entries`)
)

// seen is one user-visible system message: a diagnostic
// (system/informational), a sandbox notification, a lost transcript
// write or a store copy that failed.
type seen struct {
	Subtype string
	Level   string // informational: level; notification: priority
	Tag     string // informational: tag; notification: key; others: error_code
	Text    string // informational: content; notification: text; others: error
}

// logged is one record of the diagnostics log.
type logged struct {
	Level slog.Level
	Msg   string
	Tag   string
}

// recordingHandler is a slog.Handler that keeps what it receives.
type recordingHandler struct {
	mu   *sync.Mutex
	recs *[]logged
}

func newRecordingHandler() recordingHandler {
	return recordingHandler{mu: new(sync.Mutex), recs: new([]logged)}
}

func (h recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h recordingHandler) Handle(_ context.Context, r slog.Record) error {
	l := logged{Level: r.Level, Msg: r.Message}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "tag" {
			l.Tag = a.Value.String()
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.recs = append(*h.recs, l)
	return nil
}

func (h recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordingHandler) WithGroup(string) slog.Handler      { return h }

func (h recordingHandler) records() []logged {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logged(nil), *h.recs...)
}

// seenOf returns the user-visible form of m, if it is one of the messages
// the catalogue watches.
func seenOf(m Message) (seen, bool) {
	s, ok := m.(*message.System)
	if !ok {
		return seen{}, false
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(s.Data[k], &v)
		return v
	}
	switch s.Subtype {
	case "informational":
		return seen{s.Subtype, str("level"), str("tag"), str("content")}, true
	case "notification":
		return seen{s.Subtype, str("priority"), str("key"), str("text")}, true
	case "session_writes_lost", "mirror_error":
		return seen{s.Subtype, "", str("error_code"), str("error")}, true
	}
	return seen{}, false
}

// failingStore is a session store whose transcript appends always fail;
// its lease works.
type failingStore struct{ *sessions.MemoryStore }

func (s failingStore) Append(ctx context.Context, k sessions.Key, es []sessions.Entry) error {
	if k.Subpath == sessions.LeaseSubpath {
		return s.MemoryStore.Append(ctx, k, es)
	}
	return errors.New("store offline")
}

// catalogCase is one kind of diagnostic.
type catalogCase struct {
	name string
	// setup prepares cwd and the options (Provider, Cwd, Logger are set)
	// and returns the scripted replies; nil replies means a single
	// "done".
	setup func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply
	// stream is what the user sees; log what the diagnostics log gets.
	// In both, "<cwd>" stands for the working directory.
	stream []seen
	log    []logged
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// warn is the stream form of a diagnostic.
func warn(tag, text string) seen { return seen{"informational", "warning", tag, text} }

// logWarn is the log form of a diagnostic.
func logWarn(tag, text string) logged { return logged{slog.LevelWarn, text, tag} }

// both is a diagnostic as the stream and the log show it.
func both(tag, text string) ([]seen, []logged) {
	return []seen{warn(tag, text)}, []logged{logWarn(tag, text)}
}

func catalogCases() []catalogCase {
	var cases []catalogCase
	add := func(name string, setup func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply, stream []seen, log []logged) {
		cases = append(cases, catalogCase{name, setup, stream, log})
	}
	addBoth := func(name, tag, text string, setup func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply) {
		s, l := both(tag, text)
		add(name, setup, s, l)
	}

	addBoth("settings value invalid", DiagSettings,
		`<config>/settings.json: model: want a string, got number (the user settings file is ignored until it is fixed)`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(os.Getenv("CLAUDE_CONFIG_DIR"), "settings.json"), `{"model": 5}`)
			return nil
		})
	addBoth("settings keys not honoured", DiagSettings,
		`settings keys "spinnerTipsEnabled", "statusLine" are not honoured by agentloop; ignored`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(cwd, ".claude", "settings.json"),
				`{"$schema": "https://json.schemastore.org/claude-code-settings.json", "statusLine": {"type": "command", "command": "true"},
				  "spinnerTipsEnabled": false, "claudeMdExcludes": []}`)
			return nil
		})
	// The settings loader and the hook dispatcher both report an event
	// nobody knows.
	add("settings key of a hook event nobody knows", func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
		writeFile(t, filepath.Join(cwd, ".claude", "settings.json"),
			`{"hooks": {"NoSuchEvent": [{"hooks": [{"type": "command", "command": "true"}]}]}}`)
		return nil
	},
		[]seen{warn(DiagSettings, ".claude/settings.json: hooks.NoSuchEvent: unknown hook event, its hooks never run")},
		[]logged{logWarn(DiagSettings, ".claude/settings.json: hooks.NoSuchEvent: unknown hook event, its hooks never run")})
	addBoth("hook kind not supported", DiagHook,
		`<cwd>/.claude/settings.json: hooks.PreToolUse: agent hooks are not supported; skipped`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(cwd, ".claude", "settings.json"),
				`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "agent", "prompt": "check it"}]}]}}`)
			return nil
		})
	addBoth("rule that can never match", DiagRule,
		`rule TodoWrite(file_path:x) is ignored: parameter rules cannot name the field file_path`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(cwd, ".claude", "settings.json"), `{"permissions": {"deny": ["TodoWrite(file_path:x)"]}}`)
			return nil
		})
	addBoth("CLAUDE.md import missing", DiagMemory,
		`import @notes/missing.md in <cwd>/CLAUDE.md is left out: <cwd>/notes/missing.md: no such file`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(cwd, "CLAUDE.md"), "Project rules.\n\nSee @notes/missing.md for more.\n")
			return nil
		})
	addBoth("MCP server failed to start", DiagMCP,
		`MCP server "broken" failed to start: fork/exec <cwd>/no-such-mcp-server: no such file or directory`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			o.MCPConnector = mcp.Connector{}
			o.MCPServers = map[string]MCPServerConfig{"broken": {Command: filepath.Join(cwd, "no-such-mcp-server")}}
			return nil
		})
	add("transcript writes lost mid-run", func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
		var broken atomic.Bool
		t.Cleanup(rec.SetWriteFaultForTest(func() error {
			if broken.Load() {
				return fmt.Errorf("write: %w", syscall.ENOSPC)
			}
			return nil
		}))
		o.CustomTools = []Tool{tool.New("fill", "Fills the disk.", func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
			broken.Store(true)
			return tool.Text("filled"), nil
		}, nil)}
		o.PermissionMode = PermissionBypass
		return []agentlooptest.Reply{agentlooptest.ToolUse("toolu_1", "fill", map[string]any{}), agentlooptest.Text("done")}
	},
		[]seen{{"session_writes_lost", "", "ENOSPC", "session: <config>/projects/<project>/<session>.jsonl: write: no space left on device"}},
		[]logged{logWarn(DiagWritesLost, "session writes lost (ENOSPC): the transcript was not fully written, so a resume would get a truncated session: session: <config>/projects/<project>/<session>.jsonl: write: no space left on device")})
	add("sandbox unavailable", func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
		old := sandboxAvailable
		sandboxAvailable = func() (int, error) { return 0, fmt.Errorf("%w: no Landlock in this kernel", sandbox.ErrUnavailable) }
		t.Cleanup(func() { sandboxAvailable = old })
		no := false
		o.Sandbox = &SandboxSettings{Enabled: true, FailIfUnavailable: &no}
		return nil
	},
		[]seen{{"notification", "high", "sandbox", "The sandbox is enabled but cannot run here (sandbox unavailable: no Landlock in this kernel): Bash commands run unsandboxed."}},
		[]logged{logWarn(DiagSandbox, "The sandbox is enabled but cannot run here (sandbox unavailable: no Landlock in this kernel): Bash commands run unsandboxed.")})
	addBoth("plugin component not honoured", DiagPlugin,
		`plugin tidy: manifest fields lspServers, outputStyles are not honoured`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			root := filepath.Join(cwd, "plugins", "tidy")
			writeFile(t, filepath.Join(root, ".claude-plugin", "plugin.json"),
				`{"name": "tidy", "version": "1.0.0", "outputStyles": "./styles", "lspServers": {}}`)
			o.Plugins = []PluginConfig{{Path: root}}
			return nil
		})
	addBoth("agent field not honoured", DiagAgent,
		`agent reviewer: not honoured: memory (agent memory directories are not supported)`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			o.Agents = map[string]AgentDefinition{"reviewer": {Description: "Reviews diffs.", Prompt: "Review.", Memory: "project"}}
			return nil
		})
	addBoth("project file left out", DiagProjectFile,
		`agent file <cwd>/.claude/agents/helper.md is ignored: its frontmatter has no description (the model needs one to know when to use it)`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(cwd, ".claude", "agents", "helper.md"), "---\nname: helper\n---\nHelp.\n")
			return nil
		})
	addBoth("hook failed", DiagHookFailed,
		`UserPromptSubmit hook error: [echo checker crashed >&2; exit 3]: exit status 3: checker crashed`,
		func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
			writeFile(t, filepath.Join(cwd, ".claude", "settings.json"),
				`{"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "echo checker crashed >&2; exit 3"}]}]}}`)
			return nil
		})
	add("session store copy failed", func(t *testing.T, cwd string, o *Config) []agentlooptest.Reply {
		o.SessionStore = failingStore{sessions.NewMemoryStore()}
		return nil
	},
		[]seen{{"mirror_error", "", "", "session: mirror <project>/<session>: <n> entries not stored after 3 attempts: store offline"}},
		[]logged{{slog.LevelWarn, "session store copy failed", "mirror_error"}})
	return cases
}

// TestDiagnosticsCatalog: each kind of diagnostic reaches the user, in
// the stream, and the diagnostics log, with the text pinned.
func TestDiagnosticsCatalog(t *testing.T) {
	for _, tc := range catalogCases() {
		t.Run(tc.name, func(t *testing.T) {
			gotStream, gotLog, cwd := runCatalogCase(t, tc)
			if diff := cmp.Diff(tc.stream, gotStream); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.log, gotLog); diff != "" {
				t.Errorf("diagnostics log (-want +got):\n%s", diff)
			}
			_ = cwd
		})
	}
}

// runCatalogCase runs tc's query and returns what the stream and the log
// showed, with the case's directories written as placeholders.
func runCatalogCase(t *testing.T, tc catalogCase) ([]seen, []logged, string) {
	t.Helper()
	home, config := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", config)
	cwd := t.TempDir()
	h := newRecordingHandler()
	o := &Config{Cwd: cwd, ConfigDir: config, Tools: []string{}, Logger: slog.New(h)}
	replies := tc.setup(t, cwd, o)
	if replies == nil {
		replies = []agentlooptest.Reply{agentlooptest.Text("done")}
	}
	srv := agentlooptest.NewTB(t, replies...)
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	o.Provider = p
	var got []seen
	lostAt, lastReplyAt := -1, -1
	i := 0
	for m, err := range Query(context.Background(), "go", o) {
		if err != nil {
			t.Fatalf("run: %v", err)
		}
		if s, ok := seenOf(m); ok {
			got = append(got, s)
			if s.Subtype == "session_writes_lost" {
				lostAt = i
			}
		}
		if _, ok := m.(*message.Assistant); ok {
			lastReplyAt = i
		}
		i++
	}
	if lostAt > lastReplyAt {
		t.Errorf("session_writes_lost came after the last reply (message %d, the reply %d): not reported mid-run", lostAt, lastReplyAt)
	}
	norm := func(s string) string {
		s = strings.NewReplacer(cwd, "<cwd>", config, "<config>", sessions.ProjectKey(cwd), "<project>").Replace(s)
		s = uuidPattern.ReplaceAllString(s, "<session>")
		return entriesPattern.ReplaceAllString(s, "<n> entries")
	}
	for i := range got {
		got[i].Text = norm(got[i].Text)
	}
	logs := h.records()
	for i := range logs {
		logs[i].Msg = norm(logs[i].Msg)
	}
	// Every store copy that failed in the stream is in the log too,
	// whether it came through the recorder's notice or was held back for
	// the result; one that failed after the run is only in the log.
	count := func(n int, ok bool) int {
		if ok {
			return n + 1
		}
		return n
	}
	var inStream, inLog int
	for _, g := range got {
		inStream = count(inStream, g.Subtype == "mirror_error")
	}
	for _, l := range logs {
		inLog = count(inLog, l.Tag == "mirror_error")
	}
	if inLog < inStream {
		t.Errorf("%d store copy failures in the stream, %d in the log", inStream, inLog)
	}
	// Store copies fail per batch, and batching depends on timing: equal
	// neighbours count once.
	got = slices.Compact(got)
	sort.SliceStable(logs, func(i, j int) bool { return logs[i].Tag < logs[j].Tag })
	return got, slices.Compact(logs), cwd
}

// TestSettingsKeysReadListed: every top-level settings key the package
// reads from Settings.Extra is in settingsKeysRead, so that it is not
// reported as not honoured.
func TestSettingsKeysReadListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	read := regexp.MustCompile(`(?:Extra\[|settingString\(\w+, |readExtra\(\w+, \w+, )"([^"]+)"`)
	found := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range read.FindAllStringSubmatch(string(b), -1) {
			found++
			if !slices.Contains(settingsKeysRead, m[1]) {
				t.Errorf("%s reads the settings key %q, which settingsKeysRead (diagnostics.go) does not list", f, m[1])
			}
		}
	}
	if found < 5 {
		t.Errorf("found %d reads of settings keys; the pattern no longer matches the code", found)
	}
}
