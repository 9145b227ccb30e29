package servetemporal

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/server/temporaltest"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/servecmd"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/temporal"
)

// envArgs holds a helper replica's command line (JSON).
const envArgs = "AGENTLOOP_SERVE_TEMPORAL_ARGS"

// TestHelperReplica is not a test: TestServeFailover runs the test binary
// as `agentloop-temporal serve` replicas through it.
func TestHelperReplica(t *testing.T) {
	raw := os.Getenv(envArgs)
	if raw == "" {
		t.Skip("helper process for TestServeFailover")
	}
	var args []string
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	os.Exit(servecmd.Run(ctx, args, os.Stdout, os.Stderr, Extension()))
}

// replica is a serve replica process.
type replica struct {
	cmd    *exec.Cmd
	url    string
	stderr *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startReplica(t *testing.T, env []string, args ...string) *replica {
	t.Helper()
	raw, _ := json.Marshal(append([]string{"--addr", "127.0.0.1:0"}, args...))
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperReplica$")
	cmd.Env = append(append(os.Environ(), envArgs+"="+string(raw)), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{cmd: cmd, stderr: &lockedBuffer{}}
	cmd.Stderr = r.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "agentloop-temporal serve: listening on "); ok {
				line <- u
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case r.url = <-line:
	case <-time.After(60 * time.Second):
		t.Fatalf("replica did not start; stderr:\n%s", r.stderr)
	}
	return r
}

func (r *replica) do(t *testing.T, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, r.url+path, rd)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// sse is one event of a session's event stream.
type sse struct {
	ID   int64
	Kind string
	Data string
}

// follow reads the session's events from r after the event id after,
// sending each to out, until the stream breaks or ctx ends.
func follow(ctx context.Context, r *replica, id string, after int64, out chan<- sse) error {
	req, _ := http.NewRequestWithContext(ctx, "GET", r.url+"/v1/sessions/"+id+"/events", nil)
	req.Header.Set("Authorization", "Bearer tok")
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("events: %s", resp.Status)
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var ev sse
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			ev.ID, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case strings.HasPrefix(line, "event: "):
			ev.Kind = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.Data = strings.TrimPrefix(line, "data: ")
		case line == "" && ev.Kind != "":
			out <- ev
			ev = sse{}
		}
	}
	return sc.Err()
}

// postgresURL is the test database, or the test is skipped (failed on CI).
func postgresURL(t *testing.T) (string, string) {
	t.Helper()
	conn := os.Getenv("AGENTLOOP_TEST_POSTGRES")
	if conn == "" {
		conn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, conn)
	if err == nil {
		if err = pool.Ping(ctx); err != nil {
			pool.Close()
		}
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable: %v", err)
		}
		t.Skipf("PostgreSQL unreachable: %v", err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	table := "agentloop_serve_temporal_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize())
		pool.Close()
	})
	return conn, table
}

