package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// hasFields checks that the JSON object body has these fields (and maybe
// others).
func hasFields(t *testing.T, body []byte, want map[string]any) {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	for k, v := range want {
		if !cmp.Equal(got[k], v) {
			t.Errorf("%s = %v, want %v (in %s)", k, got[k], v, body)
		}
	}
}

// settingsHooks registers one settings hook entry for ev.
func settingsHooks(ev Event, hs ...settings.Hook) map[string][]settings.HookMatcher {
	return map[string][]settings.HookMatcher{string(ev): {{Hooks: hs, File: "test.json"}}}
}

// hookServer answers every POST with status and body, and records the
// requests' bodies and headers.
type hookServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	heads  []http.Header
}

func newHookServer(t *testing.T, status int, body string) *hookServer {
	s := &hookServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, r.Method+" "+r.Header.Get("Content-Type")+" "+string(b))
		s.heads = append(s.heads, r.Header.Clone())
		s.mu.Unlock()
		if status == http.StatusFound {
			http.Redirect(w, r, "/elsewhere", status)
			return
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(s.Close)
	return s
}

func TestHTTPHookOutcomes(t *testing.T) {
	cases := []struct {
		name     string
		status   int
		body     string
		block    bool // onFailure "block"
		decision Decision
		message  string
		context  []string
		errText  string
	}{
		{name: "deny", status: 200,
			body:     `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not today"}}`,
			decision: Deny, message: "PreToolUse:Bash hook error: not today"},
		{name: "decision block", status: 200, body: `{"decision":"block","reason":"policy"}`,
			decision: Deny, message: "PreToolUse:Bash hook error: policy"},
		{name: "context", status: 201,
			body:    `{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"remember the style guide"}}`,
			context: []string{"remember the style guide"}},
		{name: "empty 204", status: 204},
		{name: "server error", status: 500, body: "boom", errText: "HTTP status 500 Internal Server Error: boom"},
		{name: "server error blocks", status: 503, block: true, decision: Deny,
			errText: "HTTP status 503 Service Unavailable: empty body"},
		{name: "redirect not followed", status: 302, errText: "HTTP status 302 Found"},
		{name: "invalid JSON", status: 200, body: `{"decision":`, errText: "hook output is not valid JSON"},
		{name: "invalid output", status: 200, body: `{"decision":"maybe"}`, errText: `invalid output: decision "maybe"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newHookServer(t, tc.status, tc.body)
			cfg := testConfig(t.TempDir())
			h := settings.Hook{Type: "http", URL: srv.URL + "/hook"}
			if tc.block {
				h.OnFailure = "block"
			}
			cfg.Commands = settingsHooks(PreToolUse, h)
			var reported []string
			cfg.Report = func(s string) { reported = append(reported, s) }
			res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
			if res.Decision != tc.decision {
				t.Errorf("decision %q, want %q (errors %q)", res.Decision, tc.decision, res.Errors)
			}
			if tc.message != "" && res.Message != tc.message {
				t.Errorf("message %q, want %q", res.Message, tc.message)
			}
			if diff := cmp.Diff(tc.context, res.AdditionalContext); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
			if tc.errText == "" && len(res.Errors) > 0 {
				t.Errorf("errors %q", res.Errors)
			}
			if tc.errText != "" && (len(res.Errors) != 1 || !strings.Contains(res.Errors[0], tc.errText)) {
				t.Errorf("errors %q, want one containing %q", res.Errors, tc.errText)
			}
			if diff := cmp.Diff(res.Errors, reported); diff != "" {
				t.Errorf("reported (-errors +reported):\n%s", diff)
			}
			if len(srv.bodies) != 1 {
				t.Fatalf("%d requests", len(srv.bodies))
			}
			method, rest, _ := strings.Cut(srv.bodies[0], " ")
			ctype, body, _ := strings.Cut(rest, " ")
			if method != "POST" || ctype != "application/json" {
				t.Errorf("request %s with %q", method, ctype)
			}
			hasFields(t, []byte(body), map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash",
				"transcript_path": "/tmp/sess-1.jsonl", "session_id": "sess-1", "tool_use_id": "toolu_o_bash_1"})
		})
	}
}

// An http hook's plain-text answer is context where a command's plain
// stdout is (UserPromptSubmit), and its decision:block blocks a Stop.
func TestHTTPHookPlainTextAndStop(t *testing.T) {
	srv := newHookServer(t, 200, "the build is green\n")
	cfg := testConfig(t.TempDir())
	cfg.Commands = settingsHooks(UserPromptSubmit, settings.Hook{Type: "http", URL: srv.URL})
	res := mustNew(t, cfg).UserPromptSubmit(context.Background(), UserPromptSubmitInput{Prompt: "hi"})
	if diff := cmp.Diff([]string{"the build is green"}, res.AdditionalContext); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}
	stop := newHookServer(t, 200, `{"decision":"block","reason":"tests are failing"}`)
	cfg.Commands = settingsHooks(Stop, settings.Hook{Type: "http", URL: stop.URL})
	sr := mustNew(t, cfg).Stop(context.Background(), StopInput{})
	if !sr.Blocked || sr.Reason != "tests are failing" {
		t.Errorf("stop result %+v", sr)
	}
}

// A server that never answers costs the hook's timeout, no more; the
// event goes on with the timeout reported.
func TestHTTPHookTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	cfg := testConfig(t.TempDir())
	cfg.Commands = settingsHooks(PostToolUse, settings.Hook{Type: "http", URL: srv.URL, Timeout: 0.5})
	start := time.Now()
	res := mustNew(t, cfg).PostToolUse(context.Background(), PostToolUseInput{ToolName: "Bash", ToolUseID: "t1"})
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %v", took)
	}
	want := "PostToolUse:Bash hook error: [" + srv.URL + "]: did not respond within 0.5s"
	if len(res.Errors) != 1 || res.Errors[0] != want || res.Blocked {
		t.Errorf("errors %q blocked %v, want %q", res.Errors, res.Blocked, want)
	}
}

func TestHTTPHookHeaders(t *testing.T) {
	srv := newHookServer(t, 200, "")
	cfg := testConfig(t.TempDir())
	cfg.Env = []string{"TOKEN=abc", "SECRET=s3cret", "TOKEN=xyz"}
	cfg.Commands = settingsHooks(PreToolUse, settings.Hook{Type: "http", URL: srv.URL,
		Headers: map[string]string{
			"Authorization": "Bearer $TOKEN",
			"X-Braces":      "${TOKEN}-1",
			"X-Secret":      "[$SECRET]",
			"X-Plain":       "fixed",
		},
		AllowedEnvVars: []string{"TOKEN"}})
	d := mustNew(t, cfg)
	w := d.Warnings()
	if len(w) != 1 || !strings.Contains(w[0], "X-Secret names $SECRET, which is not in allowedEnvVars") {
		t.Errorf("warnings %q", w)
	}
	d.PreToolUse(context.Background(), bashCall())
	h := srv.heads[0]
	got := map[string]string{}
	for _, k := range []string{"Authorization", "X-Braces", "X-Secret", "X-Plain"} {
		got[k] = h.Get(k)
	}
	want := map[string]string{"Authorization": "Bearer xyz", "X-Braces": "xyz-1", "X-Secret": "[]", "X-Plain": "fixed"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

// fakeModel is a PromptFunc that answers from a script and records what
// it was asked.
type fakeModel struct {
	mu     sync.Mutex
	answer string
	err    error
	models []string
	users  []string
}

func (f *fakeModel) ask(ctx context.Context, model, system, user string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.models = append(f.models, model)
	f.users = append(f.users, user)
	if !strings.Contains(system, `"ok"`) {
		return "", errors.New("system prompt does not ask for a verdict")
	}
	return f.answer, f.err
}

func TestPromptHook(t *testing.T) {
	cases := []struct {
		name     string
		answer   string
		err      error
		decision Decision
		message  string
		errText  string
	}{
		{name: "ok", answer: `{"ok": true}`},
		{name: "no", answer: `{"ok": false, "reason": "rm is not allowed"}`, decision: Deny,
			message: "PreToolUse:Bash hook error: [prompt: Is this safe? $ARGUMENTS]: rm is not allowed"},
		{name: "no in a fence", answer: "```json\n{\"ok\": false, \"reason\": \"nope\"}\n```", decision: Deny,
			message: "PreToolUse:Bash hook error: [prompt: Is this safe? $ARGUMENTS]: nope"},
		{name: "no reason", answer: `{"ok":false}`, decision: Deny,
			message: "PreToolUse:Bash hook error: [prompt: Is this safe? $ARGUMENTS]: the model gave no reason"},
		{name: "malformed", answer: "Sure, looks fine to me.", errText: "the model's answer is not a verdict (no JSON object)"},
		{name: "no ok field", answer: `{"decision":"approve"}`, errText: `not a verdict (no boolean "ok")`},
		{name: "ok not boolean", answer: `{"ok":"yes"}`, errText: "not a verdict"},
		{name: "model error", err: errors.New("overloaded"), errText: "asking haiku: overloaded"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fm := &fakeModel{answer: tc.answer, err: tc.err}
			cfg := testConfig(t.TempDir())
			cfg.Prompt = fm.ask
			cfg.Commands = settingsHooks(PreToolUse, settings.Hook{Type: "prompt", Prompt: "Is this safe? $ARGUMENTS"})
			res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
			if res.Decision != tc.decision || res.Message != tc.message {
				t.Errorf("decision %q message %q, want %q %q", res.Decision, res.Message, tc.decision, tc.message)
			}
			if tc.errText == "" && len(res.Errors) > 0 {
				t.Errorf("errors %q", res.Errors)
			}
			if tc.errText != "" && (len(res.Errors) != 1 || !strings.Contains(res.Errors[0], tc.errText)) {
				t.Errorf("errors %q, want one containing %q", res.Errors, tc.errText)
			}
			if len(fm.users) != 1 || fm.models[0] != DefaultPromptModel {
				t.Fatalf("asked %q of %q", fm.users, fm.models)
			}
			q, in, ok := strings.Cut(fm.users[0], "Is this safe? ")
			if !ok || q != "" {
				t.Fatalf("user text %q", fm.users[0])
			}
			hasFields(t, []byte(in), map[string]any{"hook_event_name": "PreToolUse", "tool_name": "Bash"})
		})
	}
}

