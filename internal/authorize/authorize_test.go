package authorize

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// checker is a fake rule step: it answers d and remembers what it saw.
type checker struct {
	d     permission.Decision
	calls []permission.Call
}

func (c *checker) Decide(_ context.Context, call permission.Call) permission.Decision {
	c.calls = append(c.calls, call)
	return c.d
}

var (
	allowRule = permission.Decision{Behavior: permission.Allow, ReasonType: permission.ReasonRule}
	denyRule  = permission.Decision{Behavior: permission.Deny, ReasonType: permission.ReasonRule, Message: "denied by rule"}
	askRule   = permission.Decision{Behavior: permission.Ask, ReasonType: permission.ReasonRule, Message: "ask rule: nobody to ask"}
	askMode   = permission.Decision{Behavior: permission.Ask, ReasonType: permission.ReasonMode, Message: "mode: nobody to ask"}
	allowMode = permission.Decision{Behavior: permission.Allow, ReasonType: permission.ReasonMode}
)

// answer is a scripted CanUseTool.
type answer struct {
	a   Answer
	err error
}

// want is what a case checks of an Outcome and of the collaborators.
type want struct {
	Decision     engine.Decision
	Checked      bool   // the checker was consulted
	CheckedInput string // the input the checker saw
	Asked        bool   // CanUseTool was called
	AskedInput   string // the input it saw
	Diags        int
	Applied      int // updates applied
}

