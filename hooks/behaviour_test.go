package hooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/settings"
)

// recorder collects the observer's notices.
type recorder struct {
	mu      sync.Mutex
	notices []Notice
}

func (r *recorder) observe(n Notice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, n)
}

func (r *recorder) responses() []Notice {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Notice
	for _, n := range r.notices {
		if n.Subtype == "hook_response" {
			out = append(out, n)
		}
	}
	return out
}

// commands configures one command hook per command for ev, each with its
// own matcher entry, all matching everything.
func commands(ev Event, timeout float64, cmds ...string) map[string][]settings.HookMatcher {
	var ms []settings.HookMatcher
	for _, c := range cmds {
		ms = append(ms, settings.HookMatcher{Hooks: []settings.Hook{{Type: "command", Command: c, Timeout: timeout}}})
	}
	return map[string][]settings.HookMatcher{string(ev): ms}
}

func bashCall() PreToolUseInput {
	return PreToolUseInput{ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"echo hi","description":"Print hi"}`),
		ToolUseID: "toolu_o_bash_1"}
}

// The recorded scenario o_hook_pretooluse_block, end to end: the hook is
// configured through --settings, exits 2, and the tool result, the hook's
// stdin and the hook_started/hook_response fields are those recorded.
func TestReferenceExit2Scenario(t *testing.T) {
	cwd := t.TempDir()
	const command = "cat > hook_input.json; echo 'blocked by oracle hook' >&2; exit 2"
	flag := `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"` +
		"cat > hook_input.json; echo 'blocked by oracle hook' >&2; exit 2" + `"}]}]}}`
	s, err := settings.Load(settings.Options{Cwd: cwd, Home: t.TempDir(), ConfigDir: t.TempDir(),
		ManagedPath: filepath.Join(cwd, "none.json"), Sources: []settings.SettingSource{}, Flag: flag})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg := testConfig(cwd)
	cfg.Commands, cfg.Observer = s.Hooks, rec.observe
	d := mustNew(t, cfg)
	in := bashCall()
	in.PermissionMode, in.PromptID, in.Effort = "default", "p-1", &Effort{Level: "medium"}
	res := d.PreToolUse(context.Background(), in)

	want := "PreToolUse:Bash hook error: [" + command + "]: blocked by oracle hook\n"
	if res.Decision != Deny || res.Message != want {
		t.Errorf("decision %q message %q\nwant %q", res.Decision, res.Message, want)
	}
	stdin, err := os.ReadFile(filepath.Join(cwd, "hook_input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := topKeys(t, stdin), []string{"session_id", "transcript_path", "cwd", "prompt_id",
		"permission_mode", "effort", "hook_event_name", "tool_name", "tool_input", "tool_use_id"}; !reflect.DeepEqual(got, want) {
		t.Errorf("stdin keys %q, want %q", got, want)
	}
	if len(rec.notices) != 2 {
		t.Fatalf("notices %+v", rec.notices)
	}
	started, resp := rec.notices[0], rec.notices[1]
	if started.Subtype != "hook_started" || started.HookName != "PreToolUse:Bash" || started.HookEvent != PreToolUse ||
		started.HookID == "" || resp.HookID != started.HookID {
		t.Errorf("started %+v", started)
	}
	wantResp := Notice{Subtype: "hook_response", HookID: started.HookID, HookName: "PreToolUse:Bash", HookEvent: PreToolUse,
		Output: "blocked by oracle hook\n", Stdout: "", Stderr: "blocked by oracle hook\n", ExitCode: 2, Outcome: Failed}
	if resp != wantResp {
		t.Errorf("response\n got %+v\nwant %+v", resp, wantResp)
	}
	f := resp.Fields()
	var keys []string
	for k := range f {
		keys = append(keys, k)
	}
	if len(keys) != 8 || string(f["exit_code"]) != "2" || string(f["outcome"]) != `"error"` || string(f["stdout"]) != `""` {
		t.Errorf("fields %v", f)
	}
	if len(started.Fields()) != 3 {
		t.Errorf("started fields %v", started.Fields())
	}
}

func TestExitCodes(t *testing.T) {
	cwd := t.TempDir()
	run := func(t *testing.T, ev Event, cmd string) (any, *recorder) {
		rec := &recorder{}
		cfg := testConfig(cwd)
		cfg.Commands, cfg.Observer = commands(ev, 10, cmd), rec.observe
		d := mustNew(t, cfg)
		ctx := context.Background()
		switch ev {
		case PreToolUse:
			return d.PreToolUse(ctx, bashCall()), rec
		case PostToolUse:
			return d.PostToolUse(ctx, PostToolUseInput{ToolName: "Bash", ToolResponse: json.RawMessage(`{}`)}), rec
		case UserPromptSubmit:
			return d.UserPromptSubmit(ctx, UserPromptSubmitInput{Prompt: "hi"}), rec
		case SessionStart:
			return d.SessionStart(ctx, SessionStartInput{Source: "startup"}), rec
		case Stop:
			return d.Stop(ctx, StopInput{}), rec
		case PermissionRequest:
			return d.PermissionRequest(ctx, PermissionRequestInput{ToolName: "Bash"}), rec
		}
		t.Fatalf("no call for %s", ev)
		return nil, nil
	}
	outcome := func(t *testing.T, rec *recorder, want Outcome) {
		t.Helper()
		rs := rec.responses()
		if len(rs) != 1 || rs[0].Outcome != want {
			t.Errorf("responses %+v, want outcome %s", rs, want)
		}
	}

	t.Run("0 with JSON deny", func(t *testing.T) {
		res, rec := run(t, PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no echo"}}'`)
		r := res.(PreToolUseResult)
		if r.Decision != Deny || r.Message != "PreToolUse:Bash hook error: no echo" || r.Reason != "no echo" {
			t.Errorf("%+v", r)
		}
		outcome(t, rec, Success)
	})
	t.Run("0 with plain text on PreToolUse is only reported", func(t *testing.T) {
		res, rec := run(t, PreToolUse, `echo hello`)
		r := res.(PreToolUseResult)
		if r.Decision != None || len(r.AdditionalContext) != 0 || len(r.Errors) != 0 {
			t.Errorf("%+v", r)
		}
		if rs := rec.responses(); len(rs) != 1 || rs[0].Stdout != "hello\n" || rs[0].ExitCode != 0 || rs[0].Outcome != Success {
			t.Errorf("responses %+v", rs)
		}
	})
	t.Run("0 with plain text on UserPromptSubmit is context", func(t *testing.T) {
		res, _ := run(t, UserPromptSubmit, `printf 'today is Monday\n'`)
		r := res.(UserPromptSubmitResult)
		wantStrings(t, "context", r.AdditionalContext, "today is Monday")
		if r.Blocked {
			t.Error("blocked")
		}
	})
	t.Run("0 with plain text on SessionStart is context", func(t *testing.T) {
		res, _ := run(t, SessionStart, `echo "branch: main"`)
		wantStrings(t, "context", res.(SessionStartResult).AdditionalContext, "branch: main")
	})
	t.Run("2 on UserPromptSubmit blocks the prompt", func(t *testing.T) {
		res, rec := run(t, UserPromptSubmit, `echo 'secret in prompt' >&2; exit 2`)
		r := res.(UserPromptSubmitResult)
		if !r.Blocked || r.Reason != "[echo 'secret in prompt' >&2; exit 2]: secret in prompt\n" {
			t.Errorf("%+v", r)
		}
		outcome(t, rec, Failed)
	})
	t.Run("2 on PostToolUse is feedback", func(t *testing.T) {
		res, _ := run(t, PostToolUse, `echo 'lint failed' >&2; exit 2`)
		r := res.(PostToolUseResult)
		if !r.Blocked || !strings.HasSuffix(r.Reason, "]: lint failed\n") {
			t.Errorf("%+v", r)
		}
	})
	t.Run("2 on Stop keeps the agent going", func(t *testing.T) {
		res, _ := run(t, Stop, `echo 'tests fail' >&2; exit 2`)
		if r := res.(StopResult); !r.Blocked || !strings.HasSuffix(r.Reason, "]: tests fail\n") {
			t.Errorf("%+v", r)
		}
	})
	t.Run("2 on PermissionRequest denies", func(t *testing.T) {
		res, _ := run(t, PermissionRequest, `echo 'not this' >&2; exit 2`)
		if r := res.(PermissionRequestResult); r.Decision != Deny || !strings.HasSuffix(r.Message, "]: not this\n") {
			t.Errorf("%+v", r)
		}
	})
	t.Run("2 on SessionStart cannot block", func(t *testing.T) {
		res, _ := run(t, SessionStart, `echo 'no' >&2; exit 2`)
		r := res.(SessionStartResult)
		if len(r.Errors) != 1 || r.Errors[0] != "SessionStart:startup hook error: [echo 'no' >&2; exit 2]: no\n" {
			t.Errorf("%q", r.Errors)
		}
	})
	t.Run("2 without stderr", func(t *testing.T) {
		res, _ := run(t, PreToolUse, `exit 2`)
		if r := res.(PreToolUseResult); r.Message != "PreToolUse:Bash hook error: [exit 2]: No stderr output" {
			t.Errorf("%q", r.Message)
		}
	})
	t.Run("1 is a non-blocking error", func(t *testing.T) {
		res, rec := run(t, PreToolUse, `echo oops >&2; exit 1`)
		r := res.(PreToolUseResult)
		if r.Decision != None {
			t.Errorf("decision %q", r.Decision)
		}
		wantStrings(t, "errors", r.Errors, "PreToolUse:Bash hook error: [echo oops >&2; exit 1]: exit status 1: oops")
		outcome(t, rec, Failed)
	})
	t.Run("1 on UserPromptSubmit does not block", func(t *testing.T) {
		res, _ := run(t, UserPromptSubmit, `exit 1`)
		if r := res.(UserPromptSubmitResult); r.Blocked || len(r.Errors) != 1 {
			t.Errorf("%+v", r)
		}
	})
	t.Run("invalid JSON", func(t *testing.T) {
		res, rec := run(t, PreToolUse, `echo '{"hookSpecificOutput": {'`)
		r := res.(PreToolUseResult)
		if r.Decision != None || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "hook output is not valid JSON") ||
			!strings.Contains(r.Errors[0], `stdout began "{\"hookSpecificOutput\": {"`) {
			t.Errorf("%+v", r)
		}
		outcome(t, rec, Failed)
	})
	t.Run("JSON of the wrong shape", func(t *testing.T) {
		res, _ := run(t, Stop, `echo '{"continue":"no","decision":"block"}'`)
		r := res.(StopResult)
		if r.Blocked || r.Halt || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "not valid JSON") {
			t.Errorf("%+v", r)
		}
	})
	t.Run("unknown decision", func(t *testing.T) {
		res, rec := run(t, Stop, `echo '{"decision":"maybe"}'`)
		r := res.(StopResult)
		if r.Blocked || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], `invalid output: decision "maybe"`) {
			t.Errorf("%+v", r)
		}
		outcome(t, rec, Failed)
	})
	t.Run("hookEventName of another event", func(t *testing.T) {
		res, _ := run(t, PreToolUse, `echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}'`)
		r := res.(PreToolUseResult)
		if r.Decision != None || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], `hookEventName is "PostToolUse"`) {
			t.Errorf("%+v", r)
		}
	})
	t.Run("async output has no effect", func(t *testing.T) {
		res, _ := run(t, Stop, `echo '{"async":true,"decision":"block","reason":"x"}'`)
		if r := res.(StopResult); r.Blocked || len(r.Errors) != 0 {
			t.Errorf("%+v", r)
		}
	})
	t.Run("deprecated approve and block", func(t *testing.T) {
		res, _ := run(t, PreToolUse, `echo '{"decision":"approve","reason":"fine"}'`)
		if r := res.(PreToolUseResult); r.Decision != Allow || r.Reason != "fine" {
			t.Errorf("%+v", r)
		}
		res, _ = run(t, PreToolUse, `echo '{"decision":"block","reason":"no"}'`)
		if r := res.(PreToolUseResult); r.Decision != Deny || r.Message != "PreToolUse:Bash hook error: no" {
			t.Errorf("%+v", r)
		}
	})
	t.Run("crash", func(t *testing.T) {
		res, rec := run(t, PreToolUse, `kill -SEGV $$`)
		r := res.(PreToolUseResult)
		if r.Decision != None || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "exit status 139") {
			t.Errorf("%+v", r)
		}
		if rs := rec.responses(); len(rs) != 1 || rs[0].ExitCode != 139 || rs[0].Outcome != Failed {
			t.Errorf("%+v", rs)
		}
	})
	t.Run("continue false", func(t *testing.T) {
		res, _ := run(t, PreToolUse, `echo '{"continue":false,"stopReason":"quota reached","systemMessage":"stopping"}'`)
		r := res.(PreToolUseResult)
		if !r.Halt || r.StopReason != "quota reached" || r.Decision != None {
			t.Errorf("%+v", r)
		}
		wantStrings(t, "system messages", r.SystemMessages, "stopping")
	})
}

