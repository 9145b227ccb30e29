package authorize

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/permission"
	"github.com/agentloop/agentloop/settings"
)

// TestBlockNotLifted: a denial of the block settings stands against a
// PreToolUse hook's allow or ask, a PermissionRequest hook's or
// CanUseTool's allow that rewrites the input to a blocked one; a blocked
// Bash ask is never settled by a hook's allow or the sandbox.
func TestBlockNotLifted(t *testing.T) {
	blockedDeny := permission.Decision{Behavior: permission.Deny, ReasonType: permission.ReasonWorkingDir,
		Message: "blocked write", Blocked: true}
	blockedAsk := permission.Decision{Behavior: permission.Ask, ReasonType: permission.ReasonWorkingDir,
		Message: "blocked read", Blocked: true}
	write := Call{ID: "w", Name: "Write", Input: json.RawMessage(`{"file_path":"/out/x","content":""}`)}
	inside := Call{ID: "w", Name: "Write", Input: json.RawMessage(`{"file_path":"/in/x","content":""}`)}
	bash := Call{ID: "b", Name: "Bash", Input: json.RawMessage(`{"command":"cat /out/x"}`)}
	blocked := func(c permission.Call) permission.Decision {
		if strings.Contains(string(c.Input), "/out/") {
			if c.Tool == "Bash" {
				return blockedAsk
			}
			return blockedDeny
		}
		return permission.Decision{}
	}
	cases := []struct {
		name      string
		call      Call
		checked   permission.Decision
		pre       hooks.Decision
		pr        hooks.PermissionRequestResult
		answer    Answer
		sandbox   bool
		wantAllow bool
		wantAsked bool
	}{
		{name: "hook allow", call: write, checked: blockedDeny, pre: hooks.Allow},
		{name: "hook ask", call: write, checked: askMode, pre: hooks.Ask, answer: Answer{Behavior: "allow"}},
		{name: "callback rewrites into the block", call: inside, checked: askMode,
			answer: Answer{Behavior: "allow", UpdatedInput: json.RawMessage(`{"file_path":"/out/y","content":""}`)}, wantAsked: true},
		{name: "PermissionRequest hook rewrites into the block", call: inside, checked: askMode,
			pr: hooks.PermissionRequestResult{Decision: hooks.Allow, UpdatedInput: json.RawMessage(`{"file_path":"/out/y","content":""}`)}},
		{name: "bash: hook allow still asks", call: bash, checked: blockedAsk, pre: hooks.Allow,
			answer: Answer{Behavior: "deny"}, wantAsked: true},
		{name: "bash: sandbox does not settle it", call: bash, checked: blockedAsk, sandbox: true,
			answer: Answer{Behavior: "deny"}, wantAsked: true},
		{name: "bash: the person may allow", call: bash, checked: blockedAsk,
			answer: Answer{Behavior: "allow"}, wantAsked: true, wantAllow: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			az := &Authorizer{
				Checker: &checker{d: tc.checked},
				Blocked: blocked,
				PreToolUse: func(context.Context, Call) hooks.PreToolUseResult {
					return hooks.PreToolUseResult{Decision: tc.pre}
				},
				PermissionRequest: func(context.Context, Call, json.RawMessage, []settingsUpdate) hooks.PermissionRequestResult {
					return tc.pr
				},
				SandboxAllows: func(json.RawMessage, permission.Decision) bool { return tc.sandbox },
				CanUseTool: func(context.Context, Request) (Answer, error) {
					asked = true
					return tc.answer, nil
				},
			}
			o := az.Decide(context.Background(), &tc.call)
			if o.Allow != tc.wantAllow || asked != tc.wantAsked {
				t.Errorf("allow %v (%s), asked %v; want allow %v, asked %v", o.Allow, o.Message, asked, tc.wantAllow, tc.wantAsked)
			}
		})
	}
}

// TestDenyInsteadOfPrompting: what would be put to CanUseTool is denied,
// saying why, and CanUseTool is not called; the checker and the
// PermissionRequest hooks still decide first.
func TestDenyInsteadOfPrompting(t *testing.T) {
	bash := Call{ID: "b", Name: "Bash", Input: json.RawMessage(`{"command":"make"}`)}
	for _, tc := range []struct {
		name      string
		checked   permission.Decision
		pr        hooks.Decision
		wantAllow bool
	}{
		{name: "ask is denied", checked: askMode},
		{name: "ask rule is denied", checked: askRule},
		{name: "allow rule still allows", checked: allowRule, wantAllow: true},
		{name: "PermissionRequest hook still allows", checked: askMode, pr: hooks.Allow, wantAllow: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			az := &Authorizer{
				Checker:                &checker{d: tc.checked},
				DenyInsteadOfPrompting: true,
				PermissionRequest: func(context.Context, Call, json.RawMessage, []settingsUpdate) hooks.PermissionRequestResult {
					return hooks.PermissionRequestResult{Decision: tc.pr}
				},
				CanUseTool: func(context.Context, Request) (Answer, error) {
					asked = true
					return Answer{Behavior: "allow"}, nil
				},
			}
			o := az.Decide(context.Background(), &bash)
			if asked {
				t.Error("CanUseTool was called")
			}
			if o.Allow != tc.wantAllow {
				t.Errorf("allow = %v (%s), want %v", o.Allow, o.Message, tc.wantAllow)
			}
			if !o.Allow && !strings.Contains(o.Message, "permissions.denyInsteadOfPrompting") {
				t.Errorf("message %q does not name the setting", o.Message)
			}
		})
	}
}

type settingsUpdate = settings.PermissionUpdate