// Without $ARGUMENTS the input is appended; the hook's model is asked; a
// "no" keeps a Stop from stopping, with the reason for the model.
func TestPromptHookStopAndModel(t *testing.T) {
	fm := &fakeModel{answer: `{"ok":false,"reason":"the tests were not run"}`}
	cfg := testConfig(t.TempDir())
	cfg.Prompt = fm.ask
	cfg.Commands = settingsHooks(Stop, settings.Hook{Type: "prompt", Prompt: "Is the work finished?", Model: "sonnet"})
	res := mustNew(t, cfg).Stop(context.Background(), StopInput{LastAssistantMessage: "done"})
	if !res.Blocked || res.Reason != "[prompt: Is the work finished?]: the tests were not run" {
		t.Errorf("result %+v", res)
	}
	if fm.models[0] != "sonnet" {
		t.Errorf("model %q", fm.models[0])
	}
	q, in, _ := strings.Cut(fm.users[0], "\n\n")
	if q != "Is the work finished?" {
		t.Errorf("question %q", q)
	}
	hasFields(t, []byte(in), map[string]any{"hook_event_name": "Stop", "last_assistant_message": "done"})
}

// A model that does not answer in time: the prompt hook's own default
// timeout applies; for PostToolUse that is only reported.
func TestPromptHookTimeout(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Prompt = func(ctx context.Context, _, _, _ string) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	cfg.Commands = settingsHooks(PostToolUse, settings.Hook{Type: "prompt", Prompt: "check", Timeout: 0.2})
	res := mustNew(t, cfg).PostToolUse(context.Background(), PostToolUseInput{ToolName: "Bash"})
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "did not respond within 0.2s") || res.Blocked {
		t.Errorf("result %+v", res)
	}
	d := mustNew(t, Config{Prompt: cfg.Prompt, Commands: settingsHooks(PostToolUse, settings.Hook{Type: "prompt", Prompt: "x"})})
	r := &run{h: d.hooks[PostToolUse][0], ev: PostToolUse}
	if r.timeout() != PromptTimeout {
		t.Errorf("default timeout %v", r.timeout())
	}
	r.ev = SessionEnd
	if r.timeout() != SessionEndBudget {
		t.Errorf("SessionEnd timeout %v", r.timeout())
	}
}

