package conversation_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// An interrupt ends a turn the same way through every entry point: the
// streaming Client's Interrupt and a Query whose context is cancelled.
// The turn shows the partial reply (or the stopped call), the marker and
// the error result; the next prompt is sent after the marker, once; a
// fork resumed from the transcript sends the marker, the synthetic answer
// to it and its prompt, as the reference does.
func TestInterruptEntryPoints(t *testing.T) {
	long := strings.Repeat("word ", 200)
	for _, entry := range []string{"Client.Interrupt", "Query cancelled"} {
		for _, path := range []string{"text", "tool"} {
			t.Run(entry+"/"+path, func(t *testing.T) {
				first := agentlooptest.ToolUse("toolu_1", "hold", map[string]any{})
				if path == "text" {
					first = agentlooptest.Text(long)
					first.Chunk, first.EventDelay = 5, 20*time.Millisecond
				}
				env := newStreamEnv(t, &agentloop.Options{IncludePartialMessages: true}, first,
					agentlooptest.Text("forked"), agentlooptest.Text("second answer"))
				// cut reports whether m is where the interrupt comes.
				cut := func(m agentloop.Message) bool {
					if se, ok := m.(*agentloop.StreamEventMessage); ok {
						return path == "text" && strings.Contains(string(se.Event), "text_delta")
					}
					return false
				}
				var turn []agentloop.Message
				switch entry {
				case "Client.Interrupt":
					env.send(t, agentloop.UserInput{Text: "first prompt"})
					r := consume(env.c)
					defer r.stop(t)
					if path == "tool" {
						waitFor(t, env.started, "the tool to start")
					} else {
						for m := range r.msgs {
							if cut(m) {
								break
							}
						}
					}
					if _, err := env.c.Interrupt(context.Background(), nil); err != nil {
						t.Fatal(err)
					}
					_, turn = r.result(t)
				case "Query cancelled":
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if path == "tool" {
						go func() { <-env.started; cancel() }()
					}
					for m := range env.c.Query(ctx, "first prompt") {
						turn = append(turn, m)
						if cut(m) {
							cancel()
						}
					}
				}
				var got []string
				for _, m := range turn {
					switch m := m.(type) {
					case *agentloop.AssistantMessage:
						if m.Aborted {
							got = append(got, "aborted reply")
						}
					case *agentloop.UserMessage:
						for _, b := range m.Message.Content {
							switch {
							case b.Type == model.TypeToolResult && b.ResultText() == engine.StoppedText:
								got = append(got, "stopped call")
							case b.Type == model.TypeText:
								got = append(got, b.Text)
							}
						}
					case *agentloop.ResultMessage:
						got = append(got, m.Subtype+" "+m.TerminalReason)
					}
				}
				want := map[string][]string{
					"text": {"aborted reply", engine.InterruptedMarker, "error_during_execution aborted_streaming"},
					"tool": {"stopped call", engine.Interrupted, "error_during_execution aborted_tools"},
				}[path]
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("the interrupted turn (-want +got):\n%s", diff)
				}

				// A fork resumed from the transcript.
				fork := agentloop.Options{Provider: provider(t, env.srv, nil), Cwd: env.cwd, ConfigDir: env.configDir,
					Resume: env.c.SessionID(), ForkSession: true, Tools: []string{}, SettingSources: []settings.SettingSource{}}
				if _, err := agentloop.Query(context.Background(), "forked prompt", &fork).Result(); err != nil {
					t.Fatalf("the fork: %v", err)
				}
				msgs := env.srv.LastRequest().Params.Messages
				n := len(msgs)
				if n < 3 || lastText(msgs[n-3]) != want[1] || lastText(msgs[n-2]) != engine.NoResponse || lastText(msgs[n-1]) != "forked prompt" {
					t.Errorf("the fork's request ends %s; want the marker, %q, the prompt", summary(msgs), engine.NoResponse)
				}

				// The next prompt of the session itself.
				if _, err := env.c.Query(context.Background(), "second prompt").Result(); err != nil && entry == "Query cancelled" {
					t.Fatal(err)
				}
				if entry == "Client.Interrupt" {
					// The streaming client runs it as its next turn.
					return
				}
				msgs = env.srv.LastRequest().Params.Messages
				if err := agentlooptest.ValidateHistory(msgs); err != nil {
					t.Errorf("the next request is invalid: %v", err)
				}
				last := msgs[len(msgs)-1].Content
				if len(last) < 2 || last[len(last)-2].Text != want[1]+"\n" || last[len(last)-1].Text != "second prompt" {
					t.Errorf("the next request's user turn ends %s; want the marker and the prompt", summary(msgs[len(msgs)-1:]))
				}
				b, _ := json.Marshal(msgs)
				if c := strings.Count(string(b), "first prompt"); c != 1 {
					t.Errorf("the interrupted prompt is sent %d times, want once", c)
				}
				if path == "text" && (msgs[1].Role != "assistant" || !strings.HasPrefix(long, lastText(msgs[1])) || lastText(msgs[1]) == "") {
					t.Errorf("the partial reply is not sent back: %s", summary(msgs))
				}
			})
		}
	}
}

// lastText is the text of m's last block.
func lastText(m model.Message) string {
	if len(m.Content) == 0 {
		return ""
	}
	return m.Content[len(m.Content)-1].Text
}

// summary describes messages for a failure message.
func summary(msgs []model.Message) string {
	var parts []string
	for _, m := range msgs {
		var bs []string
		for _, b := range m.Content {
			bs = append(bs, b.Type+":"+b.Text+b.ToolUseID)
		}
		parts = append(parts, m.Role+"["+strings.Join(bs, ", ")+"]")
	}
	return strings.Join(parts, " ")
}
