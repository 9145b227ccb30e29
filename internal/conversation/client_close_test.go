package conversation_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/internal/conversation"
	"github.com/agentloop/agentloop/settings"
)

// closeEnv is a client whose one tool, "hold", blocks until it is released
// (or, when it honours cancellation, until its context ends), with a
// SessionEnd hook that notes whether the tool was still running.
type closeEnv struct {
	srv          *agentlooptest.Server
	c            *agentloop.Client
	cfg          string
	started      chan struct{}
	release      chan struct{}
	toolRunning  atomic.Bool
	endedWhile   atomic.Int32 // 1: SessionEnd ran while the tool ran; 2: after it
	sessionEnded chan struct{}
}

func newCloseEnv(t *testing.T, honourCancel bool) *closeEnv {
	t.Helper()
	env := &closeEnv{started: make(chan struct{}), release: make(chan struct{}), sessionEnded: make(chan struct{}),
		cfg: t.TempDir()}
	env.srv = agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_1", "hold", map[string]any{}), agentlooptest.Text("never sent"))
	hold := agentloop.NewTool("hold", "Holds.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		env.toolRunning.Store(true)
		defer env.toolRunning.Store(false)
		close(env.started)
		done := ctx.Done()
		if !honourCancel {
			done = nil
		}
		select {
		case <-done:
			return agentloop.ToolResult{}, ctx.Err()
		case <-env.release:
			return agentloop.TextResult("released"), nil
		}
	}, &agentloop.ToolOptions{ReadOnly: true})
	end := func(ctx context.Context, in hooks.Input, id string) (hooks.Output, error) {
		if env.toolRunning.Load() {
			env.endedWhile.Store(1)
		} else {
			env.endedWhile.Store(2)
		}
		close(env.sessionEnded)
		return hooks.Output{}, nil
	}
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, env.srv, nil), Cwd: t.TempDir(), ConfigDir: env.cfg,
		Tools: []string{}, CustomTools: []agentloop.Tool{hold}, SettingSources: []settings.SettingSource{},
		Hooks: map[hooks.Event][]hooks.Matcher{hooks.SessionEnd: {{Hooks: []hooks.Callback{end}}}}})
	if err != nil {
		t.Fatal(err)
	}
	env.c = c
	t.Cleanup(func() {
		select {
		case <-env.release:
		default:
			close(env.release)
		}
		c.Close()
	})
	return env
}

// run consumes a query on its own goroutine; the returned channel gets the
// stream's messages and error when it ends.
func (env *closeEnv) run() <-chan queryOutcome {
	out := make(chan queryOutcome, 1)
	go func() {
		msgs, err := env.c.Query(context.Background(), "go").Collect()
		out <- queryOutcome{msgs, err}
	}()
	return out
}

type queryOutcome struct {
	msgs []agentloop.Message
	err  error
}

