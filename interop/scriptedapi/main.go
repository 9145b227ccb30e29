// Command scriptedapi serves a scripted fake of the Anthropic Messages API on
// loopback for the interop tests in interop/ts. It is a thin command-line
// wrapper around package agentlooptest.
//
// Usage:
//
//	scriptedapi -script script.json -record requests.jsonl
//
// It listens on 127.0.0.1 (an ephemeral port), prints one line with its base
// URL (e.g. http://127.0.0.1:40123) on standard output, and serves until its
// standard input reaches end of file or it receives SIGINT or SIGTERM. After
// every answered messages request, and once more before it exits, it rewrites
// the record file: one JSON object per line for every request received, in
// order (see [recorded]).
//
// The script is a JSON object:
//
//	{
//	  "replies":   [Reply, ...],   // the main queue, one per model turn
//	  "side":      Reply,          // answers requests that are not agent-loop
//	                               // turns (no tools declared), without
//	                               // consuming the main queue
//	  "routes":    [{"user_contains": "...", "system_contains": "...",
//	                 "replies": [Reply, ...]}, ...],
//	  "exhausted": Reply,          // the answer once a queue is empty
//	  "lenient":   false           // true: do not enforce the API's history rules
//	}
//
// and a Reply is an object with one of
//
//	"text": "..."                                  one text block
//	"tool_use": {"id": "...", "name": "...", "input": {...}}
//	"blocks": [{"text": "..."} | {"tool_use": {...}} | {"thinking": "..."}, ...]
//	"error": {"status": 500, "type": "api_error", "message": "..."}
//
// and optionally "stop_reason", "model", "delay_ms" (a wait before the
// answer), "chunk" (the most characters per delta event) with
// "event_delay_ms" (a wait between two events, for a slow stream) and
// "usage" ({"input_tokens": N, "output_tokens": N}).
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

type script struct {
	Replies   []replySpec `json:"replies"`
	Side      *replySpec  `json:"side"`
	Routes    []routeSpec `json:"routes"`
	Exhausted *replySpec  `json:"exhausted"`
	Lenient   bool        `json:"lenient"`
}

type routeSpec struct {
	UserContains   string      `json:"user_contains"`
	SystemContains string      `json:"system_contains"`
	Replies        []replySpec `json:"replies"`
}

