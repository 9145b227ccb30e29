package conversation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// blockingTool waits for its context and reports that it saw the
// cancellation.
func blockingTool(started, cancelled chan struct{}) agentloop.Tool {
	return agentloop.NewTool("wait", "Waits until cancelled.", func(ctx context.Context, in struct{}, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		close(started)
		select {
		case <-ctx.Done():
			close(cancelled)
			return agentloop.ToolResult{}, ctx.Err()
		case <-time.After(10 * time.Second):
			return agentloop.ToolResult{}, errors.New("never cancelled")
		}
	}, &agentloop.ToolOptions{ReadOnly: true})
}

func TestCancelReachesRunningTool(t *testing.T) {
	started, cancelled := make(chan struct{}), make(chan struct{})
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_w", "wait", map[string]any{}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-started; cancel() }()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{},
		CustomTools: []agentloop.Tool{blockingTool(started, cancelled)}}
	msgs, err := agentloop.Query(ctx, "wait", opts).Collect()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	select {
	case <-cancelled:
	default:
		t.Error("the running tool did not see the cancellation")
	}
	res, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if !ok || res.Subtype != "error_during_execution" || !res.IsError {
		t.Errorf("last message = %#v", msgs[len(msgs)-1])
	}
}

func TestBreakStopsTheRun(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo one"}),
		agentlooptest.Text("never requested"))
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), Tools: []string{"Bash"}}
	for m := range agentloop.Query(context.Background(), "go", opts) {
		if _, ok := m.(*agentloop.AssistantMessage); ok {
			break
		}
	}
	if n := srv.Len(); n != 1 {
		t.Errorf("%d requests after breaking out, want 1", n)
	}
}

func TestStreamRunsOnce(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("once"))
	s := agentloop.Query(context.Background(), "hi", &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir()})
	if _, err := s.Result(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Result(); !errors.Is(err, agentloop.ErrStreamUsed) {
		t.Errorf("second use: %v, want ErrStreamUsed", err)
	}
}

func TestInvalidOptions(t *testing.T) {
	for _, o := range []agentloop.Options{
		{PermissionMode: "yolo"}, {MaxTurns: -1}, {MaxBudgetUSD: -2}, {Effort: "extreme"},
		{Cwd: "/does/not/exist"}, {SessionID: "not-a-uuid"},
	} {
		o.Provider = provider(t, agentlooptest.NewTB(t), nil)
		_, err := agentloop.Query(context.Background(), "hi", &o).Result()
		if !errors.Is(err, agentloop.ErrInvalidOption) {
			t.Errorf("%+v: error %v, want ErrInvalidOption", o, err)
		}
	}
}
