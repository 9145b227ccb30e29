package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// bridgeHost is a fake host for the bridges: it records each control
// request and answers it with answer (a success payload, or an error
// such as a *hostError). It also collects the bridges' reports.
type bridgeHost struct {
	answer func(subtype string, body map[string]any) (json.RawMessage, error)

	mu      sync.Mutex
	calls   []bridgeCall
	reports []string // "tag: text"
}

type bridgeCall struct {
	Subtype string
	Body    map[string]any
}

func (h *bridgeHost) Call(ctx context.Context, subtype string, req any) (json.RawMessage, error) {
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		return nil, err
	}
	h.mu.Lock()
	h.calls = append(h.calls, bridgeCall{subtype, body})
	h.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return h.answer(subtype, body)
}

func (h *bridgeHost) bridgeReport(tag, text string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reports = append(h.reports, tag+": "+text)
}

func (h *bridgeHost) snapshot() ([]bridgeCall, []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]bridgeCall(nil), h.calls...), append([]string(nil), h.reports...)
}

// answerWith answers every request with payload (JSON) or err.
func answerWith(payload string, err error) func(string, map[string]any) (json.RawMessage, error) {
	return func(string, map[string]any) (json.RawMessage, error) {
		if err != nil {
			return nil, err
		}
		return json.RawMessage(payload), nil
	}
}

