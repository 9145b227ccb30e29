package session

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// cmpJSON compares JSON kept verbatim by meaning.
var cmpJSON = cmp.Options{
	cmp.FilterPath(func(p cmp.Path) bool { return p.Last().Type() != reflect.TypeFor[json.RawMessage]() }, cmpopts.EquateEmpty()),
	cmp.Comparer(func(a, b json.RawMessage) bool {
		if len(a) == 0 || len(b) == 0 {
			return len(a) == len(b)
		}
		var va, vb any
		if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
			return string(a) == string(b)
		}
		return cmp.Equal(va, vb)
	}),
}

func ptr[T any](v T) *T { return &v }

const testSID = "9d0c1f7e-5b2a-4c3d-8e9f-0a1b2c3d4e5f"

func assistantMsg(id, uuid string, block model.Content, stop string) *message.Assistant {
	return &message.Assistant{
		UUID: uuid, SessionID: testSID, RequestID: "req_" + id,
		Message: message.APIMessage{ID: id, Type: "message", Role: "assistant", Model: "claude-x",
			Content: []model.Content{block}, StopReason: ptr(stop), Usage: model.Usage{InputTokens: 10, OutputTokens: 5}},
	}
}

func toolResult(uuid, toolUseID, text string, structured any) *message.User {
	return &message.User{UUID: uuid, SessionID: testSID, ToolUseResult: structured,
		Message: message.UserContent{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: toolUseID, Text: text}}}}
}

var (
	thinking = model.Content{Type: model.TypeThinking, Thinking: "I need the file.", Signature: "EqQBCkYIBxgCKkA="}
	text1    = model.TextBlock("Let me read it.")
	use1     = model.Content{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path":"/p/x.txt"}`)}
	use2     = model.Content{Type: model.TypeToolUse, ID: "toolu_2", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)}
	final    = model.TextBlock("The file says x.")
)

func resultBlock(id, text string) model.Content {
	return model.Content{Type: model.TypeToolResult, ToolUseID: id, Text: text}
}

