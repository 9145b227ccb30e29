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
	"github.com/agentloop/agentloop/internal/interrupttest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// An interrupt ends a turn the same way through every entry point (the
// streaming Client's Interrupt and a Query whose context is cancelled)
// whichever step it cuts: a streamed reply, a running tool, a pending
// permission, parallel read-only calls, a foreground subagent. Each row
// checks the stream (the partial reply aborted, the stopped calls in call
// order with the finished ones keeping their results, the marker, the
// error result), the transcript read back, and the next request: valid
// history, the marker and the new prompt in one user turn, the
// interrupted prompt sent once. A fork resumed from the transcript sends
// the marker, the synthetic answer to it and its prompt, as the reference.
func TestInterruptEntryPoints(t *testing.T) {
	long := strings.Repeat("word ", 200)
	type path struct {
		name    string
		opts    func(env *readyChans) *agentloop.Options
		replies func(env *readyChans) []agentlooptest.Reply
		// cut is the stream message after which the interrupt comes
		// (nil: at once when ready).
		cut func(m agentloop.Message) bool
		// ready waits for the step to be cut to be under way.
		ready func(env *streamEnv, rc *readyChans)
		// stream is the turn's shape; transcript the chain's tail;
		// subTranscript the lines of a subagent's transcript.
		stream, transcript, subTranscript []string
		marker                            string
	}
	holdStarted := func(n int) func(*streamEnv, *readyChans) {
		return func(env *streamEnv, _ *readyChans) {
			for range n {
				waitFor(t, env.started, "the tool to start")
			}
		}
	}
	tools := []string{"error_during_execution aborted_tools"}
	paths := []path{{
		name: "text",
		replies: func(*readyChans) []agentlooptest.Reply {
			r := agentlooptest.Text(long)
			r.Chunk, r.EventDelay = 5, 20*time.Millisecond
			return []agentlooptest.Reply{r}
		},
		cut: func(m agentloop.Message) bool {
			se, ok := m.(*agentloop.StreamEventMessage)
			return ok && strings.Contains(string(se.Event), "text_delta")
		},
		ready:      func(*streamEnv, *readyChans) {},
		stream:     []string{"aborted reply", engine.InterruptedMarker, "error_during_execution aborted_streaming"},
		transcript: []string{"user: first prompt", "assistant: partial text", "user: " + engine.InterruptedMarker},
		marker:     engine.InterruptedMarker,
	}, {
		name: "tool",
		replies: func(*readyChans) []agentlooptest.Reply {
			return []agentlooptest.Reply{agentlooptest.ToolUse("toolu_1", "hold", map[string]any{})}
		},
		ready:      holdStarted(1),
		stream:     append([]string{"stopped call"}, append([]string{engine.Interrupted}, tools...)...),
		transcript: []string{"user: first prompt", "assistant: call hold", "user: stopped toolu_1", "user: " + engine.Interrupted},
		marker:     engine.Interrupted,
	}, {
		name: "permission",
		opts: func(rc *readyChans) *agentloop.Options {
			write := agentloop.NewTool("write", "Writes.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
				return agentloop.TextResult("written"), nil
			}, nil)
			return &agentloop.Options{CustomTools: []agentloop.Tool{write},
				CanUseTool: func(ctx context.Context, _ agentloop.PermissionRequest) (agentloop.PermissionResult, error) {
					close(rc.asked)
					<-ctx.Done()
					return agentloop.PermissionResult{}, ctx.Err()
				}}
		},
		replies: func(*readyChans) []agentlooptest.Reply {
			return []agentlooptest.Reply{agentlooptest.ToolUse("toolu_1", "write", map[string]any{})}
		},
		ready:      func(_ *streamEnv, rc *readyChans) { waitFor(t, rc.asked, "the permission request") },
		stream:     append([]string{"rejected call"}, append([]string{engine.Interrupted}, tools...)...),
		transcript: []string{"user: first prompt", "assistant: call write", "user: rejected toolu_1", "user: " + engine.Interrupted},
		marker:     engine.Interrupted,
	}, {
		name: "parallel",
		replies: func(*readyChans) []agentlooptest.Reply {
			return []agentlooptest.Reply{agentlooptest.Blocks(
				agentlooptest.ToolUseBlock("toolu_q", "quick", map[string]any{}),
				agentlooptest.ToolUseBlock("toolu_h1", "hold", map[string]any{}),
				agentlooptest.ToolUseBlock("toolu_h2", "hold", map[string]any{}))}
		},
		// The finished call's result is out before the interrupt.
		cut: func(m agentloop.Message) bool {
			u, ok := m.(*agentloop.UserMessage)
			return ok && len(u.Message.Content) > 0 && u.Message.Content[0].ResultText() == "ok"
		},
		ready:  holdStarted(2),
		stream: append([]string{"result ok", "stopped call", "stopped call", engine.Interrupted}, tools...),
		transcript: []string{"user: first prompt", "assistant: call quick", "assistant: call hold", "assistant: call hold",
			"user: result toolu_q ok", "user: stopped toolu_h1", "user: stopped toolu_h2", "user: " + engine.Interrupted},
		marker: engine.Interrupted,
	}, {
		name: "subagent",
		opts: func(*readyChans) *agentloop.Options {
			return &agentloop.Options{Tools: []string{"Agent"},
				Agents: map[string]agentloop.AgentDefinition{"reviewer": {Description: "Reviews code", Prompt: "You review code.", Tools: []string{"Read"}}}}
		},
		replies: func(rc *readyChans) []agentlooptest.Reply {
			held := agentlooptest.Text("never")
			held.Delay = time.Hour
			held.Expect = func(*agentlooptest.Request) error { close(rc.asked); return nil }
			return []agentlooptest.Reply{agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review",
				"prompt": "Review the code.", "subagent_type": "reviewer"}), held}
		},
		ready:      func(_ *streamEnv, rc *readyChans) { waitFor(t, rc.asked, "the subagent's request") },
		stream:     append([]string{"@sub Review the code.", "stopped call", "task_notification stopped", engine.Interrupted}, tools...),
		transcript: []string{"user: first prompt", "assistant: call Agent", "user: stopped toolu_a", "user: " + engine.Interrupted},
		// Its request was cut before any reply: the prompt, the marker.
		subTranscript: []string{"user Review the code.", "user " + engine.InterruptedMarker},
		marker:        engine.Interrupted,
	}}
	for _, entry := range []string{"Client.Interrupt", "Query cancelled"} {
		for _, p := range paths {
			t.Run(entry+"/"+p.name, func(t *testing.T) {
				rc := &readyChans{asked: make(chan struct{})}
				opts := &agentloop.Options{}
				if p.opts != nil {
					opts = p.opts(rc)
				}
				opts.IncludePartialMessages = true
				replies := append(p.replies(rc), agentlooptest.Text("forked"), agentlooptest.Text("second answer"))
				env := newStreamEnv(t, opts, replies...)
				cut := p.cut
				if cut == nil {
					cut = func(agentloop.Message) bool { return false }
				}
				var turn []agentloop.Message
				var r *consumer
				switch entry {
				case "Client.Interrupt":
					env.send(t, agentloop.UserInput{Text: "first prompt"})
					r = consume(env.c)
					defer r.stop(t)
					if p.cut != nil {
						for m := range r.msgs {
							turn = append(turn, m)
							if cut(m) {
								break
							}
						}
					}
					p.ready(env, rc)
					if _, err := env.c.Interrupt(context.Background(), nil); err != nil {
						t.Fatal(err)
					}
					_, rest := r.result(t)
					turn = append(turn, rest...)
				case "Query cancelled":
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					if p.cut == nil {
						go func() { p.ready(env, rc); cancel() }()
					}
					for m := range env.c.Query(ctx, "first prompt") {
						turn = append(turn, m)
						if cut(m) {
							p.ready(env, rc)
							cancel()
						}
					}
				}
				if diff := cmp.Diff(p.stream, turnShape(turn)); diff != "" {
					t.Errorf("the interrupted turn (-want +got):\n%s", diff)
				}
				if diff := cmp.Diff(p.transcript, chainShape(t, env, long)); diff != "" {
					t.Errorf("the transcript (-want +got):\n%s", diff)
				}
				if p.subTranscript != nil {
					main, _ := session.Find(env.configDir, env.c.SessionID())
					ids, err := session.ListSubagents(main)
					if err != nil || len(ids) != 1 {
						t.Fatalf("subagent transcripts %v, %v; want one", ids, err)
					}
					var got []string
					for _, l := range readTranscript(t, session.SubagentPath(main, ids[0])) {
						got = append(got, l.shape())
					}
					if diff := cmp.Diff(p.subTranscript, got); diff != "" {
						t.Errorf("the subagent's transcript (-want +got):\n%s", diff)
					}
				}

				// A fork resumed from the transcript.
				fork := agentloop.Options{Provider: provider(t, env.srv, nil), Cwd: env.cwd, ConfigDir: env.configDir,
					Resume: env.c.SessionID(), ForkSession: true, Tools: []string{}, SettingSources: []settings.SettingSource{}}
				if _, err := agentloop.Query(context.Background(), "forked prompt", &fork).Result(); err != nil {
					t.Fatalf("the fork: %v", err)
				}
				msgs := env.srv.LastRequest().Params.Messages
				n := len(msgs)
				if n < 3 || lastText(msgs[n-3]) != p.marker || lastText(msgs[n-2]) != engine.NoResponse || lastText(msgs[n-1]) != "forked prompt" {
					t.Errorf("the fork's request ends %s; want the marker, %q, the prompt", summary(msgs), engine.NoResponse)
				}

				// The next prompt of the session itself.
				if entry == "Client.Interrupt" {
					env.send(t, agentloop.UserInput{Text: "second prompt"})
					if res, _ := r.result(t); res.IsError {
						t.Fatalf("the next turn: %+v", res)
					}
				} else if _, err := env.c.Query(context.Background(), "second prompt").Result(); err != nil {
					t.Fatal(err)
				}
				msgs = env.srv.LastRequest().Params.Messages
				if err := agentlooptest.ValidateHistory(msgs); err != nil {
					t.Errorf("the next request is invalid: %v", err)
				}
				last := msgs[len(msgs)-1].Content
				if len(last) < 2 || last[len(last)-2].Text != p.marker+"\n" || last[len(last)-1].Text != "second prompt" {
					t.Errorf("the next request's user turn ends %s; want the marker and the prompt", summary(msgs[len(msgs)-1:]))
				}
				b, _ := json.Marshal(msgs)
				if c := strings.Count(string(b), "first prompt"); c != 1 {
					t.Errorf("the interrupted prompt is sent %d times, want once", c)
				}
				if p.name == "text" && (len(msgs) < 2 || msgs[1].Role != "assistant" || !strings.HasPrefix(long, lastText(msgs[1])) || lastText(msgs[1]) == "") {
					t.Errorf("the partial reply is not sent back: %s", summary(msgs))
				}
			})
		}
	}
}

