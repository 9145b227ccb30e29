package conversation_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// streamEnv is a client for streaming input whose tool "hold" blocks until
// released or cancelled, and whose tool "quick" answers at once.
type streamEnv struct {
	srv       *agentlooptest.Server
	c         *agentloop.Client
	configDir string
	cwd       string
	started   chan struct{} // gets a value each time hold starts
	release   chan struct{}
}

func newStreamEnv(t *testing.T, opts *agentloop.Options, replies ...agentlooptest.Reply) *streamEnv {
	t.Helper()
	env := &streamEnv{srv: agentlooptest.NewTB(t, replies...), started: make(chan struct{}, 10), release: make(chan struct{})}
	hold := agentloop.NewTool("hold", "Holds.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		env.started <- struct{}{}
		select {
		case <-ctx.Done():
			return agentloop.ToolResult{}, ctx.Err()
		case <-env.release:
			return agentloop.TextResult("released"), nil
		}
	}, &agentloop.ToolOptions{ReadOnly: true})
	quick := agentloop.NewTool("quick", "Answers.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		return agentloop.TextResult("ok"), nil
	}, &agentloop.ToolOptions{ReadOnly: true})
	if opts == nil {
		opts = &agentloop.Options{}
	}
	opts.Provider = provider(t, env.srv, nil)
	opts.Cwd, opts.ConfigDir = t.TempDir(), t.TempDir()
	env.configDir, env.cwd = opts.ConfigDir, opts.Cwd
	if opts.Tools == nil {
		opts.Tools = []string{}
	}
	opts.CustomTools = append([]agentloop.Tool{hold, quick}, opts.CustomTools...)
	opts.SettingSources = []settings.SettingSource{}
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	env.c = c
	t.Cleanup(func() { c.Close() })
	return env
}

// send queues text and fails the test on error.
func (env *streamEnv) send(t *testing.T, in agentloop.UserInput) string {
	t.Helper()
	id, err := env.c.Send(in)
	if err != nil {
		t.Fatalf("Send(%q): %v", in.Text, err)
	}
	return id
}

// consumer ranges over Messages on its own goroutine.
type consumer struct {
	msgs   chan agentloop.Message
	errs   chan error
	done   chan struct{}
	cancel context.CancelFunc
}

func consume(c *agentloop.Client) *consumer {
	ctx, cancel := context.WithCancel(context.Background())
	r := &consumer{msgs: make(chan agentloop.Message, 1000), errs: make(chan error, 100), done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		for m, err := range c.Messages(ctx) {
			if err != nil {
				r.errs <- err
				continue
			}
			r.msgs <- m
		}
	}()
	return r
}

// result waits for the next result; the messages before it are returned too.
func (r *consumer) result(t *testing.T) (*agentloop.ResultMessage, []agentloop.Message) {
	t.Helper()
	var seen []agentloop.Message
	deadline := time.After(10 * time.Second)
	for {
		select {
		case m := <-r.msgs:
			seen = append(seen, m)
			if res, ok := m.(*agentloop.ResultMessage); ok {
				return res, seen
			}
		case err := <-r.errs:
			t.Fatalf("stream error: %v", err)
		case <-deadline:
			t.Fatal("timed out waiting for a result")
		}
	}
}

func (r *consumer) stop(t *testing.T) {
	t.Helper()
	r.cancel()
	waitFor(t, r.done, "the stream to end")
}