func TestHistoryRoundTrip(t *testing.T) {
	tests := []struct {
		name    string
		entries func() []Entry
		want    []model.Message
	}{{
		// An interrupted reply, its marker, the next prompt (the marker
		// then ends with a newline, as the reference sends it); after a
		// resume, the synthetic answer to the marker is kept.
		name: "interrupt markers",
		entries: func() []Entry {
			marker := func(uuid, text string) Entry {
				return UserEntry(&message.User{UUID: uuid, SessionID: testSID,
					Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock(text)}}}, "default")
			}
			noResponse := assistantMsg("msg_s", "a-s", model.TextBlock("No response requested."), "")
			noResponse.Message.Model = "<synthetic>"
			apiErr := assistantMsg("msg_e", "a-e", model.TextBlock("API Error: 500"), "")
			apiErr.Message.Model = "<synthetic>"
			return []Entry{
				PromptEntry("u-1", "count", "default"),
				AssistantEntry(assistantMsg("msg_1", "a-1", model.TextBlock("one two"), "")),
				marker("u-2", "[Request interrupted by user]"),
				PromptEntry("u-3", "again", "default"),
				AssistantEntry(assistantMsg("msg_2", "a-2", model.TextBlock("fine"), "end_turn")),
				marker("u-4", "[Request interrupted by user for tool use]"),
				AssistantEntry(noResponse),
				PromptEntry("u-5", "resumed", "default"),
				AssistantEntry(apiErr),
			}
		},
		want: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("count")}},
			{Role: "assistant", Content: []model.Content{model.TextBlock("one two")}},
			{Role: "user", Content: []model.Content{model.TextBlock("[Request interrupted by user]\n"), model.TextBlock("again")}},
			{Role: "assistant", Content: []model.Content{model.TextBlock("fine")}},
			{Role: "user", Content: []model.Content{model.TextBlock("[Request interrupted by user for tool use]")}},
			{Role: "assistant", Content: []model.Content{model.TextBlock("No response requested.")}},
			{Role: "user", Content: []model.Content{model.TextBlock("resumed")}},
		},
	}, {
		name: "thinking, text and tool uses of one reply, results, final text",
		entries: func() []Entry {
			return []Entry{
				PromptEntry("u-1", "Read x.txt", "default"),
				AssistantEntry(assistantMsg("msg_1", "a-1", thinking, "tool_use")),
				AssistantEntry(assistantMsg("msg_1", "a-2", text1, "tool_use")),
				AssistantEntry(assistantMsg("msg_1", "a-3", use1, "tool_use")),
				AssistantEntry(assistantMsg("msg_1", "a-4", use2, "tool_use")),
				UserEntry(toolResult("u-2", "toolu_1", "x", map[string]any{"type": "text"}), "default"),
				UserEntry(toolResult("u-3", "toolu_2", "x.txt", nil), "default"),
				AssistantEntry(assistantMsg("msg_2", "a-5", final, "end_turn")),
				LastPromptEntry("Read x.txt", ""),
			}
		},
		want: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("Read x.txt")}},
			{Role: "assistant", Content: []model.Content{thinking, text1, use1, use2}},
			{Role: "user", Content: []model.Content{resultBlock("toolu_1", "x"), resultBlock("toolu_2", "x.txt")}},
			{Role: "assistant", Content: []model.Content{final}},
		},
	}, {
		name: "a tool result written before the reply's next block",
		entries: func() []Entry {
			return []Entry{
				PromptEntry("u-1", "go", "default"),
				AssistantEntry(assistantMsg("msg_1", "a-1", use1, "tool_use")),
				UserEntry(toolResult("u-2", "toolu_1", "x", nil), "default"),
				AssistantEntry(assistantMsg("msg_1", "a-2", use2, "tool_use")),
				UserEntry(toolResult("u-3", "toolu_2", "y", nil), "default"),
				AssistantEntry(assistantMsg("msg_2", "a-3", final, "end_turn")),
			}
		},
		want: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("go")}},
			{Role: "assistant", Content: []model.Content{use1, use2}},
			{Role: "user", Content: []model.Content{resultBlock("toolu_1", "x"), resultBlock("toolu_2", "y")}},
			{Role: "assistant", Content: []model.Content{final}},
		},
	}, {
		name: "a tool use without result is dropped, the next prompt merges",
		entries: func() []Entry {
			return []Entry{
				PromptEntry("u-1", "read", "default"),
				AssistantEntry(assistantMsg("msg_1", "a-1", text1, "tool_use")),
				AssistantEntry(assistantMsg("msg_1", "a-2", use1, "tool_use")),
				PromptEntry("u-2", "never mind", "default"),
			}
		},
		want: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("read")}},
			{Role: "assistant", Content: []model.Content{text1}},
			{Role: "user", Content: []model.Content{model.TextBlock("never mind")}},
		},
	}, {
		name: "synthetic API error replies are not history",
		entries: func() []Entry {
			a := assistantMsg("e-1", "a-1", model.TextBlock("API Error: 500"), "stop_sequence")
			a.Message.Model = "<synthetic>"
			a.IsAPIErrorMessage, a.Error = true, "server_error"
			return []Entry{
				PromptEntry("u-1", "hello", "default"),
				APIErrorEntry(model.RetryInfo{Attempt: 1, MaxRetries: 10, Status: 500, Err: &model.APIError{Status: 500, Type: "api_error", Message: "boom"}}),
				AssistantEntry(a),
				PromptEntry("u-2", "again", "default"),
				AssistantEntry(assistantMsg("msg_1", "a-2", final, "end_turn")),
			}
		},
		want: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("hello"), model.TextBlock("again")}},
			{Role: "assistant", Content: []model.Content{final}},
		},
	}, {
		name: "meta prompts are history, thinking-only replies are not",
		entries: func() []Entry {
			meta := &message.User{UUID: "u-2", IsSynthetic: true, Message: message.UserContent{Role: "user",
				Content: []model.Content{model.TextBlock("You MUST call the tool.")}}}
			return []Entry{
				PromptEntry("u-1", "answer in JSON", "default"),
				AssistantEntry(assistantMsg("msg_1", "a-1", model.TextBlock("Sure"), "end_turn")),
				UserEntry(meta, "default"),
				AssistantEntry(assistantMsg("msg_2", "a-2", thinking, "max_tokens")),
			}
		},
		want: []model.Message{
			{Role: "user", Content: []model.Content{model.TextBlock("answer in JSON")}},
			{Role: "assistant", Content: []model.Content{model.TextBlock("Sure")}},
			{Role: "user", Content: []model.Content{model.TextBlock("You MUST call the tool.")}},
		},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), testSID+".jsonl")
			w, err := Create(p, Envelope{SessionID: testSID, Cwd: "/p", Version: "agentloop test"})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tc.entries() {
				if err := w.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			tr, err := Load(p)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tr.History(), cmpJSON); diff != "" {
				t.Errorf("History (-want +got):\n%s", diff)
			}
			if len(tr.Warnings) > 0 {
				t.Errorf("warnings: %v", tr.Warnings)
			}
		})
	}
}

