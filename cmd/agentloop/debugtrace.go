package main

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
)

// debugTrace writes one debug-level line per model call and per tool call
// to the diagnostics log, read off the message stream the command prints
// (it sees what the user sees, so it needs no hook into the engine):
//
//	level=DEBUG msg="model call" tag=model_call model=… input_tokens=… output_tokens=… cache_read_tokens=… cache_creation_tokens=… stop_reason=… ms=…
//	level=DEBUG msg="tool call" tag=tool_call tool=Read tool_use_id=… ms=… is_error=false
//
// A model call lasts from the message that let it start (the session's
// init, or the user or tool-result message before it) to the last message
// of its reply; a tool call from the assistant message that asked for it
// to the tool result. Both include the time the stream took to reach the
// command, so they are close to, not exactly, the API's and the tool's
// own times. Subagents' calls carry parent_tool_use_id. A nil *debugTrace
// does nothing.
type debugTrace struct {
	log *slog.Logger
	now func() time.Time

	mu      sync.Mutex
	threads map[string]*traceThread // by parent_tool_use_id; "" is the main thread
	tools   map[string]toolStart    // tool calls asked for and not answered, by tool_use id
}

// traceThread is the model call under way in one thread.
type traceThread struct {
	start   time.Time          // when the call started
	reply   *message.Assistant // the reply's latest message; nil: none being read
	replyAt time.Time          // when reply arrived
}

type toolStart struct {
	name   string
	parent string
	at     time.Time
}

// newDebugTrace returns a trace writing to log, or nil for a nil log.
func newDebugTrace(log *slog.Logger) *debugTrace {
	if log == nil {
		return nil
	}
	return &debugTrace{log: log, now: time.Now, threads: map[string]*traceThread{}, tools: map[string]toolStart{}}
}

// see takes the next message of the stream.
func (t *debugTrace) see(m agentloop.Message) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	switch m := m.(type) {
	case *message.Assistant:
		th := t.thread(parentOf(m.ParentToolUseID), now)
		if th.reply != nil && th.reply.Message.ID != m.Message.ID {
			t.flush(th) // a new reply right after the last one
			th.start = th.replyAt
		}
		th.reply, th.replyAt = m, now
		for _, c := range m.Message.Content {
			if c.Type == model.TypeToolUse { // a server tool's result comes in the same reply

				t.tools[c.ID] = toolStart{name: c.Name, parent: parentOf(m.ParentToolUseID), at: now}
			}
		}
	case *message.User:
		th := t.thread(parentOf(m.ParentToolUseID), now)
		t.flush(th)
		th.start = now
		for _, c := range m.Message.Content {
			if c.Type != model.TypeToolResult {
				continue
			}
			s, ok := t.tools[c.ToolUseID]
			if !ok {
				continue
			}
			delete(t.tools, c.ToolUseID)
			attrs := []slog.Attr{slog.String("tag", tagToolCall), slog.String("tool", s.name), slog.String("tool_use_id", c.ToolUseID),
				slog.Int64("ms", now.Sub(s.at).Milliseconds()), slog.Bool("is_error", c.IsError != nil && *c.IsError)}
			if s.parent != "" {
				attrs = append(attrs, slog.String("parent_tool_use_id", s.parent))
			}
			t.log.LogAttrs(context.Background(), slog.LevelDebug, "tool call", attrs...)
		}
	case *message.Result:
		for _, th := range t.threads {
			t.flush(th)
		}
		clear(t.threads)
		clear(t.tools)
	case *message.System:
		if m.Subtype == "init" {
			t.thread("", now).start = now
		}
	}
}

// thread returns the state of a thread, starting it at now.
func (t *debugTrace) thread(parent string, now time.Time) *traceThread {
	th, ok := t.threads[parent]
	if !ok {
		th = &traceThread{start: now}
		t.threads[parent] = th
	}
	return th
}

// flush writes the line of th's reply, if one is being read.
func (t *debugTrace) flush(th *traceThread) {
	a := th.reply
	if a == nil {
		return
	}
	th.reply = nil
	u := a.Message.Usage
	attrs := []slog.Attr{slog.String("tag", tagModelCall), slog.String("model", a.Message.Model),
		slog.Int64("input_tokens", u.InputTokens), slog.Int64("output_tokens", u.OutputTokens),
		slog.Int64("cache_read_tokens", u.CacheReadInputTokens), slog.Int64("cache_creation_tokens", u.CacheCreationInputTokens)}
	if a.Message.StopReason != nil {
		attrs = append(attrs, slog.String("stop_reason", *a.Message.StopReason))
	}
	attrs = append(attrs, slog.Int64("ms", th.replyAt.Sub(th.start).Milliseconds()))
	if a.Error != "" {
		attrs = append(attrs, slog.String("error", a.Error))
	}
	if a.ParentToolUseID != nil {
		attrs = append(attrs, slog.String("parent_tool_use_id", *a.ParentToolUseID))
	}
	t.log.LogAttrs(context.Background(), slog.LevelDebug, "model call", attrs...)
}

func parentOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
