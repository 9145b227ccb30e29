package conversation_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
)

// useBuiltInProvider points the provider the session builds at srv.
func useBuiltInProvider(t *testing.T, srv *agentlooptest.Server) {
	t.Setenv("ANTHROPIC_BASE_URL", srv.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	for _, k := range []string{"CLAUDE_STREAM_IDLE_TIMEOUT_MS", "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS", "API_TIMEOUT_MS", "CLAUDE_CODE_MAX_RETRIES"} {
		t.Setenv(k, "")
	}
}

// Options.API reaches the built-in provider: a stalled stream is cut by the
// idle timeout, announced as api_retry, retried, and its time counted in
// duration_api_ms.
func TestAPIOptionsStallRetried(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Reply{Content: []model.Content{model.TextBlock("lost")}, StallAfter: 2},
		agentlooptest.Text("Second try."))
	useBuiltInProvider(t, srv)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	msgs, err := agentloop.Query(ctx, "hi", &agentloop.Options{
		Cwd: t.TempDir(), API: &agentloop.APIOptions{StreamIdleTimeout: 200 * time.Millisecond},
	}).Collect()
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("query took %v", took)
	}
	var retries []*agentloop.SystemMessage
	var res *agentloop.ResultMessage
	for _, m := range msgs {
		switch m := m.(type) {
		case *agentloop.SystemMessage:
			if m.APIRetry != nil {
				retries = append(retries, m)
			}
		case *agentloop.ResultMessage:
			res = m
		}
	}
	if res == nil || res.IsError || res.Text() != "Second try." {
		t.Fatalf("result = %+v", res)
	}
	if len(retries) != 1 || retries[0].APIRetry.ErrorStatus != nil || !strings.Contains(retries[0].APIRetry.Detail, "stalled") {
		t.Errorf("api_retry messages = %+v, want one for the stalled stream", retries)
	}
	// 200ms of silence and the ≥500ms wait before the retry.
	if res.DurationAPIMs < 600 {
		t.Errorf("duration_api_ms = %d, want the stalled attempt and the wait counted", res.DurationAPIMs)
	}
}

// A call that fails for good still counts its time in duration_api_ms.
func TestAPIOptionsFailedCallDuration(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.Reply{Delay: time.Minute, Content: []model.Content{model.TextBlock("never")}},
		agentlooptest.Reply{Delay: time.Minute, Content: []model.Content{model.TextBlock("never")}})
	useBuiltInProvider(t, srv)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	res, err := agentloop.Query(ctx, "hi", &agentloop.Options{
		Cwd: t.TempDir(), API: &agentloop.APIOptions{FirstByteTimeout: 200 * time.Millisecond, MaxRetries: new(1)},
	}).Result()
	if res == nil {
		t.Fatalf("no result: %v", err)
	}
	if !strings.Contains(res.Text(), "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS") {
		t.Errorf("result text %q does not say which timeout ran out", res.Text())
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("query took %v; two attempts of 200ms", took)
	}
	if !res.IsError || srv.Len() != 2 {
		t.Errorf("result %+v after %d requests; want an error after 2", res, srv.Len())
	}
	if res.DurationAPIMs < 900 {
		t.Errorf("duration_api_ms = %d, want ≥ 900 (two 200ms attempts and a ≥500ms wait)", res.DurationAPIMs)
	}
}

// A malformed environment variable stops the session with an error naming
// it; Options.API beside a Provider of one's own is reported, not dropped.
func TestAPIOptionsErrorsAndDiagnostics(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	useBuiltInProvider(t, srv)
	t.Run("bad env", func(t *testing.T) {
		t.Setenv("CLAUDE_STREAM_IDLE_TIMEOUT_MS", "soon")
		_, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{Cwd: t.TempDir()}).Result()
		if err == nil || !strings.Contains(err.Error(), "CLAUDE_STREAM_IDLE_TIMEOUT_MS") {
			t.Errorf("Query error = %v, want one naming CLAUDE_STREAM_IDLE_TIMEOUT_MS", err)
		}
	})
	t.Run("own provider", func(t *testing.T) {
		msgs, err := agentloop.Query(context.Background(), "hi", &agentloop.Options{
			Cwd: t.TempDir(), Provider: provider(t, srv, nil), API: &agentloop.APIOptions{RequestTimeout: time.Second},
		}).Collect()
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, m := range msgs {
			if d, ok := agentloop.DiagnosticOf(m); ok && strings.Contains(d.Text, "Options.API") {
				found = true
			}
		}
		if !found {
			t.Error("no diagnostic says Options.API was ignored")
		}
	})
}
