package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// TestRouter checks the answer at each step of a two-tool-turn session:
// the step comes from the history's length, the tool calls follow the
// script, the text answer ends the session, and every reply carries the
// latency.
func TestRouter(t *testing.T) {
	route := router(script.WorkloadMixed, "/fx", 2, 200*time.Millisecond)
	type answer struct {
		Tool  string
		Input string
		Text  string
		Delay time.Duration
	}
	tests := []struct {
		messages int
		want     answer
	}{
		{1, answer{Tool: "Read", Input: `{"file_path":"/fx/pkg0/file00.go"}`, Delay: 200 * time.Millisecond}},
		{3, answer{Tool: "Grep", Input: `{"path":"/fx","pattern":"func [A-Z]\\w+Handler"}`, Delay: 200 * time.Millisecond}},
		{5, answer{Text: "done", Delay: 200 * time.Millisecond}},
		{0, answer{Text: "ok", Delay: 200 * time.Millisecond}}, // no tools: a helper call
	}
	for _, tt := range tests {
		req := &agentlooptest.Request{Params: model.Request{
			Messages: make([]model.Message, tt.messages),
		}}
		if tt.messages > 0 {
			req.Params.Tools = []model.ToolDef{{Name: "Read"}}
		}
		rep, ok := route(req)
		if !ok {
			t.Fatalf("%d messages: router declined", tt.messages)
		}
		if len(rep.Content) != 1 {
			t.Fatalf("%d messages: %d blocks, want 1", tt.messages, len(rep.Content))
		}
		b := rep.Content[0]
		got := answer{Tool: b.Name, Text: b.Text, Delay: rep.Delay}
		if b.Input != nil {
			var v any
			if err := json.Unmarshal(b.Input, &v); err != nil {
				t.Fatal(err)
			}
			in, _ := json.Marshal(v)
			got.Input = string(in)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%d messages (-want +got):\n%s", tt.messages, diff)
		}
	}
}

func TestCompat(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"context management", `{"model":"m","context_management":{"edits":[{"keep":"all"}]}}`, `{"model":"m"}`},
		{"system message", `{"messages":[{"role":"user","content":"a"},{"role":"system","content":"s"}]}`,
			`{"messages":[{"role":"user","content":"a"}]}`},
		{"nothing to do", `{"model":"m","messages":[{"role":"user","content":"a"}]}`, `{"model":"m","messages":[{"role":"user","content":"a"}]}`},
		{"not an object", `[1]`, `[1]`},
	}
	for _, tt := range tests {
		if got := string(compat([]byte(tt.in))); got != tt.want {
			t.Errorf("%s: compat = %s, want %s", tt.name, got, tt.want)
		}
	}
}
