package mcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/mcp/internal/testserver"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// waitStatus waits until the server's status is want.
func waitStatus(t *testing.T, cl tool.MCPClients, name, want string) tool.MCPServerStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := statusOf(cl, name)
		if st.Status == want {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: status %+v, want %s", name, st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestRetryFailedServer: a server that failed at start is reconnected in
// the background; a round has a bounded number of attempts, and
// RetryFailed starts another one, whose tools are announced.
func TestRetryFailedServer(t *testing.T) {
	bin := serverBinary(t)
	late := filepath.Join(t.TempDir(), "late")
	conn := mcp.Connector{KillGrace: 500 * time.Millisecond, RetryAttempts: 2, RetryBackoff: 20 * time.Millisecond}
	clients, err := conn.ConnectMCP(context.Background(), map[string]tool.MCPServerConfig{"late": {Command: late}},
		&tool.Env{Cwd: t.TempDir()}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clients.Close() })
	var mu sync.Mutex
	var announced []string
	clients.(tool.MCPToolWatcher).WatchTools(func(_ string, ts []tool.Tool) {
		mu.Lock()
		defer mu.Unlock()
		for _, tl := range ts {
			announced = append(announced, tl.Info().Name)
		}
	})
	var reports []string
	clients.(tool.MCPReporter).ReportTo(func(server, text string) {
		mu.Lock()
		defer mu.Unlock()
		reports = append(reports, server+": "+text)
	})
	// The first round (two attempts, 20ms then 40ms apart) gives up.
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		done := len(reports) > 0
		mu.Unlock()
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first round of retries never gave up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := os.Symlink(bin, late); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if st := statusOf(clients, "late"); st.Status != tool.MCPFailed {
		t.Fatalf("after the round gave up: status %+v, want failed (no more attempts)", st)
	}
	clients.(tool.MCPRetrier).RetryFailed()
	waitStatus(t, clients, "late", tool.MCPConnected)
	// The status turns connected before the tools are announced and the
	// reconnection reported: wait for both.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		ok := slices.Contains(announced, "mcp__late__echo") && strings.Contains(strings.Join(reports, "\n"), "reconnected")
		a, r := slices.Clone(announced), slices.Clone(reports)
		mu.Unlock()
		if ok {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("announced %v, reports %q; want the reconnected server's tools and the reconnection", a, r)
		}
	}
}

// TestRetryHTTPServerFailingFirst: an HTTP server that answers 503 at
// start is failed, and connected by the background retry once it works.
func TestRetryHTTPServerFailingFirst(t *testing.T) {
	var up atomic.Bool
	srv := testserver.New("web", testserver.Hooks{})
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	conn := mcp.Connector{KillGrace: 500 * time.Millisecond, RetryBackoff: 20 * time.Millisecond, RetryAttempts: 5}
	clients, err := conn.ConnectMCP(context.Background(), map[string]tool.MCPServerConfig{"web": {Type: tool.MCPHTTP, URL: ts.URL}},
		&tool.Env{Cwd: t.TempDir()}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clients.Close() })
	if st := statusOf(clients, "web"); st.Status != tool.MCPFailed {
		t.Fatalf("status at start %+v, want failed", st)
	}
	up.Store(true)
	st := waitStatus(t, clients, "web", tool.MCPConnected)
	if !slices.Contains(st.Tools, "mcp__web__echo") {
		t.Errorf("tools after the retry: %v", st.Tools)
	}
}

// TestRetryAfterConnectionLost: a server whose process dies is
// reconnected in the background without a call to make it so.
func TestRetryAfterConnectionLost(t *testing.T) {
	bin := serverBinary(t)
	conn := mcp.Connector{KillGrace: 500 * time.Millisecond, RetryBackoff: 20 * time.Millisecond}
	clients, err := conn.ConnectMCP(context.Background(), map[string]tool.MCPServerConfig{"s": {Command: bin}},
		&tool.Env{Cwd: t.TempDir()}, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clients.Close() })
	res, err := run(t, context.Background(), find(t, clients, "mcp__s__crash"), map[string]any{})
	if err != nil || !res.IsError {
		t.Fatalf("crash = %+v, %v", res, err)
	}
	waitStatus(t, clients, "s", tool.MCPConnected)
}

// TestOlderProtocolVersion: a server that speaks only an older protocol
// version still works, and the version agreed is in its status.
func TestOlderProtocolVersion(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "old", Version: "1"},
		&sdk.ServerOptions{SupportedProtocolVersions: []string{"2024-11-05"}})
	sdk.AddTool(srv, &sdk.Tool{Name: "ping"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "pong"}}}, nil, nil
	})
	cl := connect(t, map[string]tool.MCPServerConfig{"old": mcp.InProcess(srv)}, 5*time.Second)
	st := statusOf(cl, "old")
	if st.Status != tool.MCPConnected || st.ProtocolVersion != "2024-11-05" {
		t.Fatalf("status %+v, want connected with protocol 2024-11-05", st)
	}
	res, err := run(t, context.Background(), find(t, cl, "mcp__old__ping"), map[string]any{})
	if err != nil || res.IsError || res.Content[0].Text != "pong" {
		t.Fatalf("call = %+v, %v", res, err)
	}
}

