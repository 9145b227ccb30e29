package mcp_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/mcp"
	"github.com/agentloop/agentloop/tool"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// serverBinary builds the stdio test server once per test binary.
func serverBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		binDir, buildErr = os.MkdirTemp("", "mcp-testserver-")
		if buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "testserver")
		out, err := exec.Command("go", "build", "-o", binPath, "./internal/testserver/stdio").CombinedOutput()
		if err != nil {
			buildErr = &buildError{err: err, out: string(out)}
		}
	})
	if buildErr != nil {
		t.Fatalf("building the test server: %v", buildErr)
	}
	return binPath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// connect starts servers with the default connector and closes them at
// the end of the test.
func connect(t *testing.T, servers map[string]tool.MCPServerConfig, timeout time.Duration) tool.MCPClients {
	t.Helper()
	cl, err := mcp.Connector{KillGrace: 500 * time.Millisecond}.ConnectMCP(context.Background(), servers, &tool.Env{Cwd: t.TempDir()}, timeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	return cl
}

// find returns the tool of that name.
func find(t *testing.T, cl tool.MCPClients, name string) tool.Tool {
	t.Helper()
	for _, tl := range cl.Tools() {
		if tl.Info().Name == name {
			return tl
		}
	}
	var names []string
	for _, tl := range cl.Tools() {
		names = append(names, tl.Info().Name)
	}
	t.Fatalf("no tool %s among %v", name, names)
	return nil
}

// run calls a tool with input.
func run(t *testing.T, ctx context.Context, tl tool.Tool, input any) (tool.Result, error) {
	t.Helper()
	b, err := json.Marshal(input)
	if err != nil {
		t.Fatal(err)
	}
	return tl.Run(ctx, &tool.Call{ID: "toolu_1", Input: b})
}

func statusOf(cl tool.MCPClients, name string) tool.MCPServerStatus {
	for _, s := range cl.Status() {
		if s.Name == name {
			return s
		}
	}
	return tool.MCPServerStatus{}
}
