package compact

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// TestEstimateMatchesJSON: the estimate is a quarter of the messages'
// JSON as encoding/json writes it, however it is computed.
func TestEstimateMatchesJSON(t *testing.T) {
	isErr := true
	msgs := []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("hello \"world\" <tag> é\n")}},
		{Role: "assistant", Content: []model.Content{model.TextBlock("calling"),
			{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: json.RawMessage(`{"file_path": "/a/b"}`)}}},
		{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "toolu_1", Text: "line 1\nline 2", IsError: &isErr}}},
	}
	var n int
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		n += len(b)
	}
	if got, want := Estimate(msgs), int64(n/4); got != want {
		t.Errorf("Estimate = %d, want %d (%d bytes of JSON)", got, want, n)
	}
}
