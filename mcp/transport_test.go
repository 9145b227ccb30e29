package mcp_test

import (
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/mcp/internal/testserver"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// transports yields the test server over stdio and over streamable HTTP
// on loopback; crash kills the server in either case.
func transports(t *testing.T) map[string]func(t *testing.T) tool.MCPServerConfig {
	return map[string]func(t *testing.T) tool.MCPServerConfig{
		"stdio": func(t *testing.T) tool.MCPServerConfig {
			return tool.MCPServerConfig{Command: serverBinary(t), Env: map[string]string{"TESTSERVER_NAME": "srv"}}
		},
		"http": func(t *testing.T) tool.MCPServerConfig {
			var ts *httptest.Server
			srv := testserver.New("srv", testserver.Hooks{Crash: func() { ts.CloseClientConnections(); ts.Config.Close() }})
			ts = httptest.NewServer(requireHeader(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)))
			t.Cleanup(ts.Close)
			return tool.MCPServerConfig{Type: tool.MCPHTTP, URL: ts.URL, Headers: map[string]string{"X-Test": "1"}}
		},
		"sse": func(t *testing.T) tool.MCPServerConfig {
			var ts *httptest.Server
			srv := testserver.New("srv", testserver.Hooks{Crash: func() { ts.CloseClientConnections(); ts.Config.Close() }})
			h := sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil)
			ts = httptest.NewServer(requireHeader(h))
			t.Cleanup(ts.Close)
			return tool.MCPServerConfig{Type: tool.MCPSSE, URL: ts.URL, Headers: map[string]string{"X-Test": "1"}}
		},
	}
}

// TestTransports: list, call, isError, image content and a crash during a
// call, over stdio and streamable HTTP.
func TestTransports(t *testing.T) {
	for name, cfg := range transports(t) {
		t.Run(name, func(t *testing.T) {
			cl := connect(t, map[string]tool.MCPServerConfig{"s.1": cfg(t)}, 20*time.Second)
			st := statusOf(cl, "s.1")
			if st.Status != tool.MCPConnected || st.ServerName != "srv" || st.ServerVersion != "1.2.3" {
				t.Fatalf("status = %+v, want connected to srv 1.2.3", st)
			}
			var names []string
			for _, tl := range cl.Tools() {
				names = append(names, tl.Info().Name)
			}
			want := []string{"mcp__s_1__crash", "mcp__s_1__echo", "mcp__s_1__fail", "mcp__s_1__image", "mcp__s_1__slow",
				"ListMcpResourcesTool", "ReadMcpResourceTool"}
			for _, w := range want {
				if !slices.Contains(names, w) {
					t.Errorf("tools %v lack %s", names, w)
				}
			}
			echo := find(t, cl, "mcp__s_1__echo")
			if info := echo.Info(); !info.MCP || !info.ReadOnly || info.Description != "Echo the text back" ||
				!strings.Contains(string(info.InputSchema), `"text"`) {
				t.Errorf("echo info = %+v", info)
			}
			ctx := context.Background()
			res, err := run(t, ctx, echo, map[string]any{"text": "hi"})
			if err != nil || res.IsError || res.Text() != "echo: hi" {
				t.Errorf("echo = %+v, %v", res, err)
			}
			res, err = run(t, ctx, find(t, cl, "mcp__s_1__fail"), map[string]any{})
			if err != nil || !res.IsError || res.Text() != "it broke" {
				t.Errorf("fail = %+v, %v; want is_error \"it broke\"", res, err)
			}
			res, err = run(t, ctx, find(t, cl, "mcp__s_1__image"), map[string]any{})
			if err != nil || len(res.Content) != 2 || res.Content[1].Type != model.TypeImage ||
				res.Content[1].Source.MediaType != "image/png" ||
				res.Content[1].Source.Data != base64.StdEncoding.EncodeToString(testserver.PNG) || !res.ListContent {
				t.Errorf("image = %+v, %v", res, err)
			}
			res, err = run(t, ctx, find(t, cl, "ReadMcpResourceTool"), map[string]any{"server": "s.1", "uri": "test://readme"})
			if err != nil || res.IsError || res.Text() != "read me first" {
				t.Errorf("read resource = %+v, %v", res, err)
			}
			res, err = run(t, ctx, find(t, cl, "ListMcpResourcesTool"), map[string]any{})
			if err != nil || res.IsError || !strings.Contains(res.Text(), `"uri":"test://readme"`) || !strings.Contains(res.Text(), `"server":"s.1"`) {
				t.Errorf("list resources = %+v, %v", res, err)
			}

			done := make(chan struct{})
			go func() {
				defer close(done)
				res, err = run(t, ctx, find(t, cl, "mcp__s_1__crash"), map[string]any{})
			}()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("a call to a server that died did not return")
			}
			if err != nil || !res.IsError {
				t.Errorf("crash = %+v, %v; want an is_error result", res, err)
			}
			if name == "stdio" {
				if st := statusOf(cl, "s.1"); st.Status != tool.MCPFailed {
					t.Errorf("status after crash = %+v, want failed", st)
				}
				// The next call reconnects.
				res, err = run(t, ctx, echo, map[string]any{"text": "again"})
				if err != nil || res.Text() != "echo: again" {
					t.Errorf("echo after crash = %+v, %v; want a reconnect", res, err)
				}
			}
		})
	}
}