// Every field the dispatcher does not honour is named in a warning, and
// the hooks that cannot run as written are left out.
func TestSettingsHookFieldDecisions(t *testing.T) {
	raw := func(h settings.Hook, fields ...string) settings.Hook {
		h.Fields = append([]string{"type"}, fields...)
		return h
	}
	cases := []struct {
		name string
		hook settings.Hook
		runs bool
		warn string // "" for none
	}{
		{"plain command", raw(settings.Hook{Type: "command", Command: "true", StatusMessage: "x"}, "command", "statusMessage"), true, ""},
		{"if", raw(settings.Hook{Type: "command", Command: "true", If: "Bash(rm *)"}, "command", "if"), true, ""},
		{"if unparsable", raw(settings.Hook{Type: "command", Command: "true", If: "Bash(rm *"}, "command", "if"), true, `if condition "Bash(rm *" cannot be parsed`},
		{"args", raw(settings.Hook{Type: "command", Command: "ls", Args: []string{"-l"}}, "command", "args"), false, `field "args" is not supported; the hook is skipped`},
		{"shell", raw(settings.Hook{Type: "command", Command: "dir", Shell: "powershell"}, "command", "shell"), false, `shell "powershell" is not supported`},
		{"shell bash", raw(settings.Hook{Type: "command", Command: "true", Shell: "bash"}, "command", "shell"), true, ""},
		{"asyncRewake", raw(settings.Hook{Type: "command", Command: "true", AsyncRewake: true}, "command", "asyncRewake"), true, `"asyncRewake" is not supported`},
		{"continueOnBlock", raw(settings.Hook{Type: "prompt", Prompt: "p", ContinueOnBlock: true}, "prompt", "continueOnBlock"), true, `"continueOnBlock" is not supported`},
		{"unknown field", raw(settings.Hook{Type: "http", URL: "http://x"}, "url", "retries"), true, `field "retries" is not known for http hooks; ignored`},
		{"field of another type", raw(settings.Hook{Type: "prompt", Prompt: "p"}, "prompt", "url"), true, `field "url" is not known for prompt hooks`},
		{"agent", raw(settings.Hook{Type: "agent", Prompt: "p"}, "prompt"), false, "agent hooks are not supported; skipped"},
		{"mcp_tool", raw(settings.Hook{Type: "mcp_tool"}), false, "mcp_tool hooks are not supported; skipped"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(t.TempDir())
			cfg.Prompt = (&fakeModel{answer: `{"ok":true}`}).ask
			cfg.Commands = settingsHooks(PreToolUse, tc.hook)
			d := mustNew(t, cfg)
			if got := d.Matches(PreToolUse, "Bash"); got != tc.runs {
				t.Errorf("registered %v, want %v", got, tc.runs)
			}
			w := d.Warnings()
			switch {
			case tc.warn == "" && len(w) > 0:
				t.Errorf("warnings %q", w)
			case tc.warn != "" && (len(w) != 1 || !strings.Contains(w[0], tc.warn) || !strings.HasPrefix(w[0], "test.json: hooks.PreToolUse: ")):
				t.Errorf("warnings %q, want one containing %q", w, tc.warn)
			}
		})
	}
	// Without a model to ask, prompt hooks are skipped, with a warning.
	d := mustNew(t, Config{Commands: settingsHooks(Stop, settings.Hook{Type: "prompt", Prompt: "p"})})
	if w := d.Warnings(); len(w) != 1 || !strings.Contains(w[0], "no model to ask") || d.Matches(Stop, "") {
		t.Errorf("warnings %q", w)
	}
}