func TestCallbackErrorsAndPanics(t *testing.T) {
	cfg := testConfig(t.TempDir())
	rec := &recorder{}
	cfg.Observer = rec.observe
	cfg.Callbacks = map[Event][]Matcher{PreToolUse: {{Hooks: []Callback{
		func(context.Context, Input, string) (Output, error) { panic("boom") },
		func(context.Context, Input, string) (Output, error) { return Output{}, errors.New("no database") },
		func(context.Context, Input, string) (Output, error) {
			return Output{HookSpecificOutput: &HookSpecificOutput{PermissionDecision: Ask, PermissionDecisionReason: "check"}}, nil
		},
	}}}}
	res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
	if res.Decision != Ask || res.Reason != "check" {
		t.Errorf("decision %q %q", res.Decision, res.Reason)
	}
	if len(res.Errors) != 2 || !strings.Contains(res.Errors[0], "callback 0: panic: boom") ||
		res.Errors[1] != "PreToolUse:Bash hook error: callback 1: no database" {
		t.Errorf("errors %q", res.Errors)
	}
	outcomes := map[Outcome]int{}
	for _, n := range rec.responses() {
		outcomes[n.Outcome]++
	}
	if outcomes[Failed] != 2 || outcomes[Success] != 1 {
		t.Errorf("outcomes %v", outcomes)
	}
}