// TestSlowServerTimeout: a call slower than the server's timeout is an
// is_error result; the server stays usable.
func TestSlowServerTimeout(t *testing.T) {
	cfg := tool.MCPServerConfig{Command: serverBinary(t), Timeout: 300 * time.Millisecond}
	cl := connect(t, map[string]tool.MCPServerConfig{"s": cfg}, 20*time.Second)
	slow := find(t, cl, "mcp__s__slow")
	start := time.Now()
	res, err := run(t, context.Background(), slow, map[string]any{"ms": 10000})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "within 300ms") {
		t.Errorf("slow = %+v, %v; want an is_error timeout", res, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the timed-out call took %v", d)
	}
	res, err = run(t, context.Background(), slow, map[string]any{"ms": 10})
	if err != nil || res.IsError || res.Text() != "done" {
		t.Errorf("fast call after a timeout = %+v, %v", res, err)
	}
}

// TestFailedStart: a server that exits, one that never answers and one
// whose command does not exist are failed, with no tools, and their
// failure does not hold up the others.
func TestFailedStart(t *testing.T) {
	bin := serverBinary(t)
	start := time.Now()
	cl := connect(t, map[string]tool.MCPServerConfig{
		"exits":   {Command: bin, Env: map[string]string{"TESTSERVER_MODE": "exit"}},
		"hangs":   {Command: bin, Env: map[string]string{"TESTSERVER_MODE": "hang"}},
		"missing": {Command: filepath.Join(t.TempDir(), "no-such-server")},
		"good":    {Command: bin},
	}, 2*time.Second)
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("starting took %v with a 2s start timeout", d)
	}
	for _, n := range []string{"exits", "hangs", "missing"} {
		if st := statusOf(cl, n); st.Status != tool.MCPFailed || st.Error == "" {
			t.Errorf("%s: status %+v, want failed with a reason", n, st)
		}
	}
	if st := statusOf(cl, "hangs"); !strings.Contains(st.Error, "did not start within 2s") {
		t.Errorf("hangs: error %q, want the start timeout", st.Error)
	}
	if st := statusOf(cl, "good"); st.Status != tool.MCPConnected {
		t.Errorf("good: status %+v", st)
	}
	for _, tl := range cl.Tools() {
		if n := tl.Info().Name; strings.HasPrefix(n, "mcp__exits") || strings.HasPrefix(n, "mcp__hangs") || strings.HasPrefix(n, "mcp__missing") {
			t.Errorf("a failed server offers %s", n)
		}
	}
}

// TestCloseKillsProcessGroup: closing the clients stops a stdio server,
// even one that ignores its closed stdin.
func TestCloseKillsProcessGroup(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	cl := connect(t, map[string]tool.MCPServerConfig{"s": {Command: serverBinary(t),
		Env: map[string]string{"TESTSERVER_MODE": "hang", "TESTSERVER_PIDFILE": pidfile}}}, 500*time.Millisecond)
	_ = cl
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(b))
	// The hung server failed to start: its process must already be gone.
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("server process %d still runs after its start failed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCloseStopsConnectedServer: Close ends a connected stdio server and
// the processes it started (its process group).
func TestCloseStopsConnectedServer(t *testing.T) {
	dir := t.TempDir()
	pidfile, childfile := filepath.Join(dir, "pid"), filepath.Join(dir, "child")
	cl := connect(t, map[string]tool.MCPServerConfig{"s": {Command: serverBinary(t),
		Env: map[string]string{"TESTSERVER_PIDFILE": pidfile, "TESTSERVER_CHILD_PIDFILE": childfile}}}, 20*time.Second)
	pids := []int{readPid(t, pidfile), readPid(t, childfile)}
	for _, pid := range pids {
		if !alive(pid) {
			t.Fatalf("process %d not running", pid)
		}
	}
	cl.Close()
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("process %d still runs after Close", pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive reports whether the process runs (a zombie does not count).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// requireHeader refuses requests without the configured header.
func requireHeader(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Test") != "1" {
			http.Error(w, "no X-Test header", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
