package conversation_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
)

// projectWithSettings returns a temporary working directory whose
// .claude/settings.json holds body.
func projectWithSettings(t *testing.T, body string) string {
	t.Helper()
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cwd
}

// hookEndpoint is an http hook server that answers every POST with body
// and keeps what it was sent.
type hookEndpoint struct {
	*httptest.Server
	mu      sync.Mutex
	inputs  []map[string]any
	headers []http.Header
}

func newHookEndpoint(t *testing.T, body string) *hookEndpoint {
	e := &hookEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var in map[string]any
		_ = json.Unmarshal(b, &in)
		e.mu.Lock()
		e.inputs = append(e.inputs, in)
		e.headers = append(e.headers, r.Header.Clone())
		e.mu.Unlock()
		io.WriteString(w, body)
	}))
	t.Cleanup(e.Close)
	return e
}

// diagnostics returns the diagnostics of a stream with this tag.
func diagnostics(msgs []agentloop.Message, tag string) []string {
	var out []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == tag {
			out = append(out, d.Text)
		}
	}
	return out
}

func containsAny(list []string, sub string) bool {
	for _, s := range list {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

var projectOnly = []settings.SettingSource{settings.Project}

// An http PreToolUse hook that denies keeps the tool from running; the
// model gets the reason.
func TestHTTPHookBlocksTool(t *testing.T) {
	ep := newHookEndpoint(t, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not on my watch"}}`)
	cwd := projectWithSettings(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"http","url":"`+ep.URL+`/pre"}]}]}}`)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch ran.txt"}),
		agentlooptest.Text("blocked, fine"))
	res, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); !os.IsNotExist(err) {
		t.Errorf("the tool ran: %v", err)
	}
	tr, ok := srv.Requests()[1].ToolResult("toolu_1")
	if !ok || !isTrue(tr.IsError) || !strings.Contains(tr.ResultText(), "not on my watch") {
		t.Errorf("tool result %+v", tr)
	}
	if len(ep.inputs) != 1 || ep.inputs[0]["tool_name"] != "Bash" || ep.inputs[0]["session_id"] != res.SessionID {
		t.Errorf("hook inputs %v", ep.inputs)
	}
}

// An http PostToolUse hook's additionalContext reaches the model; header
// values expand only the environment variables allowedEnvVars lists, and
// the others are warned about.
func TestHTTPHookContextAndHeaders(t *testing.T) {
	ep := newHookEndpoint(t, `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"CTX-42: the style guide applies"}}`)
	cwd := projectWithSettings(t, `{"hooks":{"PostToolUse":[{"hooks":[{"type":"http","url":"`+ep.URL+`",
		"headers":{"X-Token":"tok-${HOOK_TOKEN}","X-Other":"[$HOOK_OTHER]"},"allowedEnvVars":["HOOK_TOKEN"]}]}]}}`)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo hi"}),
		agentlooptest.Text("done"))
	msgs, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}, SettingSources: projectOnly, ConfigDir: t.TempDir(),
		Env: map[string]string{"HOOK_TOKEN": "t1", "HOOK_OTHER": "o1"}}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if body := string(srv.Requests()[1].Body); !strings.Contains(body, "CTX-42: the style guide applies") {
		t.Errorf("the context did not reach the model: %s", body)
	}
	if len(ep.headers) != 1 || ep.headers[0].Get("X-Token") != "tok-t1" || ep.headers[0].Get("X-Other") != "[]" {
		t.Errorf("headers %v", ep.headers)
	}
	if w := diagnostics(msgs, agentloop.DiagHook); !containsAny(w, "names $HOOK_OTHER, which is not in allowedEnvVars") {
		t.Errorf("hook diagnostics %q", w)
	}
}

// An http hook whose server hangs costs its timeout; the run goes on and
// the user is told.
func TestHTTPHookServerHangs(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(release) })
	cwd := projectWithSettings(t, `{"hooks":{"PostToolUse":[{"hooks":[{"type":"http","url":"`+hang.URL+`","timeout":1}]}]}}`)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo hi"}),
		agentlooptest.Text("done"))
	msgs, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage); !ok || deref(r.Result) != "done" {
		t.Errorf("last message %#v", msgs[len(msgs)-1])
	}
	if tr, _ := srv.Requests()[1].ToolResult("toolu_1"); isTrue(tr.IsError) || !strings.Contains(tr.ResultText(), "hi") {
		t.Errorf("tool result %+v", tr)
	}
	if w := diagnostics(msgs, agentloop.DiagHookFailed); !containsAny(w, "PostToolUse:Bash hook error: ["+hang.URL+"]: did not respond within 1s") {
		t.Errorf("hook_failed diagnostics %q", w)
	}
}

// isPromptHook picks out the model calls of prompt hooks.
func isPromptHook(r *agentlooptest.Request) bool {
	return strings.Contains(r.SystemText(), "hook points")
}

// A prompt hook that says no denies a tool call; the model of the hook is
// the default small one, asked with the hook input in place of $ARGUMENTS.
func TestPromptHookBlocksTool(t *testing.T) {
	cwd := projectWithSettings(t, `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"prompt","prompt":"Is this command harmless? $ARGUMENTS"}]}]}}`)
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch ran.txt"}),
		agentlooptest.Text("ok then"))
	srv.Route(isPromptHook, agentlooptest.Text(`{"ok": false, "reason": "no touching files today"}`))
	if _, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{"Bash"}, AllowedTools: []string{"Bash"}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(cwd, "ran.txt")); !os.IsNotExist(err) {
		t.Errorf("the tool ran: %v", err)
	}
	var main, hook []*agentlooptest.Request
	for _, r := range srv.Requests() {
		if isPromptHook(r) {
			hook = append(hook, r)
		} else {
			main = append(main, r)
		}
	}
	if len(hook) != 1 || len(main) != 2 {
		t.Fatalf("%d hook requests, %d main", len(hook), len(main))
	}
	if m := hook[0].Params.Model; m != pricing.Resolve(hooks.DefaultPromptModel) {
		t.Errorf("prompt hook model %q", m)
	}
	if q := hook[0].LastUserText(); !strings.HasPrefix(q, "Is this command harmless? {") || !strings.Contains(q, `"command":"touch ran.txt"`) {
		t.Errorf("prompt hook question %q", q)
	}
	tr, ok := main[1].ToolResult("toolu_1")
	if !ok || !isTrue(tr.IsError) || !strings.Contains(tr.ResultText(), "no touching files today") {
		t.Errorf("tool result %+v", tr)
	}
}

// A Stop prompt hook that says no keeps the agent going with its reason;
// one that says yes lets it stop.
func TestPromptHookStop(t *testing.T) {
	cwd := projectWithSettings(t, `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"Did the agent say please?","model":"sonnet"}]}]}}`)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"), agentlooptest.Text("done, please"))
	srv.Route(isPromptHook, agentlooptest.Text(`{"ok":false,"reason":"say please"}`), agentlooptest.Text(`{"ok":true}`))
	res, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if deref(res.Result) != "done, please" {
		t.Errorf("result %q", deref(res.Result))
	}
	var main []*agentlooptest.Request
	for _, r := range srv.Requests() {
		if isPromptHook(r) {
			if r.Params.Model != pricing.Resolve("sonnet") {
				t.Errorf("prompt hook model %q", r.Params.Model)
			}
		} else {
			main = append(main, r)
		}
	}
	if len(main) != 2 || !strings.Contains(main[1].LastUserText(), "say please") {
		t.Errorf("%d main requests; last user text %q", len(main), main[len(main)-1].LastUserText())
	}
}

// A prompt hook whose model does not answer with a verdict is a hook
// error: reported, and the agent stops as if the hook had said yes.
func TestPromptHookMalformedAnswer(t *testing.T) {
	cwd := projectWithSettings(t, `{"hooks":{"Stop":[{"hooks":[{"type":"prompt","prompt":"Finished?"}]}]}}`)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	srv.Route(isPromptHook, agentlooptest.Text("Looks finished to me!"))
	msgs, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if r, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage); !ok || deref(r.Result) != "done" {
		t.Errorf("last message %#v", msgs[len(msgs)-1])
	}
	if w := diagnostics(msgs, agentloop.DiagHookFailed); !containsAny(w, "the model's answer is not a verdict") {
		t.Errorf("hook_failed diagnostics %q", w)
	}
}

// hookInputs records the inputs of Go callback hooks, by event.
type hookInputs struct {
	mu  sync.Mutex
	got map[hooks.Event][]hooks.Input
}

func (h *hookInputs) options() map[hooks.Event][]hooks.Matcher {
	cb := func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.got == nil {
			h.got = map[hooks.Event][]hooks.Input{}
		}
		h.got[in.EventName()] = append(h.got[in.EventName()], in)
		return hooks.Output{}, nil
	}
	m := map[hooks.Event][]hooks.Matcher{}
	for _, ev := range []hooks.Event{hooks.SessionStart, hooks.SessionEnd, hooks.UserPromptSubmit} {
		m[ev] = []hooks.Matcher{{Hooks: []hooks.Callback{cb}}}
	}
	return m
}

func (h *hookInputs) take() map[hooks.Event][]hooks.Input {
	h.mu.Lock()
	defer h.mu.Unlock()
	got := h.got
	h.got = nil
	return got
}

// Hook inputs carry the transcript's real path (empty without
// persistence); SessionStart's source says whether the session is new,
// resumed or forked; SessionEnd's reason says how it ended.
func TestHookInputsTranscriptSourceReason(t *testing.T) {
	cfg, cwd := t.TempDir(), t.TempDir()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"),
		agentlooptest.Text("four"), agentlooptest.Text("five"), agentlooptest.Text("six"))
	rec := &hookInputs{}
	opts := func() *agentloop.Options {
		return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{},
			SettingSources: []settings.SettingSource{}, Hooks: rec.options()}
	}
	type seen struct{ source, reason, transcript string }
	check := func(name string, want seen, wantFile bool) {
		t.Helper()
		got := rec.take()
		if len(got[hooks.SessionStart]) != 1 || len(got[hooks.SessionEnd]) != 1 || len(got[hooks.UserPromptSubmit]) != 1 {
			t.Fatalf("%s: hook inputs %v", name, got)
		}
		start := got[hooks.SessionStart][0].(hooks.SessionStartInput)
		end := got[hooks.SessionEnd][0].(hooks.SessionEndInput)
		prompt := got[hooks.UserPromptSubmit][0].(hooks.UserPromptSubmitInput)
		if start.Source != want.source || end.Reason != want.reason {
			t.Errorf("%s: source %q reason %q, want %q %q", name, start.Source, end.Reason, want.source, want.reason)
		}
		for _, p := range []string{start.TranscriptPath, end.TranscriptPath, prompt.TranscriptPath} {
			if p != want.transcript {
				t.Errorf("%s: transcript_path %q, want %q", name, p, want.transcript)
			}
		}
		if wantFile {
			if _, err := os.Stat(want.transcript); err != nil {
				t.Errorf("%s: transcript: %v", name, err)
			}
		}
	}
	transcriptOf := func(id string) string {
		matches, _ := filepath.Glob(filepath.Join(cfg, "projects", "*", id+".jsonl"))
		if len(matches) != 1 {
			t.Fatalf("transcript files of %s: %q", id, matches)
		}
		return matches[0]
	}

	first, err := agentloop.Query(context.Background(), "hello", opts()).Result()
	if err != nil {
		t.Fatal(err)
	}
	check("new", seen{"startup", "other", transcriptOf(first.SessionID)}, true)

	o := opts()
	o.Resume = first.SessionID
	if _, err := agentloop.Query(context.Background(), "again", o).Result(); err != nil {
		t.Fatal(err)
	}
	check("resume", seen{"resume", "other", transcriptOf(first.SessionID)}, true)

	o = opts()
	o.Continue = true
	if _, err := agentloop.Query(context.Background(), "and again", o).Result(); err != nil {
		t.Fatal(err)
	}
	check("continue", seen{"resume", "other", transcriptOf(first.SessionID)}, true)

	o = opts()
	o.Resume, o.ForkSession = first.SessionID, true
	forked, err := agentloop.Query(context.Background(), "fork", o).Result()
	if err != nil {
		t.Fatal(err)
	}
	check("fork", seen{"fork", "other", transcriptOf(forked.SessionID)}, true)

	c, err := agentloop.NewClient(opts())
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.Query(context.Background(), "client").Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	check("client closed", seen{"startup", "prompt_input_exit", transcriptOf(r.SessionID)}, true)

	o = opts()
	o.NoSessionPersistence = true
	if _, err := agentloop.Query(context.Background(), "ephemeral", o).Result(); err != nil {
		t.Fatal(err)
	}
	check("no persistence", seen{"startup", "other", ""}, false)
}

// Settings hook entries that cannot run as written are reported as
// diagnostics the user sees.
func TestUnsupportedHookEntriesReported(t *testing.T) {
	cwd := projectWithSettings(t, `{"hooks":{"PreToolUse":[{"hooks":[
		{"type":"agent","prompt":"verify"},
		{"type":"command","command":"true","args":["-x"]},
		{"type":"command","command":"true","retries":3}]}]}}`)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("hi"))
	msgs, err := agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd,
		Tools: []string{}, SettingSources: projectOnly, ConfigDir: t.TempDir()}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	w := diagnostics(msgs, agentloop.DiagHook)
	for _, want := range []string{"agent hooks are not supported; skipped", `field "args" is not supported; the hook is skipped`,
		`field "retries" is not known for command hooks; ignored`} {
		if !containsAny(w, want) {
			t.Errorf("no diagnostic %q in %q", want, w)
		}
	}
}

func isTrue(b *bool) bool { return b != nil && *b }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