type toolUseSpec struct {
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type blockSpec struct {
	Text     *string      `json:"text"`
	ToolUse  *toolUseSpec `json:"tool_use"`
	Thinking *string      `json:"thinking"`
}

type errorSpec struct {
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

type replySpec struct {
	Text       *string      `json:"text"`
	ToolUse    *toolUseSpec `json:"tool_use"`
	Blocks     []blockSpec  `json:"blocks"`
	Error      *errorSpec   `json:"error"`
	StopReason string       `json:"stop_reason"`
	Model      string       `json:"model"`
	DelayMS    int          `json:"delay_ms"`
	Chunk      int          `json:"chunk"`
	EventMS    int          `json:"event_delay_ms"`
	Usage      *model.Usage `json:"usage"`
}

// recorded is one line of the record file.
type recorded struct {
	Kind        string          `json:"kind"`
	Method      string          `json:"method"`
	Path        string          `json:"path"`
	Model       string          `json:"model,omitempty"`
	System      string          `json:"system,omitempty"`
	LastUser    string          `json:"last_user,omitempty"`
	Tools       []string        `json:"tools,omitempty"`
	ToolResults []recordedTR    `json:"tool_results,omitempty"`
	Messages    int             `json:"messages"`
	Body        json.RawMessage `json:"body,omitempty"`
}

type recordedTR struct {
	ToolUseID string `json:"tool_use_id"`
	Text      string `json:"text"`
	IsError   bool   `json:"is_error"`
}

func (b blockSpec) content() (model.Content, error) {
	switch {
	case b.Text != nil:
		return model.TextBlock(*b.Text), nil
	case b.ToolUse != nil:
		return agentlooptest.ToolUseBlock(b.ToolUse.ID, b.ToolUse.Name, inputOf(b.ToolUse.Input)), nil
	case b.Thinking != nil:
		return agentlooptest.ThinkingBlock(*b.Thinking, ""), nil
	}
	return model.Content{}, errors.New("block has none of text, tool_use, thinking")
}

func inputOf(raw json.RawMessage) any {
	if len(raw) == 0 {
		return map[string]any{}
	}
	return raw
}

func (r replySpec) reply() (agentlooptest.Reply, error) {
	var rep agentlooptest.Reply
	if r.DelayMS < 0 || r.Chunk < 0 || r.EventMS < 0 {
		return rep, fmt.Errorf("reply has a negative delay_ms, chunk or event_delay_ms (%d, %d, %d)", r.DelayMS, r.Chunk, r.EventMS)
	}
	switch {
	case r.Error != nil:
		rep = agentlooptest.Error(r.Error.Status, r.Error.Type, r.Error.Message)
	case r.Text != nil:
		rep = agentlooptest.Text(*r.Text)
	case r.ToolUse != nil:
		rep = agentlooptest.ToolUse(r.ToolUse.ID, r.ToolUse.Name, inputOf(r.ToolUse.Input))
	case len(r.Blocks) > 0:
		var cs []model.Content
		for i, b := range r.Blocks {
			c, err := b.content()
			if err != nil {
				return rep, fmt.Errorf("block %d: %w", i, err)
			}
			cs = append(cs, c)
		}
		rep = agentlooptest.Blocks(cs...)
	default:
		return rep, errors.New("reply has none of text, tool_use, blocks, error")
	}
	rep.StopReason = r.StopReason
	rep.Model = r.Model
	rep.Delay = time.Duration(r.DelayMS) * time.Millisecond
	rep.Chunk = r.Chunk
	rep.EventDelay = time.Duration(r.EventMS) * time.Millisecond
	if r.Usage != nil {
		rep.Usage = *r.Usage
	}
	return rep, nil
}

func replies(specs []replySpec, record func(*agentlooptest.Request) error) ([]agentlooptest.Reply, error) {
	out := make([]agentlooptest.Reply, 0, len(specs))
	for i, s := range specs {
		r, err := s.reply()
		if err != nil {
			return nil, fmt.Errorf("reply %d: %w", i, err)
		}
		r.Expect = record
		out = append(out, r)
	}
	return out, nil
}

func main() {
	scriptPath := flag.String("script", "", "path of the JSON script (required)")
	recordPath := flag.String("record", "", "path of the JSON-lines request record (optional)")
	flag.Parse()
	if err := run(*scriptPath, *recordPath, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "scriptedapi:", err)
		os.Exit(1)
	}
}

func run(scriptPath, recordPath string, stdin io.Reader, stdout io.Writer) error {
	if scriptPath == "" {
		return errors.New("-script is required")
	}
	data, err := os.ReadFile(scriptPath)
	if err != nil {
		return fmt.Errorf("read script: %w", err)
	}
	var sc script
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sc); err != nil {
		return fmt.Errorf("parse script %s: %w", scriptPath, err)
	}

	srv, err := agentlooptest.Start()
	if err != nil {
		return fmt.Errorf("start server: %w", err)
	}
	defer srv.Close()

	var mu sync.Mutex
	dump := func() error {
		if recordPath == "" {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		return writeRecord(recordPath, srv.AllRequests())
	}
	// Expect runs after the request is recorded and before the answer is
	// sent, so the record file is complete by the time the engine sees the
	// answer.
	record := func(*agentlooptest.Request) error { return dump() }

	if sc.Lenient {
		srv.Lenient()
	}
	main, err := replies(sc.Replies, record)
	if err != nil {
		return fmt.Errorf("replies: %w", err)
	}
	srv.Push(main...)
	for i, rt := range sc.Routes {
		rs, err := replies(rt.Replies, record)
		if err != nil {
			return fmt.Errorf("route %d: %w", i, err)
		}
		srv.Route(func(r *agentlooptest.Request) bool {
			if rt.UserContains != "" && !strings.Contains(r.LastUserText(), rt.UserContains) {
				return false
			}
			if rt.SystemContains != "" && !strings.Contains(r.SystemText(), rt.SystemContains) {
				return false
			}
			return true
		}, rs...)
	}
	if sc.Side != nil {
		side, err := sc.Side.reply()
		if err != nil {
			return fmt.Errorf("side: %w", err)
		}
		side.Expect = record
		srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
			return side, len(r.Params.Tools) == 0
		})
	}
	exhausted := agentlooptest.Text("(script exhausted)")
	if sc.Exhausted != nil {
		if exhausted, err = sc.Exhausted.reply(); err != nil {
			return fmt.Errorf("exhausted: %w", err)
		}
	}
	exhausted.Expect = record
	srv.SetExhausted(exhausted)

	if _, err := fmt.Fprintln(stdout, srv.URL); err != nil {
		return fmt.Errorf("print URL: %w", err)
	}

	done := make(chan struct{})
	go func() {
		// Drain stdin; EOF (the parent closed the pipe or died) ends the run.
		io.Copy(io.Discard, bufio.NewReader(stdin))
		close(done)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	srv.Close()
	if err := dump(); err != nil {
		return fmt.Errorf("write record: %w", err)
	}
	return nil
}

// writeRecord replaces path atomically with one JSON line per request.
func writeRecord(path string, reqs []*agentlooptest.Request) error {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for _, r := range reqs {
		rec := recorded{
			Kind:     r.Kind,
			Method:   r.Method,
			Path:     r.Path,
			Model:    r.Params.Model,
			System:   r.SystemText(),
			LastUser: r.LastUserText(),
			Tools:    r.ToolNames(),
			Messages: len(r.Params.Messages),
		}
		if json.Valid(r.Body) {
			rec.Body = r.Body
		}
		for _, c := range r.ToolResults() {
			rec.ToolResults = append(rec.ToolResults, recordedTR{
				ToolUseID: c.ToolUseID,
				Text:      c.ResultText(),
				IsError:   c.IsError != nil && *c.IsError,
			})
		}
		if err := enc.Encode(rec); err != nil {
			return fmt.Errorf("encode request %s %s: %w", r.Method, r.Path, err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".record-*")
	if err != nil {
		return fmt.Errorf("create temp record: %w", err)
	}
	if _, err := tmp.WriteString(b.String()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("write temp record: %w", err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("close temp record: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replace record: %w", err)
	}
	return nil
}