func TestCommandEnvironment(t *testing.T) {
	cwd, proj := t.TempDir(), t.TempDir()
	cfg := testConfig(cwd)
	cfg.ProjectDir = proj
	cfg.Env = []string{"PATH=" + os.Getenv("PATH"), "HOOK_TEST=yes", "CLAUDE_PROJECT_DIR=stale"}
	cfg.Commands = commands(SessionStart, 10, `printf '%s|%s|%s' "$CLAUDE_PROJECT_DIR" "$PWD" "$HOOK_TEST"`)
	res := mustNew(t, cfg).SessionStart(context.Background(), SessionStartInput{Source: "startup"})
	wantStrings(t, "context", res.AdditionalContext, proj+"|"+cwd+"|yes")
}

func TestPermissionPrecedence(t *testing.T) {
	type h struct {
		dec    Decision
		reason string
		input  string
	}
	cases := []struct {
		hooks      []h
		want       Decision
		wantReason string
		wantInput  string
	}{
		{[]h{{Allow, "a", ""}, {Ask, "b", ""}, {Defer, "c", ""}, {Deny, "d", ""}}, Deny, "d", ""},
		{[]h{{Deny, "d", ""}, {Defer, "c", ""}, {Ask, "b", ""}, {Allow, "a", ""}}, Deny, "d", ""},
		{[]h{{Allow, "a", ""}, {Defer, "c", ""}, {Ask, "b", ""}}, Defer, "c", ""},
		{[]h{{Allow, "a", ""}, {Ask, "b", ""}, {None, "", ""}}, Ask, "b", ""},
		{[]h{{None, "", ""}, {Allow, "a", ""}}, Allow, "a", ""},
		{[]h{{Deny, "first", ""}, {Deny, "second", ""}}, Deny, "first", ""},
		// updatedInput: the last one from a hook whose decision won or that gave none.
		{[]h{{Allow, "", `{"n":1}`}, {Allow, "", `{"n":2}`}}, Allow, "", `{"n":2}`},
		{[]h{{Allow, "", `{"n":1}`}, {Ask, "", `{"n":2}`}}, Ask, "", `{"n":2}`},
		{[]h{{Ask, "", `{"n":1}`}, {Allow, "", `{"n":2}`}}, Ask, "", `{"n":1}`},
		{[]h{{None, "", `{"n":1}`}, {Allow, "", ""}}, Allow, "", `{"n":1}`},
		{[]h{{None, "", `{"n":1}`}}, None, "", `{"n":1}`},
		{[]h{{Allow, "", `{"n":1}`}, {Deny, "x", ""}}, Deny, "x", ""},
		{[]h{{Allow, "", `{"n":1}`}, {Defer, "", ""}}, Defer, "", ""},
	}
	for i, tc := range cases {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			var cbs []Callback
			for j, hk := range tc.hooks {
				cbs = append(cbs, func(context.Context, Input, string) (Output, error) {
					// finish in reverse order, to show the merge follows registration order
					time.Sleep(time.Duration(len(tc.hooks)-j) * 5 * time.Millisecond)
					out := Output{HookSpecificOutput: &HookSpecificOutput{HookEventName: PreToolUse,
						PermissionDecision: hk.dec, PermissionDecisionReason: hk.reason}}
					if hk.input != "" {
						out.HookSpecificOutput.UpdatedInput = json.RawMessage(hk.input)
					}
					return out, nil
				})
			}
			cfg := testConfig(t.TempDir())
			cfg.Callbacks = map[Event][]Matcher{PreToolUse: {{Matcher: "Bash", Hooks: cbs}}}
			res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
			if res.Decision != tc.want || res.Reason != tc.wantReason || string(res.UpdatedInput) != tc.wantInput {
				t.Errorf("got %q %q %s, want %q %q %s", res.Decision, res.Reason, res.UpdatedInput,
					tc.want, tc.wantReason, tc.wantInput)
			}
		})
	}
}

