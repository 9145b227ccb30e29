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
	"slices"
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
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/serve/servecmd"
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
func postgresURL(t *testing.T) string {
	t.Helper()
	conn := os.Getenv("AGENTLOOP_TEST_POSTGRES")
	if conn == "" {
		conn = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, conn)
	if err == nil {
		err = pool.Ping(ctx)
		pool.Close()
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("PostgreSQL unreachable: %v", err)
		}
		t.Skipf("PostgreSQL unreachable: %v", err)
	}
	return conn
}

// newTable names a fresh sessions table in conn, dropped when the test
// ends.
func newTable(t *testing.T, conn string) string {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	table := "agentloop_serve_temporal_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, _ = pool.Exec(context.Background(), "DROP TABLE IF EXISTS "+pgx.Identifier{table}.Sanitize())
		pool.Close()
	})
	return table
}

// failCase is a kill point of TestServeFailover.
type failCase struct {
	name    string
	replies []agentlooptest.Reply
	create  map[string]any
	// ready says when to kill replica A (its worker runs the activity it
	// waits for, or the session waits for a person); events are those A
	// relayed so far.
	ready func(ctx context.Context, c client.Client, wid string, a *replica, api *agentlooptest.Server, events []sse) bool
	// answer, when set, answers a permission request B relays.
	answer bool
	// kinds are the message types the client must see, in order.
	kinds []string
	check func(t *testing.T, cwd string, got []sse, api *agentlooptest.Server)
}

// TestServeFailover runs `agentloop-temporal serve` replicas (API front
// end and worker each) on a real Temporal server and a shared PostgreSQL
// store, and kills -9 the replica that relays a session to its client
// and runs its turn: in the middle of a streamed model reply (the other
// replica's worker asks the model again; one reply is seen), in the
// middle of a state-changing Bash call (not run again: the model gets an
// is_error result saying a worker failed), and while a permission request
// waits for the client (the other replica asks again; the answer there
// lets the call run, once). The other replica takes the session over once
// the dead one's lease runs out and relays the rest; the client,
// reconnecting there with Last-Event-ID, sees every event once and in
// order, up to the turn's result. With the in-process backend the turn
// dies with the replica and none of this happens.
func TestServeFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes; skipped with -short")
	}
	pg := postgresURL(t)
	cases := []failCase{
		{
			name:    "model",
			replies: []agentlooptest.Reply{slowText("cut short by the kill. ", 40), agentlooptest.Text("second attempt")},
			create:  map[string]any{"tools": []string{}},
			ready: func(ctx context.Context, c client.Client, wid string, a *replica, api *agentlooptest.Server, _ []sse) bool {
				return api.Len() >= 1 && running(ctx, c, wid, "CallModel") == a.cmd.Process.Pid
			},
			kinds: []string{"user", "system", "system", "assistant", "result"},
			check: func(t *testing.T, _ string, got []sse, api *agentlooptest.Server) {
				for _, ev := range got {
					if strings.Contains(ev.Data, "cut short") {
						t.Errorf("the cut reply reached the client: %s", ev.Data)
					}
				}
				if n := len(api.Requests()); n != 2 {
					t.Errorf("%d model requests, want 2 (the cut one, then the other worker's)", n)
				}
			},
		},
		{
			name: "bash",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_bash", "Bash", map[string]any{"command": "echo start >> f; sleep 4; echo done >> f"}),
				agentlooptest.Text("ok")},
			create: map[string]any{"tools": []string{"Bash"}, "allowed_tools": []string{"Bash"}},
			ready: func(ctx context.Context, c client.Client, wid string, a *replica, _ *agentlooptest.Server, _ []sse) bool {
				return running(ctx, c, wid, "RunTool") == a.cmd.Process.Pid
			},
			kinds: []string{"user", "system", "system", "assistant", "user", "assistant", "result"},
			check: func(t *testing.T, cwd string, got []sse, api *agentlooptest.Server) {
				if !toolResult(got, "toolu_bash", true, temporal.InterruptedByWorker) {
					t.Errorf("no is_error result %q for the interrupted Bash call", temporal.InterruptedByWorker)
				}
				time.Sleep(5 * time.Second) // what the cut call left running has ended
				if out, _ := os.ReadFile(filepath.Join(cwd, "f")); strings.Count(string(out), "start") != 1 {
					t.Errorf("the Bash call started %d times (f = %q), want once", strings.Count(string(out), "start"), out)
				}
				if n := len(api.Requests()); n != 2 {
					t.Errorf("%d model requests, want 2", n)
				}
			},
		},
		{
			name: "permission",
			replies: []agentlooptest.Reply{
				agentlooptest.ToolUse("toolu_bash", "Bash", map[string]any{"command": "echo start >> f"}),
				agentlooptest.Text("ok")},
			create: map[string]any{"tools": []string{"Bash"}},
			ready: func(_ context.Context, _ client.Client, _ string, _ *replica, _ *agentlooptest.Server, events []sse) bool {
				return slices.ContainsFunc(events, func(ev sse) bool { return ev.Kind == "permission_request" })
			},
			answer: true,
			kinds:  []string{"user", "system", "system", "assistant", "user", "assistant", "result"},
			check: func(t *testing.T, cwd string, got []sse, api *agentlooptest.Server) {
				if !toolResult(got, "toolu_bash", false, "") {
					t.Error("no successful result for the Bash call allowed on the other replica")
				}
				if out, _ := os.ReadFile(filepath.Join(cwd, "f")); strings.Count(string(out), "start") != 1 {
					t.Errorf("the Bash call ran %d times (f = %q), want once", strings.Count(string(out), "start"), out)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { failover(t, pg, tc) })
	}
}