// TestServeFailover runs `agentloop-temporal serve` replicas (API front
// end and worker each) on a real Temporal server and a shared PostgreSQL
// store, and kills -9 the replica that both relays a session to its
// client and runs the session's state-changing Bash call. The turn goes
// on: the other replica's worker gives the call an is_error result (it is
// not run again) and makes the next model request; the other replica
// takes the session over once the dead one's lease runs out and relays
// the rest; the client, reconnecting there with Last-Event-ID, sees every
// event once and in order, up to the turn's result. With the in-process
// backend the turn dies with the replica and no result ever comes.
func TestServeFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes; skipped with -short")
	}
	pg, table := postgresURL(t)
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	api := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_bash", "Bash", map[string]any{"command": "echo start >> f; sleep 4; echo done >> f"}),
		agentlooptest.Text("ok"))
	dir := t.TempDir()
	tokens := filepath.Join(dir, "tokens.json")
	if err := os.WriteFile(tokens, fmt.Appendf(nil, `{"tokens":[{"sha256":%q,"tenant":"acme"}]}`, serve.HashToken("tok")), 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"ANTHROPIC_BASE_URL=" + api.URL, "ANTHROPIC_API_KEY=sk-test", "HOME=" + dir}
	root := filepath.Join(dir, "root")
	common := []string{"--root", root, "--database-url", pg, "--database-table", table, "--tokens-file", tokens,
		"--lease-ttl", "3s", "--idle-release", "1h", "--drain-timeout", "1s",
		"--temporal", ts.GetFrontendHostPort(), "--temporal-namespace", ts.GetDefaultNamespace(), "--task-queue", "serve-failover"}
	a := startReplica(t, env, append([]string{"--replica-id", "rep-A", "--data-dir", filepath.Join(dir, "a")}, common...)...)

	code, body := a.do(t, "POST", "/v1/sessions", map[string]any{"tools": []string{"Bash"}, "allowed_tools": []string{"Bash"}})
	if code != 201 {
		t.Fatalf("create: %d %s\n%s", code, body, a.stderr)
	}
	var rec struct{ ID string }
	_ = json.Unmarshal(body, &rec)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	events := make(chan sse, 100)
	streamA, stopA := context.WithCancel(ctx)
	defer stopA()
	brokeA := make(chan error, 1)
	go func() { brokeA <- follow(streamA, a, rec.ID, 0, events) }()
	if code, body := a.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", map[string]string{"text": "Go."}); code != 202 {
		t.Fatalf("message on A: %d %s\n%s", code, body, a.stderr)
	}

	// A's worker runs the Bash call (it is the only worker yet); B starts
	// while it runs, then A dies.
	c, err := client.Dial(client.Options{HostPort: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var f string
	waitFor(t, 60*time.Second, func() bool {
		m, _ := filepath.Glob(filepath.Join(root, "*", "*", "f"))
		if len(m) == 0 {
			m, _ = filepath.Glob(filepath.Join(root, "*", "f"))
		}
		if len(m) == 0 {
			return false
		}
		f = m[0]
		return runningTool(ctx, c, "agentloop-"+rec.ID) == a.cmd.Process.Pid
	})
	b := startReplica(t, env, append([]string{"--replica-id", "rep-B", "--data-dir", filepath.Join(dir, "b")}, common...)...)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killed := time.Now()

	// The stream from A breaks; the client goes on from B.
	var got []sse
	collect := func(until func() bool, d time.Duration) {
		deadline := time.After(d)
		for !until() {
			select {
			case ev := <-events:
				got = append(got, ev)
			case <-deadline:
				return
			}
		}
	}
	select {
	case <-brokeA:
	case <-time.After(30 * time.Second):
		t.Fatal("the event stream from the killed replica did not end")
	}
	collect(func() bool { return len(events) == 0 }, time.Second)
	var last int64
	if n := len(got); n > 0 {
		last = got[n-1].ID
	}
	go func() { _ = follow(ctx, b, rec.ID, last, events) }()
	hasResult := func() bool {
		for _, ev := range got {
			if ev.Kind == "message" && strings.Contains(ev.Data, `"type":"result"`) {
				return true
			}
		}
		return false
	}
	collect(hasResult, 2*time.Minute)
	if !hasResult() {
		t.Fatalf("no result through B after the kill; events %+v\nB:\n%s", got, b.stderr)
	}
	t.Logf("the turn's result reached the client %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	collect(func() bool { return false }, 2*time.Second) // anything that would come twice

	// Every event once, in order.
	for i, ev := range got {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d, want %d (ids %v)", i, ev.ID, i+1, ids(got))
		}
	}
	var kinds []string
	seen := map[string]bool{}
	interrupted, results := false, 0
	for _, ev := range got {
		if ev.Kind != "message" {
			continue
		}
		var m struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			UUID    string `json:"uuid"`
			Message struct {
				Content []struct {
					Type      string          `json:"type"`
					ToolUseID string          `json:"tool_use_id"`
					IsError   bool            `json:"is_error"`
					Content   json.RawMessage `json:"content"`
				} `json:"content"`
			} `json:"message"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &m)
		kinds = append(kinds, m.Type)
		if seen[m.UUID] {
			t.Errorf("message %s (%s) published twice", m.UUID, m.Type)
		}
		seen[m.UUID] = true
		for _, blk := range m.Message.Content {
			if blk.ToolUseID == "toolu_bash" && blk.IsError && strings.Contains(string(blk.Content), temporal.InterruptedByWorker) {
				interrupted = true
			}
		}
		if m.Type == "result" {
			results++
			if m.Subtype != "success" {
				t.Errorf("result subtype %q", m.Subtype)
			}
		}
	}
	if !interrupted {
		t.Errorf("no is_error result for the interrupted Bash call; messages %v", kinds)
	}
	want := []string{"user", "system", "system", "assistant", "user", "assistant", "result"} // the prompt, init and the durable loop's notice, the turn
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("the session's messages (-want +got):\n%s", diff)
	}
	if results != 1 {
		t.Errorf("%d results, want 1; messages %v", results, kinds)
	}
	time.Sleep(5 * time.Second) // what the cut call left running has ended
	if out, _ := os.ReadFile(f); strings.Count(string(out), "start") != 1 {
		t.Errorf("the Bash call started %d times (f = %q), want once", strings.Count(string(out), "start"), out)
	}
	if n := len(api.Requests()); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	// B holds the session now and it is idle.
	waitFor(t, 20*time.Second, func() bool {
		_, body := b.do(t, "GET", "/v1/sessions/"+rec.ID, nil)
		return strings.Contains(string(body), `"state":"idle"`)
	})
}

// runningTool is the pid of the worker running the workflow's tool call,
// 0 when none runs.
func runningTool(ctx context.Context, c client.Client, id string) int {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0
	}
	for _, pa := range d.GetPendingActivities() {
		if strings.HasSuffix(pa.GetActivityType().GetName(), "RunTool") && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
			pid, _ := strconv.Atoi(strings.SplitN(pa.GetLastWorkerIdentity(), "@", 2)[0])
			return pid
		}
	}
	return 0
}

func ids(evs []sse) []int64 {
	out := make([]int64, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v", d)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