// readyChans are the signals a row's fakes give.
type readyChans struct {
	asked chan struct{} // closed when the permission is asked or the subagent's request comes
}

// turnShape describes an interrupted turn's stream: the aborted reply,
// each tool result (stopped, rejected, or its text), the subagent's lines
// ("@sub "), task notifications, the marker and the result.
func turnShape(turn []agentloop.Message) []string {
	var got []string
	for _, m := range turn {
		switch m := m.(type) {
		case *agentloop.AssistantMessage:
			if m.Aborted {
				got = append(got, "aborted reply")
			}
		case *agentloop.SystemMessage:
			if m.Subtype == "task_notification" {
				var st string
				_ = json.Unmarshal(m.Data["status"], &st)
				got = append(got, "task_notification "+st)
			}
		case *agentloop.UserMessage:
			sub := ""
			if m.ParentToolUseID != nil {
				sub = "@sub "
			}
			for _, b := range m.Message.Content {
				switch {
				case b.Type == model.TypeToolResult && b.ResultText() == engine.StoppedText:
					got = append(got, sub+"stopped call")
				case b.Type == model.TypeToolResult && b.ResultText() == engine.RejectedText:
					got = append(got, sub+"rejected call")
				case b.Type == model.TypeToolResult:
					got = append(got, sub+"result "+b.ResultText())
				case b.Type == model.TypeText && b.Text != "first prompt":
					got = append(got, sub+b.Text)
				}
			}
		case *agentloop.ResultMessage:
			got = append(got, m.Subtype+" "+m.TerminalReason)
		}
	}
	return got
}

// chainShape reads the session's transcript back and describes its main
// chain, one item per content block.
func chainShape(t *testing.T, env *streamEnv, long string) []string {
	t.Helper()
	p, err := session.Find(env.configDir, env.c.SessionID())
	if err != nil {
		t.Fatal(err)
	}
	tr, err := session.Load(p)
	if err != nil {
		t.Fatal(err)
	}
	return interrupttest.ChainShape(tr, long)
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
