package serve_test

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
)

// A session's commands run in the kernel sandbox whatever its tenant asks:
// tenant A's agent, in bypassPermissions, cannot read tenant B's file with
// Bash (cat, cp, through a link it made, in the background, nor with
// dangerouslyDisableSandbox), nor the server's data directory, nor write
// into B's root; its own files work. With UnsafeNoSandbox every case
// leaks (the test's mutation check).
func TestBashConfinedToTenant(t *testing.T) {
	if testing.Short() {
		t.Skip("an end-to-end battery of sandboxed commands; go test without -short runs it")
	}
	if leaks := bashLeaks(t, false); len(leaks) > 0 {
		t.Errorf("confined commands leaked: %v", leaks)
	}
}

// TestBashUnconfinedWithUnsafeNoSandbox is the control of
// TestBashConfinedToTenant: without the sandbox every read case leaks, so
// the confined run's silence is the sandbox's doing.
func TestBashUnconfinedWithUnsafeNoSandbox(t *testing.T) {
	leaks := bashLeaks(t, true)
	for _, id := range []string{"b1", "b2", "b3", "b5", "b6", "b7"} {
		if !leaks[id] {
			t.Errorf("%s did not leak without the sandbox; the case tests nothing", id)
		}
	}
}

// bashLeaks runs tenant A's commands against tenant B's secret and the
// server's, and returns the cases that read (or wrote) what they must
// not.
func bashLeaks(t *testing.T, unsafe bool) map[string]bool {
	leaks := map[string]bool{}
	dataDir := t.TempDir()
	e := newEnv(t, func(c *serve.Config) {
		c.DataDir, c.UnsafeNoSandbox = dataDir, unsafe
		allowBypass(c)
	})
	e.create(tokenB, map[string]any{})
	entries := mustReadDir(t, e.srvRoot())
	rootB := filepath.Join(e.srvRoot(), entries[0].Name())
	secret := filepath.Join(rootB, "secret.txt")
	if err := os.WriteFile(secret, []byte("B's secret: KIWI"), 0o644); err != nil {
		t.Fatal(err)
	}
	serverSecret := filepath.Join(dataDir, "server-secret.txt")
	if err := os.WriteFile(serverSecret, []byte("server secret: MANGO"), 0o644); err != nil {
		t.Fatal(err)
	}
	id := e.create(tokenA, map[string]any{"permission_mode": "bypassPermissions"})
	var rootA string
	for _, en := range mustReadDir(t, e.srvRoot()) {
		if p := filepath.Join(e.srvRoot(), en.Name()); p != rootB {
			rootA = p
		}
	}
	cwdA := filepath.Join(rootA, id)
	if err := os.MkdirAll(cwdA, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwdA, "mine.txt"), []byte("A's own: FIG"), 0o644); err != nil {
		t.Fatal(err)
	}
	bash := func(id, cmd string, extra map[string]any) agentlooptest.Reply {
		in := map[string]any{"command": cmd}
		for k, v := range extra {
			in[k] = v
		}
		return agentlooptest.ToolUse(id, "Bash", in)
	}
	e.model.Push(
		bash("b1", "cat "+secret, nil),
		bash("b2", "cp "+secret+" copy.txt; cat copy.txt", nil),
		bash("b3", "ln -s "+secret+" link.txt; cat link.txt", nil),
		bash("b4", "echo planted > "+filepath.Join(rootB, "planted.txt"), nil),
		bash("b5", "cat "+secret, map[string]any{"dangerouslyDisableSandbox": true}),
		bash("b6", "cat "+serverSecret, nil),
		bash("b7", "cat "+secret+" > bg.txt 2>&1", map[string]any{"run_in_background": true}),
		bash("b8", "cat mine.txt", nil),
		agentlooptest.Text("Done."))
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "look around"})
	ev.until(isResult)
	reqs := e.model.Requests()
	for i, tid := range []string{"b1", "b2", "b3", "b5", "b6"} {
		idx := map[string]int{"b1": 1, "b2": 2, "b3": 3, "b5": 5, "b6": 6}[tid]
		res, ok := reqs[idx].ToolResult(tid)
		if !ok {
			t.Errorf("%d %s: no result", i, tid)
			continue
		}
		if txt := res.ResultText(); strings.Contains(txt, "KIWI") || strings.Contains(txt, "MANGO") {
			leaks[tid] = true
		}
	}
	if _, err := os.Stat(filepath.Join(rootB, "planted.txt")); err == nil {
		leaks["b4"] = true
	}
	if res, ok := reqs[8].ToolResult("b8"); !ok || !strings.Contains(res.ResultText(), "FIG") {
		t.Errorf("b8: A's own file: %+v, want its text", res)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(cwdA, "bg.txt"))
		if err == nil && len(b) > 0 {
			if strings.Contains(string(b), "KIWI") {
				leaks["b7"] = true
			}
			break
		}
		if time.Now().After(deadline) {
			t.Error("b7: the background command left no output")
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return leaks
}

// Where the kernel cannot sandbox, the server does not start unless the
// operator accepts unconfined tenants (UnsafeNoSandbox).
func TestNoSandboxRefusesToStart(t *testing.T) {
	defer serve.SetSandboxAvailable(func() (int, error) { return 0, errors.New("no Landlock here") })()
	cfg := serve.Config{Root: t.TempDir(), DataDir: t.TempDir(), Tenants: serve.NewMemoryTenants()}
	if _, err := serve.New(cfg); !errors.Is(err, serve.ErrSandboxUnavailable) || !strings.Contains(err.Error(), "--unsafe-no-sandbox") {
		t.Errorf("New without a sandbox: %v, want ErrSandboxUnavailable naming --unsafe-no-sandbox", err)
	}
	cfg.UnsafeNoSandbox = true
	if _, err := serve.New(cfg); err != nil {
		t.Errorf("New with UnsafeNoSandbox: %v", err)
	}
}