// Messages sent while a turn's last reply is on its way (no tool round
// left to fold them into) wait for the turn and then run one after the
// other, each as a turn of its own with its own init and result, in the
// order sent.
func TestStreamQueuedMessagesRunInOrder(t *testing.T) {
	one := agentlooptest.Text("one")
	gate := make(chan struct{})
	one.Expect = func(*agentlooptest.Request) error {
		gate <- struct{}{} // the request is in; hold the reply until released
		<-gate
		return nil
	}
	env := newStreamEnv(t, nil, one, agentlooptest.Text("two"), agentlooptest.Text("three"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	waitFor(t, gate, "the first request")
	// Two prompts queued while the first turn's reply is out run as one
	// turn, as the reference's do (texts joined by a newline); a message of
	// another priority keeps a turn of its own.
	env.send(t, agentloop.UserInput{Text: "second"})
	env.send(t, agentloop.UserInput{Text: "third"})
	env.send(t, agentloop.UserInput{Text: "fourth", Priority: agentloop.PriorityLater})
	if got := len(env.c.Queued()); got != 3 {
		t.Errorf("%d queued while the first turn runs, want 3", got)
	}
	close(gate)
	var texts []string
	for range 3 {
		res, seen := r.result(t)
		if res.IsError {
			t.Fatalf("error result %+v", res)
		}
		if _, ok := seen[0].(*agentloop.SystemMessage); !ok {
			t.Errorf("a turn starts with %T, want system/init", seen[0])
		}
		texts = append(texts, res.Text())
	}
	if diff := cmp.Diff([]string{"one", "two", "three"}, texts); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	var prompts []string
	for _, q := range env.srv.Requests()[1:] {
		prompts = append(prompts, q.LastUserText())
	}
	if diff := cmp.Diff([]string{"second\nthird", "fourth"}, prompts); diff != "" {
		t.Errorf("the queued prompts were sent as (-want +got):\n%s", diff)
	}
}

// Interrupt during a tool ends the turn with an aborted_tools error
// result; the queued message then runs, on a history the API accepts (the
// strict server checks it) in which the cut call has an error result.
func TestStreamInterruptMidTool(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}), agentlooptest.Text("after"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	waitFor(t, env.started, "the tool to start")
	second := env.send(t, agentloop.UserInput{Text: "second"})
	got, err := env.c.Interrupt(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(agentloop.InterruptResult{StillQueued: []string{second}}, got); diff != "" {
		t.Errorf("Interrupt (-want +got):\n%s", diff)
	}
	res, _ := r.result(t)
	if !res.IsError || res.Subtype != "error_during_execution" || res.TerminalReason != "aborted_tools" {
		t.Errorf("interrupted turn: %s %q %v", res.Subtype, res.TerminalReason, res.Errors)
	}
	res, _ = r.result(t)
	if res.IsError || res.Text() != "after" {
		t.Fatalf("next turn: %+v", res)
	}
	reqs := env.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	tr, ok := reqs[1].ToolResult("toolu_1")
	if !ok || tr.IsError == nil || !*tr.IsError {
		t.Errorf("the cut call's result in the next request: %+v (found %v)", tr, ok)
	}
	if err := agentlooptest.ValidateHistory(reqs[1].Params.Messages); err != nil {
		t.Errorf("next request's history: %v", err)
	}
}

// Interrupt with CancelQueued also empties the queue; with no turn running
// Interrupt does nothing.
func TestStreamInterruptCancelQueued(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}), agentlooptest.Text("later"))
	if got, err := env.c.Interrupt(context.Background(), &agentloop.InterruptOptions{CancelQueued: true}); err != nil ||
		got.StillQueued != nil || got.Cancelled != nil {
		t.Errorf("Interrupt with nothing running = %+v, %v", got, err)
	}
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	waitFor(t, env.started, "the tool to start")
	a := env.send(t, agentloop.UserInput{Text: "second"})
	b := env.send(t, agentloop.UserInput{Text: "third", Priority: agentloop.PriorityLater})
	got, err := env.c.Interrupt(context.Background(), &agentloop.InterruptOptions{CancelQueued: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(agentloop.InterruptResult{StillQueued: []string{}, Cancelled: []string{a, b}}, got); diff != "" {
		t.Errorf("Interrupt (-want +got):\n%s", diff)
	}
	res, _ := r.result(t)
	if res.TerminalReason != "aborted_tools" {
		t.Errorf("interrupted turn: %q", res.TerminalReason)
	}
	env.send(t, agentloop.UserInput{Text: "fourth"})
	res, _ = r.result(t)
	if res.Text() != "later" {
		t.Errorf("next result %q", res.Text())
	}
	// The interrupted turn's marker, then the next prompt: the cancelled
	// messages are gone.
	if last, want := env.srv.LastRequest().LastUserText(), engine.Interrupted+"\n\nfourth"; last != want {
		t.Errorf("the request after the interrupt sent %q, want %q", last, want)
	}
}

// A message with ShouldQuery false joins the conversation without a
// request; the next turn sends it before its own prompt.
func TestStreamShouldQueryFalse(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.Text("noted"))
	no := false
	note := env.send(t, agentloop.UserInput{Text: "remember: the code is 42", ShouldQuery: &no})
	env.send(t, agentloop.UserInput{Text: "what is the code?"})
	r := consume(env.c)
	defer r.stop(t)
	res, seen := r.result(t)
	if res.IsError {
		t.Fatalf("result %+v", res)
	}
	inits := 0
	for _, m := range seen {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "init" {
			inits++
		}
	}
	if inits != 1 || env.srv.Len() != 1 {
		t.Errorf("%d turns, %d requests; want 1 and 1", inits, env.srv.Len())
	}
	msgs := env.srv.LastRequest().Params.Messages
	var texts []string
	for _, b := range msgs[0].Content {
		texts = append(texts, b.Text)
	}
	joined := strings.Join(texts, "|")
	if i, j := strings.Index(joined, "the code is 42"), strings.Index(joined, "what is the code?"); i < 0 || j < i {
		t.Errorf("first user message %q: want the note before the question", joined)
	}
	if note == "" {
		t.Error("no uuid for the note")
	}
}

