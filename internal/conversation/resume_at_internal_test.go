package conversation

import (
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
)

// TestCheckDropsTurn: a cut may drop only messages of the named prompt's
// turn, which runs to the next prompt (tool results and meta lines are
// no prompts).
func TestCheckDropsTurn(t *testing.T) {
	entry := func(id, typ string, c model.Content) sessions.Entry {
		return sessions.Entry{UUID: id, Type: typ, Message: &sessions.Message{Role: typ, Content: []model.Content{c}}}
	}
	meta := entry("m2", "user", model.TextBlock("<system-reminder>"))
	meta.IsMeta = true
	full := []sessions.Entry{
		entry("p1", "user", model.TextBlock("one")), entry("a1", "assistant", model.TextBlock("A1")),
		meta, entry("p2", "user", model.TextBlock("two")),
		entry("a2", "assistant", model.Content{Type: model.TypeToolUse, ID: "t", Name: "Read"}),
		entry("r2", "user", model.Content{Type: model.TypeToolResult, ToolUseID: "t"}),
		entry("b2", "assistant", model.TextBlock("A2")),
		entry("p3", "user", model.TextBlock("three")), entry("a3", "assistant", model.TextBlock("A3")),
	}
	upTo := func(id string) []sessions.Entry {
		for i, e := range full {
			if e.UUID == id {
				return full[:i+1]
			}
		}
		t.Fatalf("no %s", id)
		return nil
	}
	for _, tc := range []struct {
		at, turn string
		want     string // "" accepted, else a piece of the refusal
	}{
		{"a3", "p3", ""},                 // nothing dropped
		{"b2", "p3", ""},                 // the last turn dropped
		{"p3", "p3", ""},                 // only its reply dropped
		{"a1", "p2", "after the turn"},   // the turn of three too
		{"a2", "p2", "after the turn"},   // within p2, but p3 as well
		{"p1", "p2", "before the turn"},  // A1 belongs to p1's turn
		{"b2", "nope", "no prompt nope"}, // no such prompt
		{"r2", "r2", "no prompt r2"},     // a tool result is no prompt
	} {
		got := checkDropsTurn(full, upTo(tc.at), tc.turn)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("cut at %s, turn %s: %q, want %q", tc.at, tc.turn, got, tc.want)
		}
	}
}
