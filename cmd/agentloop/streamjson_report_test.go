package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// TestStreamJSONBridgeReports: a bridge's problem (here a can_use_tool
// answer the host got wrong) is a diagnostic line in the session's
// stream, not only a line on stderr.
func TestStreamJSONBridgeReports(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": "x.txt", "content": "x\n"}),
		agentlooptest.Text("done"))
	s := startSJ(t, srv, "--permission-prompt-tool", "stdio")
	s.send(initLine("init1", ""))
	s.send(userLine("write a file"))
	req := s.until(`"subtype":"can_use_tool"`)
	var r struct {
		RequestID string `json:"request_id"`
	}
	if err := json.Unmarshal([]byte(req), &r); err != nil {
		t.Fatal(err)
	}
	s.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + r.RequestID + `","response":{"behavior":"perhaps"}}}`)
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	found := false
	for _, l := range s.seen {
		if strings.Contains(l, `"subtype":"informational"`) && strings.Contains(l, `"tag":"can_use_tool_failed"`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no can_use_tool_failed diagnostic in the stream:\n%s", strings.Join(s.seen, "\n"))
	}
}

// TestStreamJSONAgentPrompt: with --agent, the agent (here defined in
// initialize) gives the main thread its prompt, in place of the SDK's
// empty systemPrompt.
func TestStreamJSONAgentPrompt(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	s := startSJ(t, srv, "--agent", "chef")
	s.send(initLine("init1", `"agents":{"chef":{"description":"Cooks.","prompt":"You are CHEF-7, a cook."}}`))
	s.send(userLine("cook"))
	s.until(`"type":"result"`)
	if code := s.finish(); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, s.stderr.String())
	}
	if sys := srv.Requests()[0].SystemText(); !strings.Contains(sys, "CHEF-7") {
		t.Errorf("system prompt %.300q lacks the agent's prompt", sys)
	}
}
