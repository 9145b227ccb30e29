package serve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/internal/interrupttest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
	"github.com/google/go-cmp/cmp"
)

// An interrupt through serve cuts a streamed reply, a running tool, a
// pending permission, parallel read-only calls or a foreground subagent as
// every entry point does: the events show the partial reply (aborted) or
// the stopped (rejected) calls, a finished call's real result, the
// subagent's task ending as stopped, the marker and the error result; the
// session's transcript in the store ends the same way (a subagent's own
// transcript, under its sub-key, ends with its marker); the next request
// is valid, sends the partial reply back, and has the marker and the new
// prompt in one user turn, the interrupted prompt once.
func TestInterruptPathsThroughServe(t *testing.T) {
	long := strings.Repeat("word ", 200)
	tools := "result error_during_execution aborted_tools"
	for _, path := range []string{"text", "tool", "permission", "parallel", "subagent"} {
		t.Run(path, func(t *testing.T) {
			started := make(chan struct{}, 2)
			hold := agentloop.NewTool("hold", "Holds.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				started <- struct{}{}
				<-ctx.Done()
				return agentloop.ToolResult{}, ctx.Err()
			}, &agentloop.ToolOptions{ReadOnly: true})
			quick := agentloop.NewTool("quick", "Answers at once.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				return agentloop.TextResult("ok"), nil
			}, &agentloop.ToolOptions{ReadOnly: true})
			write := agentloop.NewTool("write", "Writes.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				return agentloop.TextResult("written"), nil
			}, nil)
			base := &agentloop.Options{IncludePartialMessages: true, Tools: []string{}, CustomTools: []agentloop.Tool{hold, quick, write}}
			first := agentlooptest.ToolUse("toolu_1", "hold", map[string]any{})
			holds := 1
			want := []string{"stopped call", engine.Interrupted, tools}
			chain := []string{"user: first prompt", "assistant: call hold", "user: stopped toolu_1", "user: " + engine.Interrupted}
			marker := engine.Interrupted
			switch path {
			case "text":
				first = agentlooptest.Text(long)
				first.Chunk, first.EventDelay = 5, 20*time.Millisecond
				want = []string{"aborted reply", engine.InterruptedMarker, "result error_during_execution aborted_streaming"}
				chain = []string{"user: first prompt", "assistant: partial text", "user: " + engine.InterruptedMarker}
				marker = engine.InterruptedMarker
			case "permission":
				first = agentlooptest.ToolUse("toolu_1", "write", map[string]any{})
				want[0] = "rejected call"
				chain = []string{"user: first prompt", "assistant: call write", "user: rejected toolu_1", "user: " + engine.Interrupted}
			case "parallel":
				// The finished call keeps its result; each running one
				// gets its own stopped result.
				first = agentlooptest.Blocks(
					agentlooptest.ToolUseBlock("toolu_q", "quick", map[string]any{}),
					agentlooptest.ToolUseBlock("toolu_h1", "hold", map[string]any{}),
					agentlooptest.ToolUseBlock("toolu_h2", "hold", map[string]any{}))
				holds = 2
				want = []string{"result ok", "stopped call", "stopped call", engine.Interrupted, tools}
				chain = []string{"user: first prompt", "assistant: call quick", "assistant: call hold", "assistant: call hold",
					"user: result toolu_q ok", "user: stopped toolu_h1", "user: stopped toolu_h2", "user: " + engine.Interrupted}
			case "subagent":
				first = agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review",
					"prompt": "Review the code.", "subagent_type": "reviewer"})
				base.Tools = []string{"Agent"}
				base.Agents = map[string]agentloop.AgentDefinition{"reviewer": {Description: "Reviews code",
					Prompt: "You review code.", Tools: []string{"hold"}}}
				want = []string{"@sub Review the code.", "stopped call", "task_notification stopped", engine.Interrupted, tools}
				chain = []string{"user: first prompt", "assistant: call Agent", "user: stopped toolu_a", "user: " + engine.Interrupted}
			}
			e := newEnv(t, func(c *serve.Config) { c.Base = base }, first, agentlooptest.Text("second answer"))
			if path == "subagent" {
				e.model.Route(func(r *agentlooptest.Request) bool { return strings.Contains(r.SystemText(), "You review code.") },
					agentlooptest.ToolUse("toolu_sub", "hold", map[string]any{}))
			}
			id := e.create(tokenA, map[string]any{"cwd": "work"})
			ev := e.subscribe(id, tokenA, "")
			e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "first prompt"})
			var turn []sseEvent
			switch path {
			case "text":
				turn = ev.until(func(e sseEvent) bool { return e.Kind == "message" && strings.Contains(e.Data, "text_delta") })
			case "permission":
				turn = ev.until(kindIs("permission_request"))
			default:
				for range holds {
					select {
					case <-started:
					case <-time.After(10 * time.Second):
						t.Fatal("the tool did not start")
					}
				}
				if path == "parallel" { // the finished call's result is out first
					turn = ev.until(func(e sseEvent) bool {
						return e.Kind == "message" && strings.Contains(e.Data, `"toolu_q"`) && msgType(e) == "user"
					})
				}
			}
			e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil)
			turn = append(turn, ev.until(isResult)...)
			if diff := cmp.Diff(want, serveTurnShape(turn)); diff != "" {
				t.Errorf("the interrupted turn's events (-want +got):\n%s", diff)
			}
			key := session.Key{ProjectKey: session.ProjectKey(filepath.Join(tenantRootOf(t, e, "work"), "work")), SessionID: id}
			if diff := cmp.Diff(chain, storedChain(t, e.store, key, long)); diff != "" {
				t.Errorf("the transcript in the store (-want +got):\n%s", diff)
			}
			if path == "subagent" {
				subs, _ := e.store.ListSubkeys(context.Background(), key.ProjectKey, id)
				var side []string
				for _, sub := range subs {
					if strings.HasPrefix(sub, "subagents/agent-") {
						k := key
						k.Subpath = sub
						side = storedChain(t, e.store, k, long)
					}
				}
				if len(side) == 0 || side[len(side)-1] != "user: "+engine.Interrupted {
					t.Errorf("the subagent's transcript in the store (sub-keys %v) = %q; want it to end with the marker", subs, side)
				}
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
			switch path {
			case "text":
				if len(msgs) < 2 || msgs[1].Role != "assistant" || len(msgs[1].Content) == 0 ||
					msgs[1].Content[0].Text == "" || !strings.HasPrefix(long, msgs[1].Content[0].Text) {
					t.Errorf("the partial reply is not sent back: %+v", msgs)
				}
			case "parallel":
				if c := strings.Count(string(b), engine.StoppedText[:40]); c != 2 || !strings.Contains(string(b), `"ok"`) {
					t.Errorf("the next request has %d stopped results (want 2) or lacks the finished call's: %s", c, b)
				}
			case "subagent":
				if strings.Contains(string(b), "toolu_sub") {
					t.Errorf("the next request carries the subagent's own call: %s", b)
				}
			}
		})
	}
}