// A message queued while a turn ends at max turns (sent during its last
// tool round, so not folded) runs as its own turn, with the turn count
// started afresh.
func TestStreamMaxTurnsThenQueued(t *testing.T) {
	env := newStreamEnv(t, &agentloop.Options{MaxTurns: 2},
		agentlooptest.ToolUse("toolu_1", "quick", map[string]any{}), agentlooptest.ToolUse("toolu_2", "hold", map[string]any{}),
		agentlooptest.ToolUse("toolu_3", "quick", map[string]any{}), agentlooptest.Text("done"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	waitFor(t, env.started, "the tool to start")
	env.send(t, agentloop.UserInput{Text: "second"})
	close(env.release)
	res, _ := r.result(t)
	if res.Subtype != "error_max_turns" {
		t.Fatalf("first turn: %s %v", res.Subtype, res.Errors)
	}
	res, _ = r.result(t)
	if res.IsError || res.Text() != "done" {
		t.Errorf("queued turn: %s %q %v", res.Subtype, res.Text(), res.Errors)
	}
}

// The budget counts every turn of the stream: once reached, the turn ends
// in error_max_budget_usd and later messages end so too, without a
// request; "/clear" starts it afresh.
func TestStreamBudgetAcrossMessagesAndClear(t *testing.T) {
	usage := model.Usage{InputTokens: 100_000, OutputTokens: 5}
	reply := func(s string) agentlooptest.Reply {
		r := agentlooptest.Text(s)
		r.Usage = usage
		return r
	}
	env := newStreamEnv(t, &agentloop.Options{Model: "claude-sonnet-4-5", MaxBudgetUSD: 0.5}, // $0.30 a reply
		reply("one"), reply("two"), reply("three"))
	r := consume(env.c)
	defer r.stop(t)
	want := []struct {
		prompt, subtype string
		requests        int
	}{
		{"first", "success", 1},
		{"second", "error_max_budget_usd", 2}, // $0.60 spent
		{"third", "error_max_budget_usd", 2},  // no request
		{"/clear", "success", 2},
		{"fourth", "success", 3},
	}
	for _, w := range want {
		env.send(t, agentloop.UserInput{Text: w.prompt})
		res, _ := r.result(t)
		if res.Subtype != w.subtype || env.srv.Len() != w.requests {
			t.Errorf("%s: %s (%v), %d requests; want %s, %d", w.prompt, res.Subtype, res.Errors, env.srv.Len(), w.subtype, w.requests)
		}
	}
}

// Image blocks of a queued message reach the request after its text.
func TestStreamImageContent(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.Text("a dot"))
	img := model.Content{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}}
	env.send(t, agentloop.UserInput{Text: "what is this?", Content: []model.Content{img}})
	r := consume(env.c)
	defer r.stop(t)
	r.result(t)
	last := env.srv.LastRequest().LastUserMessage()
	var types []string
	for _, b := range last.Content {
		types = append(types, b.Type)
	}
	if !slices.Contains(types, "image") || last.Content[len(last.Content)-1].Source == nil ||
		last.Content[len(last.Content)-1].Source.Data != "iVBORw0KGgo=" {
		t.Errorf("last user message blocks %v", types)
	}
}