func TestOnceHook(t *testing.T) {
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Commands = settingsHooks(PreToolUse,
		settings.Hook{Type: "command", Command: "echo once >> once.txt", Once: true},
		settings.Hook{Type: "command", Command: "echo every >> every.txt"})
	d := mustNew(t, cfg)
	for range 3 {
		d.PreToolUse(context.Background(), bashCall())
	}
	for file, want := range map[string]string{"once.txt": "once\n", "every.txt": "every\nevery\nevery\n"} {
		b, err := os.ReadFile(filepath.Join(cwd, file))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q (%v), want %q", file, b, err, want)
		}
	}
}

// An async hook does not hold up its event, its output has no effect, and
// its failure is reported when it ends.
func TestAsyncHook(t *testing.T) {
	cfg := testConfig(t.TempDir())
	reported := make(chan string, 1)
	cfg.Report = func(s string) { reported <- s }
	deny := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny"}}`
	cfg.Commands = settingsHooks(PreToolUse,
		settings.Hook{Type: "command", Command: "echo '" + deny + "'; sleep 0.3; echo late >&2; exit 1", Async: true})
	start := time.Now()
	res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
	if took := time.Since(start); took > 200*time.Millisecond {
		t.Errorf("the event waited %v for an async hook", took)
	}
	if res.Decision != None || res.Ran != 0 {
		t.Errorf("result %+v", res)
	}
	select {
	case got := <-reported:
		if !strings.Contains(got, "PreToolUse:Bash hook error: ") || !strings.Contains(got, "exit status 1: late") {
			t.Errorf("reported %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the async hook's failure was not reported")
	}
}

// onFailure "block": a failing hook blocks as exit 2 does, but not a Stop.
func TestOnFailureBlock(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Commands = settingsHooks(PreToolUse, settings.Hook{Type: "command", Command: "echo broken >&2; exit 1", OnFailure: "block"})
	res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
	want := "PreToolUse:Bash hook error: [echo broken >&2; exit 1]: exit status 1: broken"
	if res.Decision != Deny || res.Message != want {
		t.Errorf("decision %q message %q, want %q", res.Decision, res.Message, want)
	}
	cfg.Commands = settingsHooks(Stop, settings.Hook{Type: "command", Command: "exit 1", OnFailure: "block"})
	if sr := mustNew(t, cfg).Stop(context.Background(), StopInput{}); sr.Blocked || len(sr.Errors) != 1 {
		t.Errorf("stop result %+v", sr)
	}
	cfg.Commands = settingsHooks(PreToolUse, settings.Hook{Type: "command", Command: "exit 1", OnFailure: "continue"})
	if res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall()); res.Decision != None {
		t.Errorf("onFailure continue: decision %q", res.Decision)
	}
}

// The same url or prompt registered twice runs once, as a command does.
func TestSettingsHooksDeduplicated(t *testing.T) {
	srv := newHookServer(t, 200, "")
	fm := &fakeModel{answer: `{"ok":true}`}
	cfg := testConfig(t.TempDir())
	cfg.Prompt = fm.ask
	h := settings.Hook{Type: "http", URL: srv.URL}
	p := settings.Hook{Type: "prompt", Prompt: "same"}
	cfg.Commands = settingsHooks(PreToolUse, h, p, h, p, settings.Hook{Type: "prompt", Prompt: "same", Model: "opus"})
	res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
	if res.Ran != 3 || len(srv.bodies) != 1 || len(fm.users) != 2 {
		t.Errorf("ran %d, %d posts, %d model calls", res.Ran, len(srv.bodies), len(fm.users))
	}
}
