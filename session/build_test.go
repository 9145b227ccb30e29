package session

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// A prompt of one text block is written as a string and an interrupt's
// marker as a list of one text block, as the reference writes them
// (cmd/agentloop testdata/subagents: a subagent's prompt and marker; the
// main transcript does the same).
func TestUserEntryContentForm(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Review the code.", `"Review the code."`},
		{"[Request interrupted by user for tool use]", `[{"text":"[Request interrupted by user for tool use]","type":"text"}]`},
		{"[Request interrupted by user]", `[{"text":"[Request interrupted by user]","type":"text"}]`},
	}
	for _, tc := range tests {
		e := UserEntry(&message.User{Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock(tc.text)}}}, "default")
		b, err := e.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		var line struct {
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal(b, &line); err != nil {
			t.Fatal(err)
		}
		if got := mustCompact(t, string(line.Message.Content)); got != mustCompact(t, tc.want) {
			t.Errorf("content of %q = %s, want %s", tc.text, got, tc.want)
		}
	}
}

func mustCompact(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