// Close reports the messages still queued; a running turn is cancelled
// and the stream ends with ErrClosed.
func TestStreamCloseReportsQueued(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		env := newStreamEnv(t, nil)
		a := env.send(t, agentloop.UserInput{Text: "one"})
		b := env.send(t, agentloop.UserInput{Text: "two"})
		err := env.c.Close()
		var d *agentloop.DroppedInputError
		if !errors.As(err, &d) || !errors.Is(err, agentloop.ErrInputDropped) {
			t.Fatalf("Close = %v, want a DroppedInputError", err)
		}
		if diff := cmp.Diff([]string{a, b}, d.UUIDs); diff != "" {
			t.Errorf("dropped (-want +got):\n%s", diff)
		}
		if _, err := env.c.Send(agentloop.UserInput{Text: "three"}); !errors.Is(err, agentloop.ErrClosed) {
			t.Errorf("Send after Close = %v", err)
		}
	})
	t.Run("running", func(t *testing.T) {
		env := newStreamEnv(t, nil, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}))
		env.send(t, agentloop.UserInput{Text: "one"})
		r := consume(env.c)
		waitFor(t, env.started, "the tool to start")
		b := env.send(t, agentloop.UserInput{Text: "two"})
		err := env.c.Close()
		var d *agentloop.DroppedInputError
		if !errors.As(err, &d) || !slices.Equal(d.UUIDs, []string{b}) {
			t.Errorf("Close = %v, want %s dropped", err, b)
		}
		waitFor(t, r.done, "the stream to end")
		select {
		case err := <-r.errs:
			if !errors.Is(err, agentloop.ErrClosed) {
				t.Errorf("stream error %v, want ErrClosed", err)
			}
		default:
			t.Error("the stream ended without an error")
		}
		if env.srv.Len() != 1 {
			t.Errorf("%d requests", env.srv.Len())
		}
	})
}

// Send refuses what it cannot queue, naming the reason.
func TestStreamSendValidation(t *testing.T) {
	env := newStreamEnv(t, nil)
	env.send(t, agentloop.UserInput{Text: "x", UUID: "u-1"})
	tests := []struct {
		name string
		in   agentloop.UserInput
		want string
	}{
		{"bad priority", agentloop.UserInput{Text: "x", Priority: "urgent"}, `"urgent"`},
		{"empty", agentloop.UserInput{}, "no text"},
		{"tool result", agentloop.UserInput{Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "t"}}}, `"tool_result"`},
		{"image without source", agentloop.UserInput{Content: []model.Content{{Type: model.TypeImage}}}, "without a source"},
		{"duplicate uuid", agentloop.UserInput{Text: "y", UUID: "u-1"}, "u-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := env.c.Send(tt.in)
			if !errors.Is(err, agentloop.ErrInvalidInput) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Send = %v, want ErrInvalidInput naming %s", err, tt.want)
			}
		})
	}
}

// Priorities order the queue: now before next before later, in sending
// order within one; a "now" message interrupts the running turn.
func TestStreamPriorities(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}),
		agentlooptest.Text("r-now"), agentlooptest.Text("r-next"), agentlooptest.Text("r-later"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	waitFor(t, env.started, "the tool to start")
	later := env.send(t, agentloop.UserInput{Text: "later", Priority: agentloop.PriorityLater})
	next := env.send(t, agentloop.UserInput{Text: "next"})
	if diff := cmp.Diff([]string{next, later}, env.c.Queued()); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	env.send(t, agentloop.UserInput{Text: "now", Priority: agentloop.PriorityNow})
	res, _ := r.result(t)
	if res.TerminalReason != "aborted_tools" {
		t.Errorf("a now message did not interrupt the turn: %s %q", res.Subtype, res.TerminalReason)
	}
	var got []string
	for range 3 {
		res, _ := r.result(t)
		got = append(got, res.Text())
	}
	if diff := cmp.Diff([]string{"r-now", "r-next", "r-later"}, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	var prompts []string
	for _, q := range env.srv.Requests()[1:] {
		prompts = append(prompts, q.LastUserText())
	}
	// The interrupted turn's marker goes before the message that cut it.
	if diff := cmp.Diff([]string{engine.Interrupted + "\n\nnow", "next", "later"}, prompts); diff != "" {
		t.Errorf("prompts (-want +got):\n%s", diff)
	}
}

// While Messages is open, Query is busy, and the other way round.
func TestStreamBusy(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.Text("ok"))
	env.send(t, agentloop.UserInput{Text: "hi"})
	r := consume(env.c)
	r.result(t) // the stream is open and waits for the next message
	if _, err := env.c.Query(context.Background(), "hi").Result(); !errors.Is(err, agentloop.ErrBusy) {
		t.Errorf("Query while Messages is open = %v, want ErrBusy", err)
	}
	for _, err := range env.c.Messages(context.Background()) {
		if !errors.Is(err, agentloop.ErrBusy) {
			t.Errorf("second Messages = %v, want ErrBusy", err)
		}
	}
	r.stop(t)
}