// storedChain reads the transcript of key from store and describes its
// main chain, one item per content block, as chainShape does in the
// conversation tests.
func storedChain(t *testing.T, store session.Store, key session.Key, long string) []string {
	t.Helper()
	entries, err := store.Load(context.Background(), key)
	if err != nil {
		t.Fatalf("loading %+v: %v", key, err)
	}
	return interrupttest.ChainShape(session.NewTranscript(entries), long)
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
			Type, Subtype   string
			TerminalReason  string  `json:"terminal_reason"`
			ParentToolUseID *string `json:"parent_tool_use_id"`
			Status          string
			Aborted         bool
			Message         struct {
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
		case "system":
			if line.Subtype == "task_notification" {
				got = append(got, "task_notification "+line.Status)
			}
		case "user":
			var blocks []struct {
				Type, Text string
				Content    json.RawMessage
			}
			_ = json.Unmarshal(line.Message.Content, &blocks)
			sub := ""
			if line.ParentToolUseID != nil {
				sub = "@sub "
			}
			for _, b := range blocks {
				switch {
				case b.Type == "tool_result" && strings.Contains(string(b.Content), engine.StoppedText[:40]):
					got = append(got, sub+"stopped call")
				case b.Type == "tool_result" && strings.Contains(string(b.Content), engine.RejectedText[:40]):
					got = append(got, sub+"rejected call")
				case b.Type == "tool_result":
					var text string
					if json.Unmarshal(b.Content, &text) != nil {
						text = string(b.Content)
					}
					got = append(got, sub+"result "+text)
				case b.Type == "text" && b.Text != "first prompt":
					got = append(got, sub+b.Text)
				}
			}
		case "result":
			got = append(got, "result "+line.Subtype+" "+line.TerminalReason)
		}
	}
	return got
}