func bridgeProvider(t *testing.T, srv *agentlooptest.Server) model.Provider {
	t.Helper()
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCanUseToolBridgeAnswers: each answer shape of the TS SDK becomes
// the matching PermissionResult; a host error or a malformed answer
// denies with a message and a report.
func TestCanUseToolBridgeAnswers(t *testing.T) {
	hostErr := &hostError{Subtype: "can_use_tool", Message: "callback threw"}
	for _, tc := range []struct {
		name    string
		payload string
		err     error
		want    agentloop.PermissionResult
		deny    string // for failures: text the deny message must contain
		reports int
	}{
		{name: "allow", payload: `{"behavior":"allow","toolUseID":"toolu_1"}`,
			want: agentloop.PermissionResult{Behavior: "allow"}},
		{name: "allow updatedInput", payload: `{"behavior":"allow","updatedInput":{"file_path":"/x/changed.txt","content":"new\n"},"toolUseID":"toolu_1"}`,
			want: agentloop.PermissionResult{Behavior: "allow", UpdatedInput: json.RawMessage(`{"file_path":"/x/changed.txt","content":"new\n"}`)}},
		{name: "allow updatedPermissions", payload: `{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"acceptEdits","destination":"session"}],"toolUseID":"toolu_1"}`,
			want: agentloop.PermissionResult{Behavior: "allow", UpdatedPermissions: []agentloop.PermissionUpdate{{Type: settings.SetMode, Mode: "acceptEdits", Destination: settings.Session}}}},
		{name: "deny", payload: `{"behavior":"deny","message":"No writes today","interrupt":false,"toolUseID":"toolu_1"}`,
			want: agentloop.PermissionResult{Behavior: "deny", Message: "No writes today"}},
		{name: "deny interrupt", payload: `{"behavior":"deny","message":"Stop","interrupt":true}`,
			want: agentloop.PermissionResult{Behavior: "deny", Message: "Stop", Interrupt: true}},
		{name: "host error", err: hostErr, deny: "answered with an error", reports: 1},
		{name: "host gone", err: errHostGone, deny: "could not be asked", reports: 1},
		{name: "bad behavior", payload: `{"behavior":"maybe"}`, deny: "malformed", reports: 1},
		{name: "not an object", payload: `"allow"`, deny: "malformed", reports: 1},
		{name: "deny without message", payload: `{"behavior":"deny"}`, deny: "malformed", reports: 1},
		{name: "updatedInput not object", payload: `{"behavior":"allow","updatedInput":[1]}`, deny: "malformed", reports: 1},
		{name: "unknown update type", payload: `{"behavior":"allow","updatedPermissions":[{"type":"grantAll","destination":"session"}]}`, deny: "grantAll", reports: 1},
		{name: "unknown update member", payload: `{"behavior":"allow","updatedPermissions":[{"type":"setMode","mode":"plan","destination":"session","forever":true}]}`, deny: "forever", reports: 1},
		{name: "other call's id", payload: `{"behavior":"allow","toolUseID":"toolu_9"}`, deny: "toolu_9", reports: 1},
		{name: "deny with updatedInput", payload: `{"behavior":"deny","message":"no","updatedInput":{}}`, deny: "malformed", reports: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &bridgeHost{answer: answerWith(tc.payload, tc.err)}
			got, err := canUseToolBridge(h)(context.Background(), agentloop.PermissionRequest{
				ToolName: "Write", Input: json.RawMessage(`{"file_path":"/x/a.txt","content":"a"}`), ToolUseID: "toolu_1"})
			if err != nil {
				t.Fatalf("error %v; want an answer", err)
			}
			_, reports := h.snapshot()
			if len(reports) != tc.reports {
				t.Errorf("reports = %q, want %d", reports, tc.reports)
			}
			if tc.deny != "" {
				if got.Behavior != "deny" || !strings.Contains(got.Message, tc.deny) || got.Interrupt {
					t.Errorf("result = %+v; want a deny naming %q", got, tc.deny)
				}
				return
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCanUseToolBridgeRequest: the request carries the call's fields in
// the wire's names; an unhonoured member of the answers is reported once.
func TestCanUseToolBridgeRequest(t *testing.T) {
	h := &bridgeHost{answer: answerWith(`{"behavior":"allow","decisionClassification":"user_temporary"}`, nil)}
	can := canUseToolBridge(h)
	req := agentloop.PermissionRequest{ToolName: "Bash", Input: json.RawMessage(`{"command":"ls"}`), ToolUseID: "toolu_7",
		Suggestions:    []agentloop.PermissionUpdate{{Type: settings.AddRules, Rules: []settings.RuleValue{{ToolName: "Bash", RuleContent: "ls:*"}}, Behavior: settings.Allow, Destination: settings.LocalSettings}},
		BlockedPath:    "/etc/x",
		DecisionReason: "no rule allows it",
		AgentID:        "agent-1"}
	for range 2 {
		if res, err := can(context.Background(), req); err != nil || res.Behavior != "allow" {
			t.Fatalf("answer = %+v, %v", res, err)
		}
	}
	calls, reports := h.snapshot()
	want := map[string]any{
		"tool_name": "Bash", "input": map[string]any{"command": "ls"}, "tool_use_id": "toolu_7",
		"permission_suggestions": []any{map[string]any{"type": "addRules", "rules": []any{map[string]any{"toolName": "Bash", "ruleContent": "ls:*"}},
			"behavior": "allow", "destination": "localSettings"}},
		"blocked_path": "/etc/x", "decision_reason": "no rule allows it", "agent_id": "agent-1",
	}
	if calls[0].Subtype != "can_use_tool" {
		t.Errorf("subtype %q", calls[0].Subtype)
	}
	if diff := cmp.Diff(want, calls[0].Body); diff != "" {
		t.Errorf("request body (-want +got):\n%s", diff)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "decisionClassification") || !strings.HasPrefix(reports[0], agentloop.DiagOption) {
		t.Errorf("reports = %q; want decisionClassification reported once", reports)
	}
}

// TestCanUseToolBridgeCancelled: when the run is cancelled while the host
// is asked, the callback returns the cancellation, not a report.
func TestCanUseToolBridgeCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	h := &bridgeHost{answer: func(string, map[string]any) (json.RawMessage, error) {
		cancel()
		return nil, context.Canceled
	}}
	_, err := canUseToolBridge(h)(ctx, agentloop.PermissionRequest{ToolName: "Write", Input: json.RawMessage(`{}`)})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if _, reports := h.snapshot(); len(reports) != 0 {
		t.Errorf("reports = %q, want none", reports)
	}
}

// TestCanUseToolBridgeLoop: through the real loop, an allow with
// updatedInput writes the file the host chose; a deny with interrupt ends
// the run without writing.
func TestCanUseToolBridgeLoop(t *testing.T) {
	cwd := t.TempDir()
	asked := filepath.Join(cwd, "asked.txt")
	changed := filepath.Join(cwd, "changed.txt")
	run := func(t *testing.T, answer string) (*agentloop.ResultMessage, *bridgeHost) {
		h := &bridgeHost{answer: answerWith(answer, nil)}
		srv := agentlooptest.NewTB(t,
			agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": asked, "content": "from the model\n"}),
			agentlooptest.Text("done"))
		res, err := agentloop.Query(context.Background(), "write it", &agentloop.Options{
			Provider: bridgeProvider(t, srv), Cwd: cwd, Tools: []string{"Write"},
			CanUseTool: canUseToolBridge(h), SettingSources: []settings.SettingSource{}}).Result()
		if err != nil && res == nil {
			t.Fatal(err)
		}
		return res, h
	}
	t.Run("allow updatedInput", func(t *testing.T) {
		upd, _ := json.Marshal(map[string]any{"behavior": "allow", "updatedInput": map[string]any{"file_path": changed, "content": "rewritten by the host\n"}})
		res, h := run(t, string(upd))
		if res.IsError {
			t.Fatalf("result is an error: %+v", res)
		}
		if b, err := os.ReadFile(changed); err != nil || string(b) != "rewritten by the host\n" {
			t.Errorf("changed.txt = %q, %v", b, err)
		}
		if _, err := os.Stat(asked); err == nil {
			t.Error("the model's path was written too")
		}
		if calls, _ := h.snapshot(); len(calls) != 1 || calls[0].Body["tool_name"] != "Write" {
			t.Errorf("calls = %+v", calls)
		}
	})
	t.Run("deny interrupt", func(t *testing.T) {
		res, _ := run(t, `{"behavior":"deny","message":"No writes today","interrupt":true}`)
		if _, err := os.Stat(asked); err == nil {
			t.Error("a denied write happened")
		}
		if !res.IsError {
			t.Errorf("result %+v; want an error result after an interrupting deny", res)
		}
	})
}