// SetPermissionMode checks the mode and takes effect at once.
func TestStreamSetPermissionMode(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.Text("ok"))
	if err := env.c.SetPermissionMode("sideways"); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("unknown mode: %v", err)
	}
	if err := env.c.SetPermissionMode(agentloop.PermissionPlan); err != nil {
		t.Fatal(err)
	}
	if got := env.c.PermissionMode(); got != agentloop.PermissionPlan {
		t.Errorf("mode %q", got)
	}
	env.send(t, agentloop.UserInput{Text: "hi"})
	r := consume(env.c)
	defer r.stop(t)
	_, seen := r.result(t)
	if s, ok := seen[0].(*agentloop.SystemMessage); !ok || s.Init == nil || s.Init.PermissionMode != "plan" {
		t.Errorf("init %+v", seen[0])
	}
}

// SupportedModels lists the aliases with what they resolve to;
// SupportedAgents the built-in agent and the caller's, sorted.
func TestSupportedModelsAndAgents(t *testing.T) {
	env := newStreamEnv(t, &agentloop.Options{Agents: map[string]agentloop.AgentDefinition{
		"reviewer": {Description: "Reviews code.", Prompt: "Review.", Model: "haiku"}}})
	models := env.c.SupportedModels()
	i := slices.IndexFunc(models, func(m agentloop.ModelInfo) bool { return m.Value == "opus" })
	if i < 0 || models[i].ResolvedModel != pricing.Resolve("opus") || !models[i].SupportsEffort {
		t.Errorf("models %+v", models)
	}
	var names []string
	for _, a := range env.c.SupportedAgents() {
		names = append(names, a.Name)
		if a.Name == "reviewer" && (a.Description != "Reviews code." || a.Model != "haiku") {
			t.Errorf("reviewer %+v", a)
		}
	}
	if diff := cmp.Diff([]string{agentloop.GeneralPurposeAgent, "reviewer"}, names); diff != "" {
		t.Errorf("agents (-want +got):\n%s", diff)
	}
}

// Interrupt while the model's reply is awaited ends the turn with
// aborted_streaming; the conversation goes on.
func TestStreamInterruptMidRequest(t *testing.T) {
	slow := agentlooptest.Text("never")
	slow.Delay = time.Minute
	env := newStreamEnv(t, nil, slow, agentlooptest.Text("fine"))
	env.send(t, agentloop.UserInput{Text: "first"})
	r := consume(env.c)
	defer r.stop(t)
	for deadline := time.Now().Add(10 * time.Second); env.srv.Len() == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no request")
		}
	}
	if _, err := env.c.Interrupt(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	res, _ := r.result(t)
	if res.Subtype != "error_during_execution" || res.TerminalReason != "aborted_streaming" ||
		!strings.Contains(strings.Join(res.Errors, " "), agentloop.ErrInterrupted.Error()) {
		t.Errorf("interrupted turn: %s %q %v", res.Subtype, res.TerminalReason, res.Errors)
	}
	env.send(t, agentloop.UserInput{Text: "second"})
	if res, _ := r.result(t); res.IsError || res.Text() != "fine" {
		t.Errorf("next turn: %s %q", res.Subtype, res.Text())
	}
}

