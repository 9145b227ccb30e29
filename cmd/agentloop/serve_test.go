package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/serve"
)

// serveProc is an `agentloop serve` process of the test binary.
type serveProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

// startServe runs `agentloop serve args...` as a process and waits until
// it listens.
func startServe(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Env = append(append(os.Environ(), runMainEnv+"=1"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "agentloop serve: listening on "); ok {
				line <- u
			}
		}
		io.Copy(io.Discard, stdout)
	}()
	select {
	case p.url = <-line:
	case <-time.After(30 * time.Second):
		t.Fatalf("serve did not start; stderr:\n%s", p.stderr)
	}
	return p
}

func (p *serveProc) do(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, p.url+path, r)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Two `agentloop serve` processes share a PostgreSQL store. A session
// runs a turn on A; A is killed (SIGKILL) mid-turn, so it never releases
// the lease: B answers 409 naming A until the lease expires (--lease-ttl),
// then takes the session over with its history. B then drains on SIGTERM:
// readyz would turn 503, the process exits after releasing its lease.
func TestServeProcessesTakeover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	conn := testdb.PostgresURL()
	pool := testdb.OpenPostgres(t, conn, pgxpool.New)
	table := "agentloop_serve_proc_" + testdb.Suffix()
	t.Cleanup(func() { pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize()) })

	srv := agentlooptest.NewTB(t,
		agentlooptest.Reply{Content: agentlooptest.Text("never seen").Content, Delay: time.Minute},
		agentlooptest.Text("Taken over."))
	srv.AllowInvalidHistory()
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	os.WriteFile(tokens, fmt.Appendf(nil, `{"tokens":[{"sha256":%q,"tenant":"acme"}]}`, serve.HashToken("tok")), 0o600)
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test", "HOME=" + dir}
	common := []string{"--root", filepath.Join(dir, "root"), "--database-url", conn, "--database-table", table,
		"--tokens-file", tokens, "--lease-ttl", "3s", "--idle-release", "1h", "--drain-timeout", "1s",
		"--settings", `{"permissions":{"allow":[]}}`}
	a := startServe(t, env, append([]string{"--replica-id", "proc-A", "--data-dir", filepath.Join(dir, "a")}, common...)...)
	bp := startServe(t, env, append([]string{"--replica-id", "proc-B", "--data-dir", filepath.Join(dir, "b")}, common...)...)

	code, body := a.do(t, "POST", "/v1/sessions", "tok", map[string]any{"title": "t"})
	if code != 201 {
		t.Fatalf("create: %d %s\n%s", code, body, a.stderr)
	}
	var rec struct{ ID string }
	json.Unmarshal(body, &rec)
	if code, body := a.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "slow one"}); code != 202 {
		t.Fatalf("message on A: %d %s", code, body)
	}
	waitUntil(t, func() bool { return srv.Len() >= 1 }) // A's turn is waiting on the model
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	a.cmd.Wait()
	killed := time.Now()

	code, body = bp.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "go on"})
	if code != 409 || !strings.Contains(string(body), `"holder":"proc-A"`) {
		t.Errorf("B right after A died: %d %s, want 409 holder proc-A", code, body)
	}
	for code != 202 {
		if time.Since(killed) > 20*time.Second {
			t.Fatalf("B never took over: %d %s\n%s", code, body, bp.stderr)
		}
		time.Sleep(200 * time.Millisecond)
		code, body = bp.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "go on"})
	}
	t.Logf("B took over %v after A was killed (lease TTL 3s)", time.Since(killed).Round(100*time.Millisecond))
	waitUntil(t, func() bool { return srv.Len() >= 2 })
	if h := srv.Requests()[1].Params.Messages; len(h) < 1 || h[0].Content[0].Text != "slow one" {
		t.Errorf("B's history %+v, want A's unanswered prompt first", h)
	}
	waitUntil(t, func() bool {
		_, b := bp.do(t, "GET", "/v1/sessions/"+rec.ID, "tok", nil)
		return strings.Contains(string(b), `"state":"idle"`) && strings.Contains(string(b), `"turns":1`)
	})

	// SIGTERM drains B and ends the process.
	if err := bp.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- bp.cmd.Wait() }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("B did not exit after SIGTERM")
	}
	if !strings.Contains(bp.stderr.String(), `"msg":"drained"`) || !strings.Contains(bp.stderr.String(), `"msg":"session closed"`) {
		t.Errorf("B's log lacks the drain:\n%s", bp.stderr)
	}
}