func TestContextsInRegistrationOrder(t *testing.T) {
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Callbacks = map[Event][]Matcher{PostToolUse: {
		{Hooks: []Callback{func(context.Context, Input, string) (Output, error) {
			time.Sleep(60 * time.Millisecond)
			return Output{HookSpecificOutput: &HookSpecificOutput{AdditionalContext: "first"}}, nil
		}}},
		{Matcher: "Bash", Hooks: []Callback{func(context.Context, Input, string) (Output, error) {
			return Output{HookSpecificOutput: &HookSpecificOutput{AdditionalContext: "second"}}, nil
		}}},
	}}
	// settings commands come after callbacks
	cfg.Commands = commands(PostToolUse, 10,
		`echo '{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"third"}}'`)
	res := mustNew(t, cfg).PostToolUse(context.Background(), PostToolUseInput{ToolName: "Bash"})
	wantStrings(t, "context", res.AdditionalContext, "first", "second", "third")
}

func TestBlockWins(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Callbacks = map[Event][]Matcher{
		Stop: {{Hooks: []Callback{
			func(context.Context, Input, string) (Output, error) { return Output{}, nil },
			func(context.Context, Input, string) (Output, error) {
				return Output{Decision: "block", Reason: "one"}, nil
			},
			func(context.Context, Input, string) (Output, error) {
				return Output{Decision: "block", Reason: "two"}, nil
			},
		}}},
		PermissionRequest: {{Hooks: []Callback{
			func(context.Context, Input, string) (Output, error) {
				return Output{HookSpecificOutput: &HookSpecificOutput{Decision: &PermissionRequestDecision{Behavior: "allow",
					UpdatedInput: json.RawMessage(`{"x":1}`)}}}, nil
			},
			func(context.Context, Input, string) (Output, error) {
				return Output{HookSpecificOutput: &HookSpecificOutput{Decision: &PermissionRequestDecision{Behavior: "deny",
					Message: "no writes", Interrupt: true}}}, nil
			},
		}}},
	}
	d := mustNew(t, cfg)
	if r := d.Stop(context.Background(), StopInput{}); !r.Blocked || r.Reason != "one\ntwo" {
		t.Errorf("stop %+v", r)
	}
	r := d.PermissionRequest(context.Background(), PermissionRequestInput{ToolName: "Write"})
	if r.Decision != Deny || r.Message != "no writes" || !r.Interrupt || r.UpdatedInput != nil {
		t.Errorf("permission request %+v", r)
	}
}