// The uuids given to Send name the user lines in the transcript, the
// appended (ShouldQuery false) one and the prompt alike.
func TestStreamUUIDsInTranscript(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.Text("ok"))
	no := false
	env.send(t, agentloop.UserInput{Text: "a note", UUID: "11111111-1111-4111-8111-111111111111", ShouldQuery: &no})
	env.send(t, agentloop.UserInput{Text: "a question", UUID: "22222222-2222-4222-8222-222222222222"})
	r := consume(env.c)
	r.result(t)
	r.stop(t)
	sid := env.c.SessionID()
	if err := env.c.Close(); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(env.configDir, "projects", "*", sid+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcripts %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"uuid":"11111111-1111-4111-8111-111111111111"`, `"uuid":"22222222-2222-4222-8222-222222222222"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the transcript has no %s:\n%s", want, data)
		}
	}
}

// Many goroutines may Send while the stream runs: every message runs
// once, as a turn of its own.
func TestStreamConcurrentSends(t *testing.T) {
	env := newStreamEnv(t, nil)
	env.srv.SetRouter(func(q *agentlooptest.Request) (agentlooptest.Reply, bool) {
		return agentlooptest.Text("re: " + q.LastUserText()), true
	})
	r := consume(env.c)
	defer r.stop(t)
	const n = 20
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { env.send(t, agentloop.UserInput{Text: fmt.Sprintf("msg %d", i)}) })
	}
	wg.Wait()
	// Messages queued together run as one turn (texts joined by a
	// newline); every message runs once, in one turn or another.
	seen := map[string]bool{}
	turns := 0
	for len(seen) < n {
		res, _ := r.result(t)
		turns++
		if res.IsError {
			t.Fatalf("result %s %q", res.Subtype, res.Text())
		}
		for _, m := range strings.Split(strings.TrimPrefix(res.Text(), "re: "), "\n") {
			if seen[m] {
				t.Fatalf("%q ran twice", m)
			}
			seen[m] = true
		}
	}
	if len(seen) != n || env.srv.Len() != turns {
		t.Errorf("%d distinct messages, %d requests for %d turns; want %d messages", len(seen), env.srv.Len(), turns, n)
	}
}

// Interrupt called from the loop body of Messages returns at once (it
// cannot wait for a turn that waits for the body) and still ends the turn.
func TestStreamInterruptFromLoopBody(t *testing.T) {
	env := newStreamEnv(t, nil, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}), agentlooptest.Text("never"))
	env.send(t, agentloop.UserInput{Text: "first"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var res *agentloop.ResultMessage
	for m, err := range env.c.Messages(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := m.(*agentloop.AssistantMessage); ok && len(a.Message.Content) > 0 && a.Message.Content[0].Type == "tool_use" {
			if _, err := env.c.Interrupt(ctx, nil); err != nil {
				t.Fatalf("Interrupt from the loop body: %v", err)
			}
		}
		if r, ok := m.(*agentloop.ResultMessage); ok {
			res = r
			break
		}
	}
	if res == nil || res.Subtype != "error_during_execution" {
		t.Fatalf("result %+v", res)
	}
	if env.srv.Len() != 1 {
		t.Errorf("%d requests, want 1", env.srv.Len())
	}
}

// A file command sent with an image runs expanded, and the image still
// goes with it.
func TestStreamCommandWithImage(t *testing.T) {
	cwd := filesTree(t, map[string]string{".claude/commands/look.md": "---\ndescription: Look\n---\nDescribe the picture: $ARGUMENTS\n"})
	srv := agentlooptest.NewTB(t, agentlooptest.Text("a dot"))
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	img := model.Content{Type: model.TypeImage, Source: &model.Source{Type: "base64", MediaType: "image/png", Data: "iVBORw0KGgo="}}
	if _, err := c.Send(agentloop.UserInput{Text: "/look closely", Content: []model.Content{img}}); err != nil {
		t.Fatal(err)
	}
	r := consume(c)
	defer r.stop(t)
	r.result(t)
	last := srv.LastRequest().LastUserMessage()
	text, hasImage := "", false
	for _, b := range last.Content {
		text += b.Text
		hasImage = hasImage || b.Type == model.TypeImage
	}
	if !strings.Contains(text, "Describe the picture: closely") || !hasImage {
		t.Errorf("request's prompt: text %q, image %v", text, hasImage)
	}
}