func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 20s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// `agentloop serve` loads no settings a tenant can write unless the
// operator names them with --setting-sources: a SessionStart command hook
// in the project's .claude/settings.json of a session's working directory
// runs only with the opt-in, which is warned about at start-up, and then
// only inside the tenant's sandbox. A bad
// source stops the server.
func TestServeSettingSources(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	for _, c := range []struct {
		name     string
		args     []string
		wantHook bool
	}{
		{"default", nil, false},
		{"user only", []string{"--setting-sources", "user"}, false},
		{"none", []string{"--setting-sources", ""}, false},
		{"opt-in project", []string{"--setting-sources", "user,project"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("Hello."))
			dir := t.TempDir()
			tokens := filepath.Join(dir, "tokens.json")
			os.WriteFile(tokens, fmt.Appendf(nil, `{"tokens":[{"sha256":%q,"tenant":"acme"}]}`, serve.HashToken("tok")), 0o600)
			env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test", "HOME=" + dir}
			root := filepath.Join(dir, "root")
			p := startServe(t, env, append([]string{"--root", root, "--data-dir", filepath.Join(dir, "data"),
				"--tokens-file", tokens}, c.args...)...)
			code, body := p.do(t, "POST", "/v1/sessions", "tok", map[string]any{"cwd": "proj"})
			if code != 201 {
				t.Fatalf("create: %d %s\n%s", code, body, p.stderr)
			}
			var rec struct{ ID string }
			json.Unmarshal(body, &rec)
			cwds, _ := filepath.Glob(filepath.Join(root, "t-*", "proj"))
			if len(cwds) != 1 {
				t.Fatalf("working directories %v", cwds)
			}
			// The hook runs in the tenant's sandbox: it can mark its own
			// working directory, never the server's files (outside).
			marker, outside := filepath.Join(cwds[0], "hook-ran"), filepath.Join(dir, "hook-escaped")
			hook, _ := json.Marshal(map[string]any{"hooks": map[string]any{"SessionStart": []any{map[string]any{
				"hooks": []any{map[string]any{"type": "command", "command": "touch hook-ran; touch '" + outside + "'"}}}}}})
			os.MkdirAll(filepath.Join(cwds[0], ".claude"), 0o755)
			if err := os.WriteFile(filepath.Join(cwds[0], ".claude", "settings.json"), hook, 0o644); err != nil {
				t.Fatal(err)
			}
			if code, body := p.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "hi"}); code != 202 {
				t.Fatalf("message: %d %s", code, body)
			}
			waitUntil(t, func() bool {
				_, b := p.do(t, "GET", "/v1/sessions/"+rec.ID, "tok", nil)
				return strings.Contains(string(b), `"state":"idle"`) && strings.Contains(string(b), `"turns":1`)
			})
			_, err := os.Stat(marker)
			if _, err := os.Stat(outside); err == nil {
				t.Errorf("a tenant's hook wrote outside its working directory, on the server")
			}
			warned := strings.Contains(p.stderr.String(), "tenants write")
			if ran := err == nil; ran != c.wantHook || warned != c.wantHook {
				t.Errorf("hook ran %v, start-up warning %v; want both %v\n%s", ran, warned, c.wantHook, p.stderr)
			}
		})
	}
	t.Run("bad source", func(t *testing.T) {
		var stdout, stderr bytes.Buffer
		code := runServe(context.Background(), []string{"--root", t.TempDir(), "--tokens-file", "unused",
			"--setting-sources", "user,policy"}, &stdout, &stderr)
		if code != exitFailure || !strings.Contains(stderr.String(), `--setting-sources \"user,policy\"`) {
			t.Errorf("exit %d, stderr %s; want a failure naming the flag", code, stderr.String())
		}
	})
}