// TestServerLogMessages: a server's log messages of level warning and
// above reach the reporter; progress notifications do not break a call.
func TestServerLogMessages(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "chatty", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "work"}, func(ctx context.Context, req *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "debug", Data: "noise"})
		_ = req.Session.Log(ctx, &sdk.LoggingMessageParams{Level: "error", Logger: "disk", Data: "disk almost full"})
		_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: "p", Progress: 1, Total: 2})
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "worked"}}}, nil, nil
	})
	cl := connect(t, map[string]tool.MCPServerConfig{"chatty": mcp.InProcess(srv)}, 5*time.Second)
	got := make(chan string, 10)
	cl.(tool.MCPReporter).ReportTo(func(server, text string) { got <- server + ": " + text })
	res, err := run(t, context.Background(), find(t, cl, "mcp__chatty__work"), map[string]any{})
	if err != nil || res.IsError {
		t.Fatalf("call = %+v, %v", res, err)
	}
	select {
	case r := <-got:
		if want := "chatty: log error (disk): disk almost full"; r != want {
			t.Errorf("report %q, want %q", r, want)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the error log message was not reported")
	}
	select {
	case r := <-got:
		t.Errorf("unexpected report %q (debug messages are below the level asked for)", r)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestCancelSendsNotification: cancelling a call's context sends
// notifications/cancelled for it; the connection stays up for later calls.
func TestCancelSendsNotification(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "slow", Version: "1"}, nil)
	started := make(chan struct{}, 1)
	sdk.AddTool(srv, &sdk.Tool{Name: "wait"}, func(ctx context.Context, _ *sdk.CallToolRequest, _ struct{}) (*sdk.CallToolResult, any, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, nil, ctx.Err()
		case <-time.After(30 * time.Second):
			return &sdk.CallToolResult{}, nil, nil
		}
	})
	sdk.AddTool(srv, &sdk.Tool{Name: "quick"}, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "quick"}}}, nil, nil
	})
	cancelled := make(chan struct{}, 1)
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method == "notifications/cancelled" {
				cancelled <- struct{}{}
			}
			return next(ctx, method, req)
		}
	})
	cl := connect(t, map[string]tool.MCPServerConfig{"slow": mcp.InProcess(srv)}, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	if _, err := run(t, ctx, find(t, cl, "mcp__slow__wait"), map[string]any{}); err == nil {
		t.Error("a cancelled call returned no error")
	}
	select {
	case <-cancelled:
	case <-time.After(5 * time.Second):
		t.Fatal("the server never got notifications/cancelled")
	}
	res, err := run(t, context.Background(), find(t, cl, "mcp__slow__quick"), map[string]any{})
	if err != nil || res.IsError {
		t.Errorf("a call after the cancellation = %+v, %v", res, err)
	}
}

// TestToolPermissionInfo: _meta requiresUserInteraction and the
// configuration's per-tool policies (by server name or full name) reach
// tool.Info.
func TestToolPermissionInfo(t *testing.T) {
	srv := sdk.NewServer(&sdk.Implementation{Name: "p", Version: "1"}, nil)
	for _, name := range []string{"login", "drop", "read", "plain"} {
		tl := &sdk.Tool{Name: name}
		if name == "login" {
			tl.Meta = sdk.Meta{"anthropic/requiresUserInteraction": true}
		}
		sdk.AddTool(srv, tl, func(context.Context, *sdk.CallToolRequest, struct{}) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{}, nil, nil
		})
	}
	cfg := mcp.InProcess(srv)
	cfg.Tools = []tool.MCPToolPolicy{
		{Name: "drop", PermissionPolicy: tool.MCPAlwaysDeny},
		{Name: "mcp__p__read", PermissionPolicy: tool.MCPAlwaysAsk},
	}
	cl := connect(t, map[string]tool.MCPServerConfig{"p": cfg}, 5*time.Second)
	for name, want := range map[string]tool.Info{
		"mcp__p__login": {RequiresUserInteraction: true},
		"mcp__p__drop":  {PermissionPolicy: tool.MCPAlwaysDeny},
		"mcp__p__read":  {PermissionPolicy: tool.MCPAlwaysAsk},
		"mcp__p__plain": {},
	} {
		info := find(t, cl, name).Info()
		if info.RequiresUserInteraction != want.RequiresUserInteraction || info.PermissionPolicy != want.PermissionPolicy {
			t.Errorf("%s: requiresUserInteraction %v, policy %q; want %v, %q", name,
				info.RequiresUserInteraction, info.PermissionPolicy, want.RequiresUserInteraction, want.PermissionPolicy)
		}
	}
}
