package agentlooptest_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// The official Go SDK is an independent reader of the wire format: what it
// accumulates from the stream must equal the non-streaming message.

func sdkClient(s *agentlooptest.Server) anthropic.Client {
	return anthropic.NewClient(option.WithBaseURL(s.URL), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
}

var sdkParams = anthropic.MessageNewParams{
	Model:     "claude-test",
	MaxTokens: 1024,
	Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))},
}

// sdkBlock is the comparable part of a content block.
type sdkBlock struct {
	Type, Text, Thinking, Signature, Data, ID, Name string
	Input                                           any
}

func sdkSummary(t *testing.T, m *anthropic.Message) (blocks []sdkBlock, stop string, usage [4]int64) {
	t.Helper()
	for _, c := range m.Content {
		b := sdkBlock{Type: c.Type, Text: c.Text, Thinking: c.Thinking, Signature: c.Signature, Data: c.Data, ID: c.ID, Name: c.Name}
		if len(c.Input) > 0 {
			b.Input = decode(t, c.Input)
		}
		blocks = append(blocks, b)
	}
	u := m.Usage
	return blocks, string(m.StopReason), [4]int64{u.InputTokens, u.OutputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens}
}

func TestSDKStreamMatchesMessage(t *testing.T) {
	reply := agentlooptest.Blocks(
		agentlooptest.ThinkingBlock("Let me look at <that> & this.", "sig_1"),
		agentlooptest.RedactedThinkingBlock("opaque"),
		model.TextBlock("Reading two files, héhé."),
		agentlooptest.ToolUseBlock("toolu_1", "Read", map[string]any{"file_path": "/a", "limit": 10.0}),
		agentlooptest.ToolUseBlock("toolu_2", "Bash", json.RawMessage(`{"command":"echo \"quoted\" | wc -c"}`)),
	)
	reply.ID, reply.Chunk = "msg_sdk", 4
	reply.Usage = model.Usage{InputTokens: 123, OutputTokens: 45, CacheCreationInputTokens: 6, CacheReadInputTokens: 789}
	for _, delta := range []string{agentlooptest.DeltaUsageFull, agentlooptest.DeltaUsageOutputOnly} {
		r := reply
		r.DeltaUsage = delta
		s := agentlooptest.NewTB(t, r, r)
		client := sdkClient(s)
		ctx := context.Background()

		want, err := client.Messages.New(ctx, sdkParams)
		if err != nil {
			t.Fatal(err)
		}
		st := client.Messages.NewStreaming(ctx, sdkParams)
		var acc anthropic.Message
		for st.Next() {
			if err := acc.Accumulate(st.Current()); err != nil {
				t.Fatal(err)
			}
		}
		if err := st.Err(); err != nil {
			t.Fatal(err)
		}
		wb, ws, wu := sdkSummary(t, want)
		gb, gs, gu := sdkSummary(t, &acc)
		if diff := cmp.Diff(wb, gb); diff != "" {
			t.Errorf("%s: streamed blocks differ (-message +stream):\n%s", delta, diff)
		}
		if ws != "tool_use" || gs != ws || wu != gu || wu != [4]int64{123, 45, 6, 789} {
			t.Errorf("%s: stop %q/%q usage %v/%v", delta, ws, gs, wu, gu)
		}
		if acc.ID != "msg_sdk" || want.ID != "msg_sdk" || string(acc.Model) != "claude-test" {
			t.Errorf("%s: id %q model %q", delta, acc.ID, acc.Model)
		}
		if len(wb) != 5 || wb[0].Thinking != "Let me look at <that> & this." || wb[3].Input == nil {
			t.Errorf("%s: message %+v", delta, wb)
		}
	}
}

func TestSDKErrors(t *testing.T) {
	s := agentlooptest.NewTB(t, agentlooptest.Overloaded(), agentlooptest.ErrorEvent("overloaded_error", "Overloaded"))
	client := sdkClient(s)
	_, err := client.Messages.New(context.Background(), sdkParams)
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || apiErr.RequestID != s.LastRequest().RequestID {
		t.Errorf("HTTP error: %v", err)
	}

	st := client.Messages.NewStreaming(context.Background(), sdkParams)
	n := 0
	for st.Next() {
		n++
	}
	if st.Err() == nil || n != 1 {
		t.Errorf("stream error: %d events, err %v", n, st.Err())
	}
}
