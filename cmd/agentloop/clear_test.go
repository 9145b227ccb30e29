package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// /clear on a resumed session prints conversation_reset and goes on under
// a new session id, whose transcript holds only what follows; the old id
// still resumes the old conversation.
func TestClearCommandCLI(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("First answer."), agentlooptest.Text("Fresh answer."), agentlooptest.Text("Old again."))
	code, out, errOut := runCLI(t, srv, "", "-p", "OLD-HELLO", "--output-format", "json")
	var first struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal([]byte(out), &first); err != nil || code != 0 {
		t.Fatalf("exit %d, %q %q: %v", code, out, errOut, err)
	}
	code, out, errOut = runCLI(t, srv, "", "-p", "/clear", "--resume", first.SessionID, "--output-format", "stream-json", "--verbose")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var reset, result map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		switch m["type"] {
		case "conversation_reset":
			reset = m
		case "result":
			result = m
		}
	}
	newID, _ := reset["new_conversation_id"].(string)
	if reset == nil || reset["session_id"] != first.SessionID || reset["trigger"] != "clear" || newID == "" || newID == first.SessionID {
		t.Fatalf("conversation_reset %v (old id %s)", reset, first.SessionID)
	}
	if result["session_id"] != newID {
		t.Errorf("result session %v, want %s", result["session_id"], newID)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("/clear sent %d requests", n-1)
	}
	if code, _, errOut = runCLI(t, srv, "", "-p", "NEW-HELLO", "--resume", newID); code != 0 {
		t.Fatalf("resume %s: exit %d: %s", newID, code, errOut)
	}
	if text := srv.LastRequest().LastUserText(); strings.Contains(string(srv.LastRequest().Body), "OLD-HELLO") || !strings.Contains(text, "NEW-HELLO") {
		t.Errorf("the new conversation carries the old one: %.300s", srv.LastRequest().Body)
	}
	if code, _, errOut = runCLI(t, srv, "", "-p", "again", "--resume", first.SessionID); code != 0 {
		t.Fatalf("resume %s: exit %d: %s", first.SessionID, code, errOut)
	}
	if !strings.Contains(string(srv.LastRequest().Body), "OLD-HELLO") {
		t.Error("the old id no longer resumes the old conversation")
	}
}