// failover runs one case of TestServeFailover.
func failover(t *testing.T, pg string, tc failCase) {
	table := newTable(t, pg)
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	api := agentlooptest.NewTB(t, tc.replies...)
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

	code, body := a.do(t, "POST", "/v1/sessions", tc.create)
	if code != 201 {
		t.Fatalf("create: %d %s\n%s", code, body, a.stderr)
	}
	var rec struct{ ID, Cwd string }
	_ = json.Unmarshal(body, &rec)
	m, _ := filepath.Glob(filepath.Join(root, "t-*"))
	if len(m) != 1 {
		t.Fatalf("tenant roots %v", m)
	}
	cwd := filepath.Join(m[0], filepath.FromSlash(rec.Cwd))
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

	// A's worker is the only one: it runs the turn. B starts once the
	// kill point is reached, then A dies.
	c, err := client.Dial(client.Options{HostPort: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var got []sse
	drain := func() {
		for {
			select {
			case ev := <-events:
				got = append(got, ev)
			default:
				return
			}
		}
	}
	waitFor(t, 60*time.Second, func() bool {
		drain()
		return tc.ready(ctx, c, "agentloop-"+rec.ID, a, api, got)
	})
	b := startReplica(t, env, append([]string{"--replica-id", "rep-B", "--data-dir", filepath.Join(dir, "b")}, common...)...)
	time.Sleep(300 * time.Millisecond)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = a.cmd.Wait()
	killed := time.Now()

	// The stream from A breaks; the client goes on from B.
	select {
	case <-brokeA:
	case <-time.After(30 * time.Second):
		t.Fatal("the event stream from the killed replica did not end")
	}
	time.Sleep(200 * time.Millisecond)
	drain()
	var last int64
	if n := len(got); n > 0 {
		last = got[n-1].ID
	}
	go func() { _ = follow(ctx, b, rec.ID, last, events) }()
	asked := map[string]bool{}
	for _, ev := range got {
		if ev.Kind == "permission_request" {
			asked[requestID(ev)] = true
		}
	}
	hasResult := func() bool {
		return slices.ContainsFunc(got, func(ev sse) bool {
			return ev.Kind == "message" && strings.Contains(ev.Data, `"type":"result"`)
		})
	}
	deadline := time.After(2 * time.Minute)
	for !hasResult() {
		select {
		case ev := <-events:
			got = append(got, ev)
			if ev.Kind == "permission_request" && tc.answer && !asked[requestID(ev)] {
				asked[requestID(ev)] = true
				if code, body := b.do(t, "POST", "/v1/sessions/"+rec.ID+"/permissions/"+requestID(ev), map[string]string{"behavior": "allow"}); code != 200 {
					t.Fatalf("answer on B: %d %s", code, body)
				}
			}
		case <-deadline:
			t.Fatalf("no result through B after the kill; events %+v\nB:\n%s", got, b.stderr)
		}
	}
	t.Logf("the turn's result reached the client %v after the kill", time.Since(killed).Round(100*time.Millisecond))
	time.Sleep(2 * time.Second) // anything that would come twice
	drain()

	// Every event once, in order; every message once.
	for i, ev := range got {
		if ev.ID != int64(i+1) {
			t.Fatalf("event %d has id %d, want %d (ids %v)", i, ev.ID, i+1, ids(got))
		}
	}
	var kinds []string
	seen := map[string]bool{}
	for _, ev := range got {
		if ev.Kind != "message" {
			continue
		}
		var m struct {
			Type    string `json:"type"`
			Subtype string `json:"subtype"`
			UUID    string `json:"uuid"`
		}
		_ = json.Unmarshal([]byte(ev.Data), &m)
		kinds = append(kinds, m.Type)
		if seen[m.UUID] {
			t.Errorf("message %s (%s) published twice", m.UUID, m.Type)
		}
		seen[m.UUID] = true
		if m.Type == "result" && m.Subtype != "success" {
			t.Errorf("result subtype %q", m.Subtype)
		}
	}
	if diff := cmp.Diff(tc.kinds, kinds); diff != "" {
		t.Errorf("the session's messages (-want +got):\n%s", diff)
	}
	tc.check(t, cwd, got, api)
	// B holds the session now and it is idle.
	waitFor(t, 20*time.Second, func() bool {
		_, body := b.do(t, "GET", "/v1/sessions/"+rec.ID, nil)
		return strings.Contains(string(body), `"state":"idle"`)
	})
}

// toolResult says whether a user message of got carries the result of
// call id, with is_error as given and containing text.
func toolResult(got []sse, id string, isError bool, text string) bool {
	for _, ev := range got {
		var m struct {
			Message struct {
				Content []struct {
					ToolUseID string          `json:"tool_use_id"`
					IsError   bool            `json:"is_error"`
					Content   json.RawMessage `json:"content"`
				} `json:"content"`
			} `json:"message"`
		}
		if ev.Kind != "message" || json.Unmarshal([]byte(ev.Data), &m) != nil {
			continue
		}
		for _, blk := range m.Message.Content {
			if blk.ToolUseID == id && blk.IsError == isError && strings.Contains(string(blk.Content), text) {
				return true
			}
		}
	}
	return false
}

// requestID is the request_id of a permission event.
func requestID(ev sse) string {
	var r struct {
		RequestID string `json:"request_id"`
	}
	_ = json.Unmarshal([]byte(ev.Data), &r)
	return r.RequestID
}

// slowText is a text reply of n parts streamed over about n × 100 ms.
func slowText(part string, n int) agentlooptest.Reply {
	r := agentlooptest.Text(strings.Repeat(part, n))
	r.Chunk = len(part)
	r.EventDelay = 100 * time.Millisecond
	return r
}

// running is the pid of the worker running the workflow's activity of
// type suffix act, 0 when none runs.
func running(ctx context.Context, c client.Client, id, act string) int {
	d, err := c.DescribeWorkflowExecution(ctx, id, "")
	if err != nil {
		return 0
	}
	for _, pa := range d.GetPendingActivities() {
		if strings.HasSuffix(pa.GetActivityType().GetName(), act) && pa.GetState() == enumspb.PENDING_ACTIVITY_STATE_STARTED {
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
