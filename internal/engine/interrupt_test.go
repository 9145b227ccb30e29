package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// cutShort streams a reply's first text delta, calls cut (which cancels
// the run), and fails as a cancelled stream does; its later replies are
// given whole.
type cutShort struct {
	cut     func()
	text    string            // streamed before the cut; "" replies with replies[0]
	replies []*model.Response // given in order (after the cut one, if any)
	reqs    []*model.Request
}

func (p *cutShort) Stream(ctx context.Context, req *model.Request, h model.Handler) (*model.Response, error) {
	b, _ := json.Marshal(req)
	var cp model.Request
	_ = json.Unmarshal(b, &cp)
	p.reqs = append(p.reqs, &cp)
	if p.text != "" {
		text := p.text
		p.text = ""
		h.Event(model.StreamEvent{Type: "message_start", Data: json.RawMessage(`{"type":"message_start","message":{"id":"m_cut","model":"claude-opus-5-5","usage":{"input_tokens":7,"output_tokens":1}}}`)})
		h.Event(model.StreamEvent{Type: "content_block_start", Data: json.RawMessage(`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)})
		d, _ := json.Marshal(map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
		h.Event(model.StreamEvent{Type: "content_block_delta", Data: d})
		p.cut()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	r := p.replies[0]
	p.replies = p.replies[1:]
	return r, nil
}

// kinds names the emitted messages: assistant text (marked when aborted),
// tool results, user text, the result's terminal reason.
func kinds(msgs []message.Message) []string {
	var out []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *message.Assistant:
			for _, b := range m.Message.Content {
				k := "assistant " + b.Type + " " + b.Text + b.Name
				if m.Aborted {
					k += " (aborted)"
				}
				out = append(out, k)
			}
		case *message.User:
			for _, b := range m.Message.Content {
				if b.Type == model.TypeToolResult {
					out = append(out, "result "+b.ToolUseID+": "+b.ResultText())
				} else {
					out = append(out, "user "+b.Text)
				}
			}
		case *message.Result:
			out = append(out, "result "+m.Subtype+" "+m.TerminalReason)
		}
	}
	return out
}

// Every interruption ends the run the same way, whichever step it cuts:
// the partial reply kept, each open call answered (stopped or not run),
// the marker, the result — on the stream and in the record, which gives
// the history; the next prompt is sent after the marker, in a request the
// API accepts, and the interrupted prompt is not asked again.
func TestInterruptEveryStep(t *testing.T) {
	callsOf := func(names ...string) *model.Response {
		r := &model.Response{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{model.TextBlock("on it")}}
		for i, n := range names {
			r.Content = append(r.Content, model.Content{Type: model.TypeToolUse, ID: string(rune('a' + i)), Name: n, Input: json.RawMessage(`{}`)})
		}
		return r
	}
	final := &model.Response{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("fine")}}
	tests := []struct {
		name      string
		text      string // streamed before the cut
		reply     *model.Response
		authorize bool // the permission check is pending when the cut comes
		want      []string
		wantTurns int
	}{
		{name: "model streams text", text: "half a sent",
			want: []string{"assistant text half a sent (aborted)", "user " + InterruptedMarker,
				"result error_during_execution aborted_streaming"}, wantTurns: 2},
		{name: "a tool runs", reply: callsOf("slow"),
			want: []string{"assistant text on it", "assistant tool_use slow", "result a: " + StoppedText,
				"user " + Interrupted, "result error_during_execution aborted_tools"}, wantTurns: 3},
		{name: "a permission check is pending", reply: callsOf("slow"), authorize: true,
			want: []string{"assistant text on it", "assistant tool_use slow", "result a: " + RejectedText,
				"user " + Interrupted, "result error_during_execution aborted_tools"}, wantTurns: 3},
		{name: "read-only calls in parallel", reply: callsOf("quick", "slow", "slow2"),
			want: []string{"assistant text on it", "assistant tool_use quick", "assistant tool_use slow", "assistant tool_use slow2",
				"result a: quick done", "result b: " + StoppedText, "result c: " + StoppedText,
				"user " + Interrupted, "result error_during_execution aborted_tools"}, wantTurns: 5},
		{name: "calls wait their turn", reply: callsOf("slow", "write"),
			want: []string{"assistant text on it", "assistant tool_use slow", "assistant tool_use write",
				"result a: " + StoppedText, "result b: " + RejectedText,
				"user " + Interrupted, "result error_during_execution aborted_tools"}, wantTurns: 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			quickDone := make(chan struct{})
			quick := tool.New("quick", "Quick.", func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
				defer close(quickDone)
				return tool.Text("quick done"), nil
			}, &tool.Options{ReadOnly: true})
			slowRun := func(cut bool) func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
				return func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
					if tc.name == "read-only calls in parallel" {
						<-quickDone
					}
					if cut {
						cancel()
					}
					<-ctx.Done()
					return tool.Result{}, errors.New("killed")
				}
			}
			slow := tool.New("slow", "Slow.", slowRun(true), &tool.Options{ReadOnly: true})
			slow2 := tool.New("slow2", "Slow too.", slowRun(false), &tool.Options{ReadOnly: true})
			write := tool.New("write", "Writes.", func(ctx context.Context, _ struct{}, _ *tool.Call) (tool.Result, error) {
				t.Error("a call after the interrupt ran")
				return tool.Text("wrote"), nil
			}, nil)
			p := &cutShort{cut: cancel, text: tc.text}
			if tc.reply != nil {
				p.replies = append(p.replies, tc.reply)
			}
			p.replies = append(p.replies, final)
			var recs []message.Message
			cfg := Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
				Tools: []tool.Tool{quick, slow, slow2, write}, Record: func(m message.Message) { recs = append(recs, m) }}
			if tc.authorize {
				cfg.Authorize = func(ctx context.Context, call *ToolCall) Decision {
					cancel() // the host is still deciding when the interrupt comes
					<-ctx.Done()
					return Decision{Message: "permission check failed: " + ctx.Err().Error()}
				}
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var got []message.Message
			res, err := s.Run(ctx, []model.Content{model.TextBlock("first prompt")}, func(m message.Message) bool {
				got = append(got, m)
				return true
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run error = %v, want context.Canceled", err)
			}
			if diff := cmp.Diff(tc.want, kinds(got)); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
			if res == nil || res.NumTurns != tc.wantTurns {
				t.Errorf("result %+v, want num_turns %d", res, tc.wantTurns)
			}
			if diff := cmp.Diff(s.History(), rebuild(recs)); diff != "" {
				t.Errorf("history (-) and record (+) differ:\n%s", diff)
			}
			// The next prompt is a new turn after the marker.
			if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("second prompt")}, func(message.Message) bool { return true }); err != nil {
				t.Fatal(err)
			}
			next := p.reqs[len(p.reqs)-1].Messages
			if err := agentlooptest.ValidateHistory(next); err != nil {
				t.Errorf("the request after the interrupt is invalid: %v", err)
			}
			last, prev := next[len(next)-1], next[len(next)-2]
			if prev.Role != "assistant" || len(last.Content) < 2 {
				t.Fatalf("the request after the interrupt ends %+v, %+v; want the reply, then the marker and the prompt", prev, last)
			}
			marker, prompt := last.Content[len(last.Content)-2], last.Content[len(last.Content)-1]
			if !strings.HasPrefix(marker.Text, "[Request interrupted by user") || !strings.HasSuffix(marker.Text, "]\n") || prompt.Text != "second prompt" {
				t.Errorf("the last user turn ends %q, %q; want the marker (with its newline), then the prompt", marker.Text, prompt.Text)
			}
			if n := strings.Count(string(mustJSON(next)), "first prompt"); n != 1 {
				t.Errorf("the interrupted prompt is sent %d times, want once", n)
			}
			if tc.text != "" && prev.Content[0].Text != tc.text {
				t.Errorf("the reply sent back is %+v, want the partial text %q", prev.Content, tc.text)
			}
		})
	}
}

// A conversation resumed after an interrupt sends, between the marker and
// the next prompt, the synthetic assistant turn the reference sends; it is
// recorded (so a transcript read back holds it) but not streamed.
func TestResumedInterruptAnswersMarker(t *testing.T) {
	for _, marker := range []string{InterruptedMarker, Interrupted} {
		t.Run(marker, func(t *testing.T) {
			p := &scripted{replies: []*model.Response{{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("ok")}}}}
			var recs []message.Message
			s, err := New(Config{Provider: p, Model: "claude-opus-5-5", Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
				Record: func(m message.Message) { recs = append(recs, m) }})
			if err != nil {
				t.Fatal(err)
			}
			s.SetHistory([]model.Message{
				{Role: "user", Content: []model.Content{model.TextBlock("first")}},
				{Role: "assistant", Content: []model.Content{model.TextBlock("half")}},
				{Role: "user", Content: []model.Content{model.TextBlock(marker)}},
			})
			var shown []string
			if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("again")}, func(m message.Message) bool {
				shown = append(shown, kinds([]message.Message{m})...)
				return true
			}); err != nil {
				t.Fatal(err)
			}
			want := []model.Message{
				{Role: "user", Content: []model.Content{model.TextBlock("first")}},
				{Role: "assistant", Content: []model.Content{model.TextBlock("half")}},
				{Role: "user", Content: []model.Content{model.TextBlock(marker)}},
				{Role: "assistant", Content: []model.Content{model.TextBlock(NoResponse)}},
				{Role: "user", Content: []model.Content{model.TextBlock("again")}},
			}
			got := p.reqs[0].Messages
			for i := range got {
				for j := range got[i].Content {
					got[i].Content[j].CacheControl = nil
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("request (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"assistant text ok", "result success completed"}, shown); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
			if a, ok := recs[0].(*message.Assistant); !ok || a.Message.Content[0].Text != NoResponse {
				t.Errorf("first record %+v, want the synthetic answer", recs[0])
			}
		})
	}
}

// Calls that Config.Concurrent finds read-only run concurrently with the
// reply's other read-only calls; without it, one after the other.
func TestConcurrentCalls(t *testing.T) {
	for _, concurrent := range []bool{true, false} {
		t.Run(map[bool]string{true: "concurrent", false: "in turn"}[concurrent], func(t *testing.T) {
			var running, most atomic.Int32
			both := make(chan struct{})
			var once sync.Once
			sh := tool.New("sh", "Runs.", func(ctx context.Context, _ struct{}, c *tool.Call) (tool.Result, error) {
				n := running.Add(1)
				defer running.Add(-1)
				if n > most.Load() {
					most.Store(n)
				}
				if n == 2 {
					once.Do(func() { close(both) })
				}
				if concurrent {
					// Each waits for the other: only calls that run
					// together get past this.
					select {
					case <-both:
					case <-time.After(10 * time.Second):
						return tool.Text("alone"), nil
					}
				}
				return tool.Text("ok"), nil
			}, nil)
			reply := &model.Response{ID: "m1", Model: "claude-opus-5-5", StopReason: "tool_use", Content: []model.Content{
				{Type: model.TypeToolUse, ID: "a", Name: "sh", Input: json.RawMessage(`{}`)},
				{Type: model.TypeToolUse, ID: "b", Name: "sh", Input: json.RawMessage(`{}`)},
			}}
			final := &model.Response{ID: "m2", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("done")}}
			cfg := Config{Provider: &scripted{replies: []*model.Response{reply, final}}, Model: "claude-opus-5-5",
				Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"}, Tools: []tool.Tool{sh}}
			if concurrent {
				cfg.Concurrent = func(call *ToolCall) bool { return call.Name == "sh" }
			}
			s, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(context.Background(), []model.Content{model.TextBlock("go")}, func(message.Message) bool { return true }); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int32{true: 2, false: 1}[concurrent]; most.Load() != want {
				t.Errorf("at most %d calls ran at once, want %d", most.Load(), want)
			}
		})
	}
}

// An interrupt while the Stop hooks run ends the run as interrupted: the
// reply, the marker, the error result.
func TestInterruptDuringStopHook(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reply := &model.Response{ID: "m1", Model: "claude-opus-5-5", StopReason: "end_turn", Content: []model.Content{model.TextBlock("all done")}}
	s, err := New(Config{Provider: &scripted{replies: []*model.Response{reply}}, Model: "claude-opus-5-5",
		Env: &tool.Env{Cwd: t.TempDir(), SessionID: "s1"},
		Hooks: HookPoints{BeforeStop: func(ctx context.Context, active bool) StopVerdict {
			cancel()
			return StopVerdict{Continue: true, Text: "keep going"}
		}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []message.Message
	if _, err := s.Run(ctx, []model.Content{model.TextBlock("go")}, func(m message.Message) bool { got = append(got, m); return true }); err == nil {
		t.Error("Run succeeded, want the interrupt's error")
	}
	want := []string{"assistant text all done", "user " + InterruptedMarker, "result error_during_execution aborted_streaming"}
	if diff := cmp.Diff(want, kinds(got)); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
}
