package conversation

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/go-cmp/cmp"
)

// resumeHistory puts the last reply's calls back, and tells a deferral (a
// result written after the reply) from a crash in the middle of a tool
// round, whose calls the next run answers as interrupted.
func TestResumeHistoryPendingCall(t *testing.T) {
	prompt := sessions.Entry{Type: sessions.TypeUser, UUID: "u1",
		Message: &sessions.Message{Role: "user", Content: []model.Content{model.TextBlock("go")}}}
	use := model.Content{Type: model.TypeToolUse, ID: "toolu_1", Name: "Write", Input: json.RawMessage(`{}`)}
	text := sessions.Entry{Type: sessions.TypeAssistant, UUID: "a1", ParentUUID: "u1",
		Message: &sessions.Message{ID: "m1", Role: "assistant", Model: "claude-opus-5-5", Content: []model.Content{model.TextBlock("writing")}}}
	call := sessions.Entry{Type: sessions.TypeAssistant, UUID: "a2", ParentUUID: "a1",
		Message: &sessions.Message{ID: "m1", Role: "assistant", Model: "claude-opus-5-5", Content: []model.Content{use}}}
	bare := call
	bare.ParentUUID = "u1"
	cost := sessions.Entry{Type: sessions.TypeCostState, Cost: &sessions.CostState{}}
	user := model.Message{Role: "user", Content: []model.Content{model.TextBlock("go")}}
	for _, tc := range []struct {
		name    string
		entries []sessions.Entry
		want    []model.Message
		crashed bool
	}{
		{name: "deferred after text", entries: []sessions.Entry{prompt, text, call, cost},
			want: []model.Message{user, {Role: "assistant", Content: []model.Content{model.TextBlock("writing"), use}}}},
		{name: "deferred alone", entries: []sessions.Entry{prompt, bare, cost},
			want: []model.Message{user, {Role: "assistant", Content: []model.Content{use}}}},
		{name: "crashed", entries: []sessions.Entry{prompt, text, call}, crashed: true,
			want: []model.Message{user, {Role: "assistant", Content: []model.Content{model.TextBlock("writing"), use}}}},
		{name: "cost before the reply", entries: []sessions.Entry{prompt, cost, bare}, crashed: true,
			want: []model.Message{user, {Role: "assistant", Content: []model.Content{use}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, crashed := resumeHistory(sessions.NewTranscript(tc.entries))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("resumeHistory (-want +got):\n%s", diff)
			}
			if crashed != tc.crashed {
				t.Errorf("crashed = %v, want %v", crashed, tc.crashed)
			}
		})
	}
}
