package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRunServesScriptAndRecords drives the command end to end: it prints
// its URL, answers from the script (main queue, then side router for a
// request without tools), records every request, and exits on stdin EOF.
func TestRunServesScriptAndRecords(t *testing.T) {
	dir := t.TempDir()
	scriptPath := filepath.Join(dir, "script.json")
	recordPath := filepath.Join(dir, "rec.jsonl")
	script := `{"replies":[{"tool_use":{"id":"toolu_1","name":"Read","input":{"file_path":"/x"}}},{"text":"bye"}],"side":{"text":"side"}}`
	if err := os.WriteFile(scriptPath, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- run(scriptPath, recordPath, stdinR, stdoutW) }()
	url, err := bufio.NewReader(stdoutR).ReadString('\n')
	if err != nil {
		t.Fatalf("read URL: %v", err)
	}
	url = strings.TrimSpace(url)

	post := func(body string) map[string]any {
		t.Helper()
		resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("decode answer: %v", err)
		}
		return m
	}
	tools := `"tools":[{"name":"Read","input_schema":{"type":"object"}}]`
	first := post(`{"model":"m","max_tokens":10,` + tools + `,"messages":[{"role":"user","content":"hi"}]}`)
	side := post(`{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"title?"}]}`)
	second := post(`{"model":"m","max_tokens":10,` + tools + `,"messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/x"}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"data"}]}]}`)
	if got := first["stop_reason"]; got != "tool_use" {
		t.Errorf("first stop_reason = %v, want tool_use", got)
	}
	if got := side["content"].([]any)[0].(map[string]any)["text"]; got != "side" {
		t.Errorf("side text = %v, want side", got)
	}
	if got := second["content"].([]any)[0].(map[string]any)["text"]; got != "bye" {
		t.Errorf("second text = %v, want bye", got)
	}

	stdinW.Close()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	data, err := os.ReadFile(recordPath)
	if err != nil {
		t.Fatal(err)
	}
	var got []recorded
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r recorded
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("record line %q: %v", line, err)
		}
		r.Body = nil
		got = append(got, r)
	}
	want := []recorded{
		{Kind: "main", Method: "POST", Path: "/v1/messages", Model: "m", LastUser: "hi", Tools: []string{"Read"}, Messages: 1},
		{Kind: "routed", Method: "POST", Path: "/v1/messages", Model: "m", LastUser: "title?", Messages: 1},
		{Kind: "main", Method: "POST", Path: "/v1/messages", Model: "m", Tools: []string{"Read"}, Messages: 3,
			ToolResults: []recordedTR{{ToolUseID: "toolu_1", Text: "data"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
}

func TestRunRejectsBadScripts(t *testing.T) {
	for name, script := range map[string]string{
		"unknown field":        `{"replys":[]}`,
		"empty reply":          `{"replies":[{}]}`,
		"empty block":          `{"replies":[{"blocks":[{}]}]}`,
		"not json":             `[`,
		"negative chunk":       `{"replies":[{"text":"x","chunk":-1}]}`,
		"negative event delay": `{"replies":[{"text":"x","event_delay_ms":-5}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "s.json")
			if err := os.WriteFile(p, []byte(script), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := run(p, "", strings.NewReader(""), io.Discard); err == nil {
				t.Error("run accepted a bad script")
			}
		})
	}
}

// FuzzReplySpec checks that no script reply, however malformed, panics
// when it is turned into an agentlooptest.Reply.
func FuzzReplySpec(f *testing.F) {
	f.Add(`{"text":"hi"}`)
	f.Add(`{"tool_use":{"id":"a","name":"Read","input":{"x":1}}}`)
	f.Add(`{"blocks":[{"thinking":"t"},{"text":"x"}],"usage":{"input_tokens":5}}`)
	f.Add(`{"error":{"status":529}}`)
	f.Add(`{"tool_use":{"input":"not an object"}}`)
	f.Fuzz(func(t *testing.T, s string) {
		var r replySpec
		if json.Unmarshal([]byte(s), &r) != nil {
			return
		}
		_, _ = r.reply()
	})
}
