package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/serve"
	"github.com/google/go-cmp/cmp"
)

// An interrupt through serve cuts a streamed reply, a running tool or a
// pending permission as every entry point does: the events show the
// partial reply (aborted) or the stopped (rejected) call, the marker and the error result; the next request is
// valid, sends the partial reply back, and has the marker and the new
// prompt in one user turn, the interrupted prompt once.
func TestInterruptPathsThroughServe(t *testing.T) {
	long := strings.Repeat("word ", 200)
	for _, path := range []string{"text", "tool", "permission"} {
		t.Run(path, func(t *testing.T) {
			started := make(chan struct{}, 1)
			hold := agentloop.NewTool("hold", "Holds.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				started <- struct{}{}
				<-ctx.Done()
				return agentloop.ToolResult{}, ctx.Err()
			}, &agentloop.ToolOptions{ReadOnly: true})
			first := agentlooptest.ToolUse("toolu_1", "hold", map[string]any{})
			want := []string{"stopped call", engine.Interrupted, "result error_during_execution aborted_tools"}
			marker := engine.Interrupted
			if path == "text" {
				first = agentlooptest.Text(long)
				first.Chunk, first.EventDelay = 5, 20*time.Millisecond
				want = []string{"aborted reply", engine.InterruptedMarker, "result error_during_execution aborted_streaming"}
				marker = engine.InterruptedMarker
			}
			if path == "permission" {
				first = agentlooptest.ToolUse("toolu_1", "write", map[string]any{})
				want[0] = "rejected call"
			}
			write := agentloop.NewTool("write", "Writes.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				return agentloop.TextResult("written"), nil
			}, nil)
			e := newEnv(t, func(c *serve.Config) {
				c.Base = &agentloop.Options{IncludePartialMessages: true, Tools: []string{}, CustomTools: []agentloop.Tool{hold, write}}
			}, first, agentlooptest.Text("second answer"))
			id := e.create(tokenA, map[string]any{})
			ev := e.subscribe(id, tokenA, "")
			e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "first prompt"})
			switch path {
			case "text":
				ev.until(func(e sseEvent) bool { return e.Kind == "message" && strings.Contains(e.Data, "text_delta") })
			case "permission":
				ev.until(kindIs("permission_request"))
			default:
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					t.Fatal("the tool did not start")
				}
			}
			e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil)
			if diff := cmp.Diff(want, serveTurnShape(ev.until(isResult))); diff != "" {
				t.Errorf("the interrupted turn's events (-want +got):\n%s", diff)
			}

			e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "second prompt"})
			ev.until(isResult)
			msgs := e.model.LastRequest().Params.Messages
			if err := agentlooptest.ValidateHistory(msgs); err != nil {
				t.Errorf("the next request is invalid: %v", err)
			}
			last := msgs[len(msgs)-1].Content
			if len(last) < 2 || last[len(last)-2].Text != marker+"\n" || last[len(last)-1].Text != "second prompt" {
				t.Errorf("the next request: %+v; want the marker and the new prompt ending one user turn", msgs)
			}
			b, _ := json.Marshal(msgs)
			if c := strings.Count(string(b), "first prompt"); c != 1 {
				t.Errorf("the interrupted prompt is sent %d times, want once", c)
			}
			if path == "text" {
				if len(msgs) < 2 || msgs[1].Role != "assistant" || len(msgs[1].Content) == 0 ||
					msgs[1].Content[0].Text == "" || !strings.HasPrefix(long, msgs[1].Content[0].Text) {
					t.Errorf("the partial reply is not sent back: %+v", msgs)
				}
			}
		})
	}
}

// serveTurnShape describes a turn's message events: an aborted reply, a
// stopped or rejected call, a user text line, the result.
func serveTurnShape(evs []sseEvent) []string {
	var got []string
	for _, ev := range evs {
		if ev.Kind != "message" {
			continue
		}
		var line struct {
			Type, Subtype  string
			TerminalReason string `json:"terminal_reason"`
			Aborted        bool
			Message        struct {
				Content json.RawMessage
			}
		}
		if err := json.Unmarshal([]byte(ev.Data), &line); err != nil {
			got = append(got, "unreadable "+ev.Data)
			continue
		}
		switch line.Type {
		case "assistant":
			if line.Aborted {
				got = append(got, "aborted reply")
			}
		case "user":
			var blocks []struct {
				Type, Text string
				Content    json.RawMessage
			}
			_ = json.Unmarshal(line.Message.Content, &blocks)
			for _, b := range blocks {
				switch {
				case b.Type == "tool_result" && strings.Contains(string(b.Content), engine.StoppedText[:40]):
					got = append(got, "stopped call")
				case b.Type == "tool_result" && strings.Contains(string(b.Content), engine.RejectedText[:40]):
					got = append(got, "rejected call")
				case b.Type == "text" && b.Text != "first prompt":
					got = append(got, b.Text)
				}
			}
		case "result":
			got = append(got, "result "+line.Subtype+" "+line.TerminalReason)
		}
	}
	return got
}
