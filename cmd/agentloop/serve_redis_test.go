package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/testdb"
	"github.com/agentloop/agentloop/serve"
)

// Two `agentloop serve` processes share a Redis store (--database-url
// redis://…): a session's first turn runs on A; once A released it (idle),
// its second turn runs on B with the first in its history.
func TestServeRedisStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	addr := testdb.RedisAddr()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	client := goredis.NewClient(&goredis.Options{Addr: addr})
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		testdb.RedisUnreachable(t, addr, err)
	}
	prefix := "agentloop-serve-test-" + testdb.Suffix() + ":"
	t.Cleanup(func() {
		keys, _ := client.Keys(context.Background(), prefix+"*").Result()
		if len(keys) > 0 {
			client.Del(context.Background(), keys...)
		}
	})

	srv := agentlooptest.NewTB(t, agentlooptest.Text("Noted: PLUM."), agentlooptest.Text("You said PLUM."))
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	os.WriteFile(tokens, fmt.Appendf(nil, `{"tokens":[{"sha256":%q,"tenant":"acme"}]}`, serve.HashToken("tok")), 0o600)
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test", "HOME=" + dir}
	common := []string{"--root", filepath.Join(dir, "root"), "--database-url", "redis://" + addr + "/0", "--redis-prefix", prefix,
		"--tokens-file", tokens, "--lease-ttl", "5s", "--idle-release", "200ms"}
	a := startServe(t, env, append([]string{"--replica-id", "redis-A", "--data-dir", filepath.Join(dir, "a")}, common...)...)
	bp := startServe(t, env, append([]string{"--replica-id", "redis-B", "--data-dir", filepath.Join(dir, "b")}, common...)...)

	code, body := a.do(t, "POST", "/v1/sessions", "tok", map[string]any{"title": "r"})
	if code != 201 {
		t.Fatalf("create: %d %s\n%s", code, body, a.stderr)
	}
	var rec struct{ ID string }
	json.Unmarshal(body, &rec)
	if code, body := a.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "Remember PLUM"}); code != 202 {
		t.Fatalf("message on A: %d %s", code, body)
	}
	waitUntil(t, func() bool {
		_, b := bp.do(t, "GET", "/v1/sessions/"+rec.ID, "tok", nil) // B sees A's record through Redis
		return strings.Contains(string(b), `"state":"idle"`) && strings.Contains(string(b), `"turns":1`)
	})
	code, body = bp.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "What did I say?"})
	for deadline := time.Now().Add(20 * time.Second); code == 409 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond) // A has not released it yet
		code, body = bp.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", "tok", map[string]string{"text": "What did I say?"})
	}
	if code != 202 {
		t.Fatalf("message on B: %d %s\n%s", code, body, bp.stderr)
	}
	waitUntil(t, func() bool { return srv.Len() >= 2 })
	if h := srv.Requests()[1].Params.Messages; len(h) != 3 || h[0].Content[0].Text != "Remember PLUM" || h[1].Content[0].Text != "Noted: PLUM." {
		t.Errorf("B's request history = %+v, want A's turn first", h)
	}
	if n, _ := client.Keys(context.Background(), prefix+"*").Result(); len(n) == 0 {
		t.Error("nothing was stored under the prefix in Redis")
	}
}

// A store flag that does not fit the store is refused, not ignored.
func TestServeStoreFlagsMismatch(t *testing.T) {
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	os.WriteFile(tokens, fmt.Appendf(nil, `{"tokens":[{"sha256":%q,"tenant":"acme"}]}`, serve.HashToken("tok")), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--redis-prefix", "x:"}, "--redis-prefix is for a redis://"},
		{[]string{"--database-table", "t"}, "--database-table is for a PostgreSQL"},
		{[]string{"--database-url", "redis://127.0.0.1:1/0", "--database-table", "t"}, "--database-table is for a PostgreSQL"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // a server that starts never ends
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--root", filepath.Join(dir, "root"),
			"--data-dir", filepath.Join(dir, "data"), "--tokens-file", tokens}, c.args...)...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("serve %v: %v\n%s\nwant a failure saying %q", c.args, err, out, c.want)
		}
	}
}