func TestDecideOrder(t *testing.T) {
	bash := Call{ID: "t1", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`), Alone: true}
	pair := bash
	pair.Alone = false
	sub := bash
	sub.AgentID = "agent-1"
	upd := []settings.PermissionUpdate{{Type: "addRules"}}
	tests := []struct {
		name     string
		call     Call
		pre      hooks.PreToolUseResult
		rules    permission.Decision
		sandbox  bool
		pr       hooks.PermissionRequestResult
		ask      *answer // nil: no CanUseTool
		applyErr error
		want     want
	}{
		{name: "no hook, allow rule", call: bash, rules: allowRule,
			want: want{Decision: engine.Decision{Allow: true, Source: "config", ReasonType: "rule"}, Checked: true, CheckedInput: `{"command":"ls"}`}},
		{name: "hook deny beats allow rule", call: bash, rules: allowRule,
			pre:  hooks.PreToolUseResult{Decision: hooks.Deny, Message: "PreToolUse:Bash hook error: no"},
			want: want{Decision: engine.Decision{Source: "hook", ReasonType: "hook", Message: "PreToolUse:Bash hook error: no", Quiet: true}}},
		{name: "hook allow skips the mode", call: bash, rules: askMode, pre: hooks.PreToolUseResult{Decision: hooks.Allow},
			want: want{Decision: engine.Decision{Allow: true, Source: "hook", ReasonType: "hook"}, Checked: true, CheckedInput: `{"command":"ls"}`}},
		{name: "hook allow still meets a deny rule", call: bash, rules: denyRule, pre: hooks.PreToolUseResult{Decision: hooks.Allow},
			want: want{Decision: engine.Decision{Source: "config", ReasonType: "rule", Message: "denied by rule"}, Checked: true, CheckedInput: `{"command":"ls"}`}},
		{name: "hook allow still meets an ask rule", call: bash, rules: askRule, pre: hooks.PreToolUseResult{Decision: hooks.Allow},
			ask:  &answer{a: Answer{Behavior: "deny", Message: "no thanks"}},
			want: want{Decision: engine.Decision{Source: "user", ReasonType: "user", Message: "no thanks"}, Checked: true, CheckedInput: `{"command":"ls"}`, Asked: true, AskedInput: `{"command":"ls"}`}},
		{name: "hook ask goes to CanUseTool past an allow rule", call: bash, rules: allowRule, pre: hooks.PreToolUseResult{Decision: hooks.Ask, Reason: "check"},
			ask:  &answer{a: Answer{Behavior: "allow"}},
			want: want{Decision: engine.Decision{Allow: true, Source: "user", ReasonType: "user"}, Asked: true, AskedInput: `{"command":"ls"}`}},
		{name: "hook ask with nobody to ask", call: bash, rules: allowRule, pre: hooks.PreToolUseResult{Decision: hooks.Ask, Reason: "check"},
			want: want{Decision: engine.Decision{Source: "config", ReasonType: "hook", Message: "A hook asked for approval of this Bash call, and there is no one to ask: check"}}},
		{name: "no CanUseTool denies with the checker's message", call: bash, rules: askMode,
			want: want{Decision: engine.Decision{Source: "config", ReasonType: "mode", Message: "mode: nobody to ask"}, Checked: true, CheckedInput: `{"command":"ls"}`}},
		{name: "PermissionRequest hook answers before CanUseTool", call: bash, rules: askMode,
			pr:   hooks.PermissionRequestResult{Decision: hooks.Allow, UpdatedInput: json.RawMessage(`{"command":"pwd"}`), UpdatedPermissions: upd},
			ask:  &answer{err: errors.New("CanUseTool must not be asked")},
			want: want{Decision: engine.Decision{Allow: true, Source: "hook", ReasonType: "hook", Input: []byte(`{"command":"pwd"}`)}, Checked: true, CheckedInput: `{"command":"ls"}`, Applied: 1}},
		{name: "PermissionRequest hook deny with interrupt", call: bash, rules: askMode,
			pr:   hooks.PermissionRequestResult{Decision: hooks.Deny, Message: "stop", Interrupt: true},
			ask:  &answer{err: errors.New("CanUseTool must not be asked")},
			want: want{Decision: engine.Decision{Source: "hook", ReasonType: "hook", Message: "stop", Interrupt: true}, Checked: true, CheckedInput: `{"command":"ls"}`}},
		{name: "PermissionRequest allow whose updates fail is a denial", call: bash, rules: askMode, applyErr: errors.New("disk full"),
			pr:   hooks.PermissionRequestResult{Decision: hooks.Allow, UpdatedPermissions: upd},
			want: want{Decision: engine.Decision{Source: "hook", ReasonType: "hook", Message: "disk full"}, Checked: true, CheckedInput: `{"command":"ls"}`, Applied: 1}},
		{name: "hook updatedInput reaches the rules and CanUseTool", call: bash, rules: askMode,
			pre:  hooks.PreToolUseResult{UpdatedInput: json.RawMessage(`{"command":"echo"}`)},
			ask:  &answer{a: Answer{Behavior: "allow"}},
			want: want{Decision: engine.Decision{Allow: true, Source: "user", ReasonType: "user", Input: []byte(`{"command":"echo"}`)}, Checked: true, CheckedInput: `{"command":"echo"}`, Asked: true, AskedInput: `{"command":"echo"}`}},
		{name: "CanUseTool updatedInput and updates", call: bash, rules: askMode,
			ask:  &answer{a: Answer{Behavior: "allow", UpdatedInput: json.RawMessage(`{"command":"true"}`), UpdatedPermissions: upd}},
			want: want{Decision: engine.Decision{Allow: true, Source: "user", ReasonType: "user", Input: []byte(`{"command":"true"}`)}, Checked: true, CheckedInput: `{"command":"ls"}`, Asked: true, AskedInput: `{"command":"ls"}`, Applied: 1}},
		{name: "CanUseTool deny with interrupt", call: bash, rules: askMode,
			ask:  &answer{a: Answer{Behavior: "deny", Interrupt: true}},
			want: want{Decision: engine.Decision{Source: "user", ReasonType: "user", Message: "The user denied this Bash call.", Interrupt: true}, Checked: true, CheckedInput: `{"command":"ls"}`, Asked: true, AskedInput: `{"command":"ls"}`}},
		{name: "CanUseTool error denies", call: bash, rules: askMode, ask: &answer{err: errors.New("boom")},
			want: want{Decision: engine.Decision{Source: "user", ReasonType: "user", Message: "The permission check for Bash failed: boom"}, Checked: true, CheckedInput: `{"command":"ls"}`, Asked: true, AskedInput: `{"command":"ls"}`}},
		{name: "CanUseTool odd behavior denies", call: bash, rules: askMode, ask: &answer{a: Answer{Behavior: "maybe"}},
			want: want{Decision: engine.Decision{Source: "user", ReasonType: "user", Message: `The permission check for Bash answered "maybe"; want allow or deny.`}, Checked: true, CheckedInput: `{"command":"ls"}`, Asked: true, AskedInput: `{"command":"ls"}`}},
		{name: "sandbox allows an undecided Bash call", call: bash, rules: askMode, sandbox: true,
			want: want{Decision: engine.Decision{Allow: true, Source: "config", ReasonType: "sandbox"}, Checked: true, CheckedInput: `{"command":"ls"}`}},
		{name: "defer on the only call", call: bash, rules: allowMode, pre: hooks.PreToolUseResult{Decision: hooks.Defer, Reason: "later"},
			want: want{Decision: engine.Decision{Defer: true, Source: "hook", ReasonType: "hook"}}},
		{name: "defer with two calls is a denial and a diagnostic", call: pair, rules: allowMode, pre: hooks.PreToolUseResult{Decision: hooks.Defer, Reason: "later"},
			want: want{Decision: engine.Decision{Source: "hook", ReasonType: "hook", Quiet: true, Message: "PreToolUse:Bash hook error: later"}, Diags: 1}},
		{name: "defer in a subagent is a denial and a diagnostic", call: sub, rules: allowMode, pre: hooks.PreToolUseResult{Decision: hooks.Defer},
			want: want{Decision: engine.Decision{Source: "hook", ReasonType: "hook", Quiet: true, Message: "PreToolUse:Bash hook error: Deferred by hook"}, Diags: 1}},
		{name: "hook halt and context ride along", call: bash, rules: allowMode,
			pre:  hooks.PreToolUseResult{Common: hooks.Common{Halt: true, StopReason: "enough"}, AdditionalContext: []string{"note"}},
			want: want{Decision: engine.Decision{Allow: true, Source: "config", ReasonType: "mode", Halt: &engine.Halt{Reason: "enough"}, Context: []string{"note"}}, Checked: true, CheckedInput: `{"command":"ls"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &checker{d: tt.rules}
			var got want
			a := &Authorizer{
				PreToolUse:    func(context.Context, Call) hooks.PreToolUseResult { return tt.pre },
				Checker:       c,
				SandboxAllows: func(json.RawMessage, permission.Decision) bool { return tt.sandbox },
				PermissionRequest: func(context.Context, Call, json.RawMessage, []settings.PermissionUpdate) hooks.PermissionRequestResult {
					return tt.pr
				},
				Apply: func(ups []settings.PermissionUpdate) error { got.Applied += len(ups); return tt.applyErr },
				Diag:  func(string) { got.Diags++ },
			}
			if tt.ask != nil {
				a.CanUseTool = func(_ context.Context, r Request) (Answer, error) {
					got.Asked, got.AskedInput = true, string(r.Input)
					return tt.ask.a, tt.ask.err
				}
			}
			o := a.Decide(context.Background(), &tt.call)
			got.Decision = o.Decision
			if len(c.calls) > 0 {
				got.Checked, got.CheckedInput = true, string(c.calls[0].Input)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(engine.Halt{})); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecideMinimal checks the nil collaborators: only a checker, nobody
// to ask, nowhere to apply updates.
func TestDecideMinimal(t *testing.T) {
	a := &Authorizer{Checker: &checker{d: askMode}}
	o := a.Decide(context.Background(), &Call{ID: "t", Name: "Write", Input: json.RawMessage(`{}`)})
	if o.Allow || o.Message != "mode: nobody to ask" {
		t.Errorf("undecided call with nobody to ask: got %+v, want a denial with the checker's message", o.Decision)
	}
	a.CanUseTool = func(context.Context, Request) (Answer, error) {
		return Answer{Behavior: "allow", UpdatedPermissions: []settings.PermissionUpdate{{Type: "setMode"}}}, nil
	}
	o = a.Decide(context.Background(), &Call{ID: "t", Name: "Write", Input: json.RawMessage(`{}`)})
	if o.Allow || !strings.Contains(o.Message, "cannot apply") {
		t.Errorf("allow with updates and no applier: got %+v, want a denial saying the updates cannot be applied", o.Decision)
	}
}