func waitFor[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// Close during a query cancels it, waits for it, and only then ends the
// session: the tool has returned before SessionEnd, no request follows, the
// transcript loses nothing, and the stream ends with ErrClosed.
func TestCloseStopsTheRunningQuery(t *testing.T) {
	env := newCloseEnv(t, true)
	done := env.run()
	waitFor(t, env.started, "the tool to start")
	start := time.Now()
	if err := env.c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if d := time.Since(start); d > agentloop.CloseTimeout {
		t.Errorf("Close took %v", d)
	}
	select {
	case <-env.sessionEnded:
	default:
		t.Fatal("Close returned before the session ended")
	}
	if env.endedWhile.Load() != 2 {
		t.Error("SessionEnd ran while the query's tool still ran")
	}
	out := waitFor(t, done, "the query to end")
	if !errors.Is(out.err, agentloop.ErrClosed) || !errors.Is(out.err, context.Canceled) {
		t.Errorf("stream error %v, want ErrClosed and context.Canceled", out.err)
	}
	for _, m := range out.msgs {
		if s, ok := m.(*agentloop.SystemMessage); ok && s.Subtype == "session_writes_lost" {
			t.Errorf("the transcript lost writes: %+v", s)
		}
	}
	time.Sleep(50 * time.Millisecond)
	if n := env.srv.Len(); n != 1 {
		t.Errorf("%d requests, want 1: the query went on after Close", n)
	}
	// The transcript on disk answers the call the query left open.
	files, _ := filepath.Glob(filepath.Join(env.cfg, "projects", "*", env.c.SessionID()+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcript files %v", files)
	}
	data, _ := os.ReadFile(files[0])
	if !strings.Contains(string(data), `"tool_use_id":"toolu_1"`) {
		t.Errorf("the transcript has no result for toolu_1:\n%s", data)
	}
}

// After Close every method that can fail says ErrClosed, a new query yields
// only ErrClosed, and Close is idempotent.
func TestCallsAfterCloseReturnErrClosed(t *testing.T) {
	env := newCloseEnv(t, true)
	if err := env.c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := env.c.Close(); err != nil {
		t.Errorf("second Close = %v, want nil", err)
	}
	msgs, err := env.c.Query(context.Background(), "go").Collect()
	if len(msgs) != 0 || !errors.Is(err, agentloop.ErrClosed) {
		t.Errorf("Query after Close: %d messages, error %v", len(msgs), err)
	}
	if err := env.c.SetModel("haiku"); !errors.Is(err, agentloop.ErrClosed) {
		t.Errorf("SetModel = %v", err)
	}
	if err := env.c.SetEffort("low"); !errors.Is(err, agentloop.ErrClosed) {
		t.Errorf("SetEffort = %v", err)
	}
	if err := env.c.SetMaxThinkingTokens(2048); !errors.Is(err, agentloop.ErrClosed) {
		t.Errorf("SetMaxThinkingTokens = %v", err)
	}
	if env.srv.Len() != 0 {
		t.Errorf("%d requests after Close", env.srv.Len())
	}
}

// Close called from the loop body of the query it closes cannot wait for
// that query; it cancels it, returns at once, and the session ends as the
// query returns.
func TestCloseFromTheLoopBody(t *testing.T) {
	env := newCloseEnv(t, true)
	var closeErr error
	var took time.Duration
	var streamErr error
	for m, err := range env.c.Query(context.Background(), "go") {
		if err != nil {
			streamErr = err
			continue
		}
		if _, ok := m.(*agentloop.AssistantMessage); ok {
			start := time.Now()
			closeErr = env.c.Close()
			took = time.Since(start)
		}
	}
	if closeErr != nil || took > time.Second {
		t.Errorf("Close from the loop body: %v after %v", closeErr, took)
	}
	if !errors.Is(streamErr, agentloop.ErrClosed) {
		t.Errorf("stream error %v, want ErrClosed", streamErr)
	}
	waitFor(t, env.sessionEnded, "the session to end")
	if env.srv.Len() != 1 {
		t.Errorf("%d requests, want 1", env.srv.Len())
	}
}

// A query that does not stop in time (its tool ignores cancellation) makes
// Close report ErrCloseTimeout; the session ends only when the query does.
func TestCloseTimesOutOnAStuckTool(t *testing.T) {
	defer conversation.SetCloseTimeout(100 * time.Millisecond)()
	env := newCloseEnv(t, false)
	done := env.run()
	waitFor(t, env.started, "the tool to start")
	if err := env.c.Close(); !errors.Is(err, agentloop.ErrCloseTimeout) {
		t.Errorf("Close = %v, want ErrCloseTimeout", err)
	}
	select {
	case <-env.sessionEnded:
		t.Fatal("the session ended while its query still ran")
	default:
	}
	close(env.release)
	waitFor(t, done, "the query to end")
	waitFor(t, env.sessionEnded, "the session to end")
	if env.endedWhile.Load() != 2 {
		t.Error("SessionEnd ran while the tool still ran")
	}
}

// Close and the setters from many goroutines while a query runs: one Close
// does the work, the others return nil, and the race detector stays quiet.
func TestCloseConcurrently(t *testing.T) {
	env := newCloseEnv(t, true)
	done := env.run()
	waitFor(t, env.started, "the tool to start")
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := 0; i < 8; i++ {
		wg.Add(2)
		go func() { defer wg.Done(); errs <- env.c.Close() }()
		go func() { defer wg.Done(); _ = env.c.SetModel("sonnet"); _ = env.c.SetEffort("low") }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Close = %v", err)
		}
	}
	out := waitFor(t, done, "the query to end")
	if !errors.Is(out.err, agentloop.ErrClosed) {
		t.Errorf("stream error %v, want ErrClosed", out.err)
	}
	waitFor(t, env.sessionEnded, "the session to end")
}
