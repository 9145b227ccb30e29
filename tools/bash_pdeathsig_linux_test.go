package tools

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestBashDiesWithAgent: when the process running the agent is killed
// (SIGKILL: no cleanup runs), the shell of a running Bash call dies too
// instead of living on as an orphan. The test re-runs its own binary as
// the "agent", which starts a long command through the Bash tool; then
// it kills that process and waits for the shell to go.
func TestBashDiesWithAgent(t *testing.T) {
	if pidfile := os.Getenv("AGENTLOOP_TEST_AGENT_PIDFILE"); pidfile != "" {
		bashCall(t, context.Background(), Bash(), bashTestEnv(t), map[string]any{
			"command": fmt.Sprintf("echo $$ > %q; exec sleep 120", pidfile), "timeout": 600000})
		return
	}
	pidfile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command(os.Args[0], "-test.run=^TestBashDiesWithAgent$", "-test.count=1")
	cmd.Env = append(os.Environ(), "AGENTLOOP_TEST_AGENT_PIDFILE="+pidfile)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	shell := bashReadPid(t, pidfile)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	bashWaitGone(t, shell, 5*time.Second)
}
