package conversation

import (
	"context"
	"errors"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// collectStep runs one Session step and returns what it yielded.
func collectStep(t *testing.T, step func(yield func(Message, error) bool)) []Message {
	t.Helper()
	var out []Message
	step(func(m Message, err error) bool {
		if err != nil {
			t.Fatalf("step yielded %v", err)
		}
		out = append(out, m)
		return true
	})
	return out
}

func lastResult(t *testing.T, msgs []Message) *message.Result {
	t.Helper()
	if len(msgs) == 0 {
		t.Fatal("no messages")
	}
	r, ok := msgs[len(msgs)-1].(*message.Result)
	if !ok {
		t.Fatalf("last message is %T", msgs[len(msgs)-1])
	}
	return r
}

// TestSessionControls drives a Session directly through its exported
// steps: Run twice (the second request carries the first exchange),
// Compact (one summary request, a compact_boundary, the next request
// starts from the summary), Clear (a new id, an empty history),
// ContextUsage and Rewind.
func TestSessionControls(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Text("first answer"),
		agentlooptest.Text("second answer"),
		agentlooptest.Text("SUMMARY: two answers were given"),
		agentlooptest.Text("after compact"),
		agentlooptest.Text("after clear"),
	)
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, err := NewSession(ctx, &Config{Provider: p, Cwd: t.TempDir(), SettingSources: []settings.SettingSource{},
		NoSessionPersistence: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	run := func(prompt string) *message.Result {
		return lastResult(t, collectStep(t, func(y func(Message, error) bool) {
			s.Run(ctx, []model.Content{model.TextBlock(prompt)}, y)
		}))
	}
	if r := run("one"); r.Result == nil || *r.Result != "first answer" {
		t.Fatalf("first run: %+v", r)
	}
	run("two")
	if got := roles(srv.LastRequest().Params.Messages); !cmp.Equal(got, []string{"user", "assistant", "user"}) {
		t.Errorf("second request's history = %v", got)
	}

	firstID := s.ID()
	msgs := collectStep(t, func(y func(Message, error) bool) { s.Compact(ctx, "keep the answers", y) })
	var boundary bool
	for _, m := range msgs {
		if sys, ok := m.(*message.System); ok && sys.Subtype == "compact_boundary" {
			boundary = true
		}
	}
	if !boundary {
		t.Errorf("Compact yielded no compact_boundary: %v", msgs)
	}
	run("three")
	if got := srv.LastRequest().Params.Messages; len(got) > 3 {
		t.Errorf("after Compact the request still carries %d messages", len(got))
	}

	collectStep(t, func(y func(Message, error) bool) { s.Clear(ctx, y) })
	if s.ID() == firstID {
		t.Errorf("Clear kept the session id %s", firstID)
	}
	run("four")
	if got := roles(srv.LastRequest().Params.Messages); !cmp.Equal(got, []string{"user"}) {
		t.Errorf("after Clear the history = %v", got)
	}

	u, err := s.ContextUsage(ctx)
	if err != nil || u.MaxTokens == 0 {
		t.Errorf("ContextUsage = %+v, %v", u, err)
	}
	if _, err := s.Rewind(ctx, "any", nil); !errors.Is(err, ErrFileCheckpointingOff) {
		t.Errorf("Rewind without checkpoints: %v", err)
	}
	if cps := s.Checkpoints(); cps != nil {
		t.Errorf("Checkpoints without checkpointing = %v", cps)
	}
}

func roles(ms []model.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Role)
	}
	return out
}
