package openai_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/model/openai"
	"github.com/agentloop/agentloop/settings"
)

// loopOptions returns the options of an isolated run whose model is the
// fake server behind an openai.Provider.
func loopOptions(t *testing.T, f *openai.FakeServer) *agentloop.Options {
	t.Helper()
	zero := 0
	p, err := openai.New(&openai.Options{APIKey: "sk-test", BaseURL: f.BaseURL(), Model: "gpt-test", MaxRetries: &zero})
	if err != nil {
		t.Fatal(err)
	}
	return &agentloop.Options{Provider: p, Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
}

func result(t *testing.T, msgs []agentloop.Message) *agentloop.ResultMessage {
	t.Helper()
	if len(msgs) == 0 {
		t.Fatal("no messages")
	}
	res, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if !ok {
		t.Fatalf("last message %T, want a result", msgs[len(msgs)-1])
	}
	return res
}

// TestLoopReadTool: the loop runs a Read the model asked for through the
// provider, sends the file back as a tool message with the call's id, and
// ends with the model's final text.
func TestLoopReadTool(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "note.txt")
	if err := os.WriteFile(path, []byte("the secret is 42\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]string{"file_path": path})
	f := openai.NewFakeServer(t, openai.ToolReply("call_read_1", "Read", string(args)), openai.TextReply("The secret ", "is 42."))
	o := loopOptions(t, f)
	o.AdditionalDirectories = []string{dir}
	msgs, err := agentloop.Query(context.Background(), "What is the secret in note.txt?", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := result(t, msgs)
	if res.Subtype != "success" || res.Text() != "The secret is 42." || res.NumTurns != 2 {
		t.Errorf("result %s %q after %d turns, want success with the final text after 2", res.Subtype, res.Text(), res.NumTurns)
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	if reqs[0].Body.Model != "gpt-test" || !contains(reqs[0].ToolNames(), "Read") {
		t.Errorf("first request: model %q, tools %v", reqs[0].Body.Model, reqs[0].ToolNames())
	}
	tm := reqs[1].ToolMessages()
	if len(tm) != 1 || tm[0].ToolCallID != "call_read_1" || !strings.Contains(openai.ContentText(tm[0]), "the secret is 42") ||
		strings.HasPrefix(openai.ContentText(tm[0]), openai.ToolErrorPrefix) {
		t.Errorf("tool messages of the second request:\n%s", reqs[1].MessagesJSON())
	}
}

// TestLoopDeniedTool: a call the permission rules deny reaches the server
// as a tool message marked as an error.
func TestLoopDeniedTool(t *testing.T) {
	f := openai.NewFakeServer(t, openai.ToolReply("call_bash_1", "Bash", `{"command":"rm -rf build"}`), openai.TextReply("Understood."))
	o := loopOptions(t, f)
	o.DisallowedTools = []string{"Bash(rm:*)"}
	msgs, err := agentloop.Query(context.Background(), "Clean the build", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if res := result(t, msgs); res.Text() != "Understood." {
		t.Errorf("result %q", res.Text())
	}
	reqs := f.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	tm := reqs[1].ToolMessages()
	if len(tm) != 1 || tm[0].ToolCallID != "call_bash_1" || !strings.HasPrefix(openai.ContentText(tm[0]), openai.ToolErrorPrefix) {
		t.Errorf("the denial is not an error tool message:\n%s", reqs[1].MessagesJSON())
	}
}

// TestLoopStructuredOutput: structured output works through the provider:
// the schema goes out as a function tool and the model's call to it is
// the run's structured result.
func TestLoopStructuredOutput(t *testing.T) {
	schema := `{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`
	f := openai.NewFakeServer(t, openai.ToolReply("call_so_1", "StructuredOutput", `{"answer":42}`))
	o := loopOptions(t, f)
	o.Tools = []string{}
	o.OutputFormat = &agentloop.OutputFormat{Type: "json_schema", Schema: json.RawMessage(schema)}
	msgs, err := agentloop.Query(context.Background(), "What is six times seven?", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := result(t, msgs)
	var got struct {
		Answer int `json:"answer"`
	}
	if err := json.Unmarshal(res.StructuredOutput, &got); err != nil || got.Answer != 42 {
		t.Errorf("structured output %s (%v), want {\"answer\":42}", res.StructuredOutput, err)
	}
	reqs := f.Requests()
	var params json.RawMessage
	for _, tl := range reqs[0].Body.Tools {
		if tl.Function.Name == "StructuredOutput" {
			params = tl.Function.Parameters
		}
	}
	if params == nil || !strings.Contains(string(params), `"answer"`) {
		t.Errorf("StructuredOutput tool not sent with the schema: %v", reqs[0].ToolNames())
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestLoopPartialMessages: with partial messages on, the synthesized
// stream events reach the caller in the Messages API's order, and the
// assistant message is assembled from the reply.
func TestLoopPartialMessages(t *testing.T) {
	f := openai.NewFakeServer(t, openai.FakeReply{Chunks: []string{
		openai.ReasoningChunk("thinking it over"), openai.TextChunk("Hi "), openai.TextChunk("there."),
		openai.FinishChunk("stop"), openai.UsageChunk(30, 4, 10)}})
	o := loopOptions(t, f)
	o.IncludePartialMessages = true
	msgs, err := agentloop.Query(context.Background(), "Say hi", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	var assistant *agentloop.AssistantMessage
	for _, m := range msgs {
		switch m := m.(type) {
		case *agentloop.StreamEventMessage:
			types = append(types, m.EventType())
		case *agentloop.AssistantMessage:
			if assistant == nil {
				assistant = m
			}
		}
	}
	want := []string{"message_start", "content_block_start", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if strings.Join(types, " ") != strings.Join(want, " ") {
		t.Errorf("stream events\n got %v\nwant %v", types, want)
	}
	if assistant == nil {
		t.Fatal("no assistant message")
	}
	res := result(t, msgs)
	if res.Text() != "Hi there." || res.Usage.InputTokens != 20 || res.Usage.CacheReadInputTokens != 10 || res.Usage.OutputTokens != 4 {
		t.Errorf("result %q usage %+v, want the text and 20 input, 10 cache read, 4 output", res.Text(), res.Usage)
	}
}