func TestWriterLines(t *testing.T) {
	p := filepath.Join(t.TempDir(), testSID+".jsonl")
	w, err := Create(p, Envelope{SessionID: testSID, Cwd: "/p", Version: "agentloop test", GitBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	err = w.Append(
		PromptEntry("u-1", "Read x.txt", "acceptEdits"),
		AssistantEntry(assistantMsg("msg_1", "a-1", use1, "tool_use")),
		UserEntry(toolResult("u-2", "toolu_1", "x", map[string]any{"type": "text"}), "acceptEdits"),
		LastPromptEntry("Read x.txt", ""),
		CostStateEntry(CostState{TotalCostUSD: 0.5, ModelUsage: map[string]message.ModelUsage{"claude-x": {CostUSD: 0.5}}}),
	)
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	tr, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	es := tr.Entries
	if len(es) != 5 {
		t.Fatalf("%d entries, want 5", len(es))
	}
	// The envelope and the chain.
	for i, e := range es[:3] {
		if e.SessionID != testSID || e.Cwd != "/p" || e.Version != "agentloop test" || e.GitBranch != "main" ||
			e.UserType != "external" || e.Entrypoint != "sdk-go" || e.Timestamp == "" {
			t.Errorf("entry %d envelope = %+v", i, e)
		}
	}
	if es[0].ParentUUID != "" || es[1].ParentUUID != "u-1" || es[2].ParentUUID != "a-1" {
		t.Errorf("chain = %q, %q, %q", es[0].ParentUUID, es[1].ParentUUID, es[2].ParentUUID)
	}
	if !es[0].Message.StringContent || es[0].PermissionMode != "acceptEdits" {
		t.Errorf("prompt entry = %+v", es[0])
	}
	if es[2].SourceToolAssistantUUID != "a-1" || string(es[2].ToolUseResult) != `{"type":"text"}` || es[2].PermissionMode != "" {
		t.Errorf("tool result entry = %+v", es[2])
	}
	if es[3].LeafUUID != "u-2" || es[3].SessionID != testSID {
		t.Errorf("last-prompt = %+v", es[3])
	}
	if tr.Cost == nil || tr.Cost.TotalCostUSD != 0.5 {
		t.Errorf("cost = %+v", tr.Cost)
	}
	if es[1].RequestID != "req_msg_1" || es[1].Message.ID != "msg_1" || es[1].Message.Model != "claude-x" {
		t.Errorf("assistant entry = %+v", es[1])
	}
}
