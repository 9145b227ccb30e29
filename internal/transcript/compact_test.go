package transcript_test

import (
	"encoding/json"
	"testing"

	"github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
)

// A compact boundary starts a new chain: the transcript read back gives
// the summary and what followed it, and the boundary points back at the
// entry before it.
func TestRecordCompactBoundary(t *testing.T) {
	w := newWriter(t)
	r, err := transcript.New(transcript.Config{Writer: w})
	if err != nil {
		t.Fatal(err)
	}
	md, _ := json.Marshal(map[string]any{"trigger": "auto", "pre_tokens": 990000, "post_tokens": 1200})
	summary := prompt("SUMMARY of the work")
	summary.IsSynthetic = true
	for _, m := range []message.Message{
		prompt("old work"),
		assistant("msg_1", model.TextBlock("old answer")),
		&message.System{Subtype: message.SubtypeCompactBoundary, SessionID: sid, Data: map[string]json.RawMessage{"compact_metadata": md}},
		summary,
		assistant("msg_2", model.TextBlock("kept answer")),
		prompt("new work"),
	} {
		if n := r.Record(m); n != nil {
			t.Fatalf("Record(%T) = notice %+v", m, n)
		}
	}
	before := w.Leaf()
	r.NewChain() // /clear
	r.Record(prompt("after clear"))
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := session.Load(w.Path())
	if err != nil {
		t.Fatal(err)
	}
	var boundary, summaryEntry *session.Entry
	for i, e := range tr.Entries {
		switch {
		case e.Type == session.TypeSystem && e.Subtype == session.SubtypeCompactBoundary:
			boundary = &tr.Entries[i]
		case e.IsCompactSummary:
			summaryEntry = &tr.Entries[i]
		}
	}
	if boundary == nil || summaryEntry == nil {
		t.Fatalf("boundary %v, summary %v", boundary, summaryEntry)
	}
	if boundary.ParentUUID != "" || boundary.LogicalParentUUID == "" || summaryEntry.ParentUUID != boundary.UUID {
		t.Errorf("boundary parent %q logical parent %q; summary parent %q (boundary %q)",
			boundary.ParentUUID, boundary.LogicalParentUUID, summaryEntry.ParentUUID, boundary.UUID)
	}
	if string(boundary.Extra["compactMetadata"]) != `{"preTokens":990000,"trigger":"auto"}` {
		t.Errorf("compactMetadata %s", boundary.Extra["compactMetadata"])
	}
	// The chain after /clear holds only the new prompt.
	if h := tr.History(); len(h) != 1 || h[0].Content[0].Text != "after clear" {
		t.Errorf("history after /clear: %+v", h)
	}
	// Up to the /clear, the chain starts at the summary.
	at, err := tr.At(before)
	if err != nil {
		t.Fatal(err)
	}
	h := at.History()
	if len(h) != 3 || h[0].Content[0].Text != "SUMMARY of the work" || h[2].Content[0].Text != "new work" {
		t.Errorf("history from the boundary: %+v", h)
	}
}