func TestMatchers(t *testing.T) {
	cases := []struct {
		pattern string
		yes, no []string
	}{
		{"", []string{"Bash", "mcp__x__y"}, nil},
		{"*", []string{"Bash", "Write"}, nil},
		{"Bash", []string{"Bash"}, []string{"bash", "BashOutput", "xBash"}},
		{"Edit|Write", []string{"Edit", "Write"}, []string{"NotebookEdit", "Edit|Write"}},
		{"Edit, Write", []string{"Edit", "Write"}, []string{"Read"}},
		{" Read ", []string{"Read"}, []string{" Read "}},
		{"Edit.*", []string{"Edit", "NotebookEdit", "EditX"}, []string{"Write"}},
		{"^Edit$", []string{"Edit"}, []string{"NotebookEdit"}},
		{"mcp__memory__create_entities", []string{"mcp__memory__create_entities"}, []string{"mcp__memory__create_entities2"}},
		{"mcp__github__.*", []string{"mcp__github__get_issue", "mcp__github__"}, []string{"mcp__gitlab__get", "Bash"}},
		{"mcp__.*__write.*", []string{"mcp__fs__write_file"}, []string{"mcp__fs__read_file"}},
		{"Notebook.*|Write", []string{"NotebookEdit", "Write"}, []string{"Read"}},
		{"startup", []string{"startup"}, []string{"resume"}},
	}
	for _, tc := range cases {
		p, err := compilePattern(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		for _, s := range tc.yes {
			if !p.match(s) {
				t.Errorf("%q should match %q", tc.pattern, s)
			}
		}
		for _, s := range tc.no {
			if p.match(s) {
				t.Errorf("%q should not match %q", tc.pattern, s)
			}
		}
	}
	if _, err := compilePattern("Bash("); err == nil {
		t.Error("a bad regular expression compiled")
	}
}

func TestMatcherSelection(t *testing.T) {
	cwd := t.TempDir()
	ran := map[string]int{}
	var mu sync.Mutex
	mark := func(name string) Callback {
		return func(context.Context, Input, string) (Output, error) {
			mu.Lock()
			ran[name]++
			mu.Unlock()
			return Output{}, nil
		}
	}
	cfg := testConfig(cwd)
	cfg.Callbacks = map[Event][]Matcher{
		PreToolUse: {
			{Matcher: "Write|Edit", Hooks: []Callback{mark("write")}},
			{Matcher: "mcp__github__.*", Hooks: []Callback{mark("github")}},
			{Matcher: "*", Hooks: []Callback{mark("all")}},
		},
		SessionStart:     {{Matcher: "resume", Hooks: []Callback{mark("resume")}}},
		UserPromptSubmit: {{Matcher: "NoSuchThing", Hooks: []Callback{mark("prompt")}}},
	}
	d := mustNew(t, cfg)
	ctx := context.Background()
	for _, tool := range []string{"Bash", "Write", "mcp__github__create_pr", "mcp__gitlab__x"} {
		d.PreToolUse(ctx, PreToolUseInput{ToolName: tool})
	}
	d.SessionStart(ctx, SessionStartInput{Source: "startup"})
	d.SessionStart(ctx, SessionStartInput{Source: "resume"})
	d.UserPromptSubmit(ctx, UserPromptSubmitInput{Prompt: "x"})
	want := map[string]int{"write": 1, "github": 1, "all": 4, "resume": 1, "prompt": 1}
	if !reflect.DeepEqual(ran, want) {
		t.Errorf("ran %v, want %v", ran, want)
	}
	if !d.Matches(PreToolUse, "Edit") || d.Matches(SessionStart, "clear") || !d.Matches(UserPromptSubmit, "") ||
		d.Matches(Stop, "") {
		t.Error("Matches")
	}
	var nilD *Dispatcher
	if nilD.Matches(PreToolUse, "Bash") || nilD.PreToolUse(ctx, bashCall()).Decision != None {
		t.Error("a nil Dispatcher runs nothing")
	}
}

func TestNewRejectsAndWarns(t *testing.T) {
	ok := func(context.Context, Input, string) (Output, error) { return Output{}, nil }
	for _, cfg := range []Config{
		{Callbacks: map[Event][]Matcher{PreToolUse: {{Matcher: "Bash(", Hooks: []Callback{ok}}}}},
		{Callbacks: map[Event][]Matcher{PreToolUse: {{Hooks: []Callback{nil}}}}},
		{Callbacks: map[Event][]Matcher{"PreToolUze": {{Hooks: []Callback{ok}}}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) did not fail", cfg.Callbacks)
		}
	}
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Commands = map[string][]settings.HookMatcher{
		"PreToolUse": {
			{Matcher: "Bash(", File: "/x/settings.json", Hooks: []settings.Hook{{Type: "command", Command: "touch bad"}}},
			{Matcher: "Bash", Hooks: []settings.Hook{{Type: "prompt"}, {Type: "command", Command: "touch good"}}},
		},
		"PostToolBatch": {{Hooks: []settings.Hook{{Type: "command", Command: "true"}}}},
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if w := d.Warnings(); len(w) != 3 || !strings.Contains(w[0], "/x/settings.json: hooks.PreToolUse: matcher \"Bash(\"") {
		t.Errorf("warnings %q", w)
	}
	d.PreToolUse(context.Background(), bashCall())
	if _, err := os.Stat(filepath.Join(cwd, "good")); err != nil {
		t.Error("the good hook did not run")
	}
	if _, err := os.Stat(filepath.Join(cwd, "bad")); err == nil {
		t.Error("the hook with a bad matcher ran")
	}
}

func TestDuplicateCommandsRunOnce(t *testing.T) {
	cwd := t.TempDir()
	cfg := testConfig(cwd)
	cfg.Commands = commands(Stop, 10, "echo x >> count", "echo x >> count", "echo y >> count")
	mustNew(t, cfg).Stop(context.Background(), StopInput{})
	b, _ := os.ReadFile(filepath.Join(cwd, "count"))
	if lines := strings.Count(string(b), "\n"); lines != 2 {
		t.Errorf("%d runs, want 2: %q", lines, b)
	}
}

func TestLongOutputIsCapped(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig(dir)
	cfg.OverflowDir = dir
	long := strings.Repeat("é", MaxOutputChars+500)
	cfg.Callbacks = map[Event][]Matcher{SubagentStart: {{Hooks: []Callback{func(context.Context, Input, string) (Output, error) {
		return Output{HookSpecificOutput: &HookSpecificOutput{AdditionalContext: long}}, nil
	}}}}}
	res := mustNew(t, cfg).SubagentStart(context.Background(), SubagentStartInput{AgentType: "x"})
	if len(res.AdditionalContext) != 1 {
		t.Fatal(res)
	}
	got := res.AdditionalContext[0]
	if !strings.HasPrefix(got, strings.Repeat("é", previewChars)+"\n\n[hook output truncated: 10500 characters in all; the full text is in ") {
		t.Fatalf("%q", got[len(got)-200:])
	}
	path := strings.TrimSuffix(got[strings.LastIndex(got, " ")+1:], "]")
	full, err := os.ReadFile(path)
	if err != nil || string(full) != long {
		t.Errorf("overflow file %s: %v (%d bytes)", path, err, len(full))
	}
}

func TestCancelledPreToolUseDenies(t *testing.T) {
	cfg := testConfig(t.TempDir())
	rec := &recorder{}
	cfg.Observer = rec.observe
	started := make(chan struct{})
	cfg.Callbacks = map[Event][]Matcher{PreToolUse: {{Hooks: []Callback{func(ctx context.Context, _ Input, _ string) (Output, error) {
		close(started)
		<-ctx.Done()
		return Output{}, ctx.Err()
	}}}}}
	cfg.Commands = commands(PreToolUse, 10, "sleep 20")
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	start := time.Now()
	res := mustNew(t, cfg).PreToolUse(ctx, bashCall())
	if time.Since(start) > 5*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if res.Decision != Deny || res.Message != "PreToolUse:Bash hook error: callback 0: cancelled" {
		t.Errorf("%+v", res)
	}
	for _, n := range rec.responses() {
		if n.Outcome != Cancelled {
			t.Errorf("%+v", n)
		}
	}
}
