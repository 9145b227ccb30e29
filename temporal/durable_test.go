package temporal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// label names a message for sequence comparisons.
func label(m agentloop.Message) string {
	switch m := m.(type) {
	case *agentloop.SystemMessage:
		return "system/" + m.Subtype
	case *agentloop.AssistantMessage:
		return "assistant:" + m.Message.Content[0].Type
	case *agentloop.UserMessage:
		return "user"
	case *agentloop.ResultMessage:
		return "result/" + m.Subtype
	}
	return m.Kind()
}

// workerOptions are the base options of a test worker talking to srv.
func workerOptions(t testing.TB, srv *agentlooptest.Server) *agentloop.Options {
	t.Helper()
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return &agentloop.Options{Provider: p, SettingSources: []settings.SettingSource{}, DisableAutoCompact: true}
}

// TestDurableMatchesInProcess runs one script twice, through
// agentloop.Query and through a session workflow on a real (in-process)
// Temporal server, and checks that the two streams have the same shape,
// the same tool results and the same file written once.
func TestDurableMatchesInProcess(t *testing.T) {
	script := func(cwd string) []agentlooptest.Reply {
		return []agentlooptest.Reply{
			agentlooptest.Blocks(
				agentlooptest.ToolUseBlock("toolu_r", "Read", map[string]any{"file_path": filepath.Join(cwd, "in.txt")}),
				agentlooptest.ToolUseBlock("toolu_g", "Glob", map[string]any{"pattern": "*.txt"}),
			),
			agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": filepath.Join(cwd, "out.txt"), "content": "written once\n"}),
			agentlooptest.Text("All done."),
		}
	}
	run := func(t *testing.T, durable bool) ([]string, []string, string) {
		cwd := t.TempDir()
		if err := os.WriteFile(filepath.Join(cwd, "in.txt"), []byte("hello\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		srv := agentlooptest.NewTB(t, script(cwd)...)
		opts := &agentloop.Options{Cwd: cwd, Tools: []string{"Read", "Glob", "Write"}, PermissionMode: agentloop.PermissionAcceptEdits}
		var stream agentloop.Stream
		var c client.Client
		if durable {
			c = startWorkers(t, workerOptions(t, srv), 1)
			opts.SessionID = uuid.NewString()
			stream = Query(context.Background(), c, testQueue, "Copy it.", opts)
		} else {
			base := workerOptions(t, srv)
			base.Cwd, base.Tools, base.PermissionMode = opts.Cwd, opts.Tools, opts.PermissionMode
			stream = agentloop.Query(context.Background(), "Copy it.", base)
		}
		msgs, err := stream.Collect()
		if err != nil {
			t.Fatal(err)
		}
		if durable && *update {
			writeHistory(context.Background(), t, c, "agentloop-"+opts.SessionID, "", sessionHistory)
		}
		var labels, results []string
		for _, m := range msgs {
			labels = append(labels, label(m))
			if u, ok := m.(*agentloop.UserMessage); ok {
				for _, b := range u.Message.Content {
					results = append(results, b.ToolUseID+": "+strings.ReplaceAll(b.ResultText(), cwd, "$CWD"))
				}
			}
		}
		out, err := os.ReadFile(filepath.Join(cwd, "out.txt"))
		if err != nil {
			t.Fatal(err)
		}
		return labels, results, string(out)
	}
	wantLabels, wantResults, wantOut := run(t, false)
	gotLabels, gotResults, gotOut := run(t, true)
	if d := cmp.Diff(wantLabels, gotLabels); d != "" {
		t.Errorf("message sequence, in-process (-) and durable (+):\n%s", d)
	}
	if d := cmp.Diff(wantResults, gotResults, sortStrings); d != "" {
		t.Errorf("tool results, in-process (-) and durable (+):\n%s", d)
	}
	if gotOut != wantOut || gotOut != "written once\n" {
		t.Errorf("out.txt = %q durable, %q in-process", gotOut, wantOut)
	}
}

// sessionHistory is the history of TestDurableMatchesInProcess's durable
// run, rewritten with -update.
var sessionHistory = filepath.Join("testdata", "session_history.json")

// TestSessionReplay replays a recorded session (a parallel Read and Glob,
// a Write, a final reply) against SessionWorkflow: a change that makes
// the loop's steps schedule different activities fails here. A workflow
// that asks for its description twice is the control: it must fail.
func TestSessionReplay(t *testing.T) {
	describeTwice := func(ctx workflow.Context, in SessionInput) (*Summary, error) {
		var d Description
		_ = workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, describeOptions), actDescribe, in).Get(ctx, &d)
		return SessionWorkflow(ctx, in)
	}
	for _, tc := range []struct {
		name    string
		wf      any
		wantErr bool
	}{{"unchanged", SessionWorkflow, false}, {"describe twice", describeTwice, true}} {
		t.Run(tc.name, func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(tc.wf, workflow.RegisterOptions{Name: WorkflowName})
			quiet := log.NewStructuredLogger(slog.New(slog.DiscardHandler))
			err := r.ReplayWorkflowHistoryFromJSONFile(quiet, sessionHistory)
			if (err != nil) != tc.wantErr {
				t.Fatalf("replay error = %v, want error: %v", err, tc.wantErr)
			}
		})
	}
}

// TestDurableRefusesBadInput: what a SessionInput cannot hold, and input
// no session could start from, is an error naming it before anything
// starts; a Query's stream runs once.
func TestDurableRefusesBadInput(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	tests := []struct {
		name   string
		client bool // an unusedClient; false: none
		queue  string
		prompt string
		opts   *agentloop.Options
		want   string
	}{
		{"unsupported options", true, testQueue, "hi", &agentloop.Options{MaxThinkingTokens: 10, Title: "x"}, "MaxThinkingTokens, Title"},
		{"no client", false, testQueue, "hi", nil, "no Temporal client"},
		{"no queue", true, "", "hi", nil, "no task queue"},
		{"empty prompt", true, testQueue, "", nil, "empty prompt"},
		{"session id", true, testQueue, "hi", &agentloop.Options{SessionID: "s1"}, `session id "s1" is not a UUID`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c client.Client
			if tc.client {
				c = unusedClient{}
			}
			_, err := Query(ctx, c, tc.queue, tc.prompt, tc.opts).Collect()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
	if _, err := Open(ctx, unusedClient{}, testQueue, nil, &SessionOptions{IdleTimeout: -1}); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("negative IdleTimeout: %v", err)
	}
	if _, err := NewWorker(nil, testQueue, nil, nil); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("NewWorker without a client: %v", err)
	}
	s := Query(ctx, nil, testQueue, "hi", nil)
	_, _ = s.Collect()
	if _, err := s.Collect(); !errors.Is(err, agentloop.ErrStreamUsed) {
		t.Errorf("second range: %v, want ErrStreamUsed", err)
	}
}

// unusedClient is a Temporal client that no test case may reach: each of
// its methods fails the call.
type unusedClient struct{ client.Client }

// TestDurableSessionPrompts: a Session keeps its conversation between
// prompts (the second request carries the first exchange), also across a
// continue-as-new (ContinueAfter 1: a new run after every prompt), refuses
// a prompt once closed, and its workflow completes on Close.
func TestDurableSessionPrompts(t *testing.T) {
	for _, so := range []*SessionOptions{nil, {ContinueAfter: 1}} {
		t.Run(fmt.Sprintf("continueAfter=%d", map[bool]int{true: 0, false: 1}[so == nil]), func(t *testing.T) {
			srv := agentlooptest.NewTB(t, agentlooptest.Text("one"), agentlooptest.Text("two"), agentlooptest.Text("three"))
			c := startWorkers(t, workerOptions(t, srv), 1)
			ctx := context.Background()
			s, err := Open(ctx, c, testQueue, &agentloop.Options{Cwd: t.TempDir(), Tools: []string{}}, so)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []string{"one", "two", "three"} {
				msgs, err := s.Query(ctx, fmt.Sprintf("prompt %d", i+1)).Collect()
				if err != nil {
					t.Fatal(err)
				}
				var labels []string
				for _, m := range msgs {
					labels = append(labels, label(m))
				}
				if d := cmp.Diff([]string{"system/init", "assistant:text", "result/success"}, labels); d != "" {
					t.Errorf("prompt %d's stream (-want +got):\n%s", i+1, d)
				}
				if r := msgs[len(msgs)-1].(*agentloop.ResultMessage); r.Result == nil || *r.Result != want {
					t.Errorf("prompt %d: result %v, want %q", i+1, r.Result, want)
				}

			}
			var roles []string
			for _, m := range srv.LastRequest().Params.Messages {
				roles = append(roles, m.Role)
			}
			if d := cmp.Diff([]string{"user", "assistant", "user", "assistant", "user"}, roles); d != "" {
				t.Errorf("third request's history (-want +got):\n%s", d)
			}
			d, err := c.DescribeWorkflowExecution(ctx, s.ID(), "")
			if err != nil {
				t.Fatal(err)
			}
			continued := d.GetWorkflowExecutionInfo().GetExecution().GetRunId() != s.run.GetRunID()
			if continued != (so != nil) {
				t.Errorf("the session continued as new: %v, want %v", continued, so != nil)
			}
			if err := s.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Query(ctx, "four").Result(); err == nil {
				t.Error("a prompt after Close was accepted")
			}
		})
	}
}

// TestDurableInterruptAndSetModel: an interrupt stops a run in the middle
// of a streamed reply (its stream ends with a result, nothing of the cut
// reply is kept), the next prompt runs on a valid history, and SetModel
// changes the model of the next request.
func TestDurableInterruptAndSetModel(t *testing.T) {
	srv := agentlooptest.NewTB(t, slowText("never finished. ", 100), agentlooptest.Text("after"))
	c := startWorkers(t, workerOptions(t, srv), 1)
	ctx := context.Background()
	s, err := Open(ctx, c, testQueue, &agentloop.Options{Cwd: t.TempDir(), Tools: []string{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	done := make(chan []agentloop.Message, 1)
	go func() {
		msgs, _ := s.Query(ctx, "first").Collect()
		done <- msgs
	}()
	waitFor(t, 30*time.Second, func() bool { return len(srv.Requests()) == 1 })
	if err := s.Interrupt(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case msgs := <-done:
		last, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage)
		if !ok {
			t.Fatalf("the interrupted run's stream ends with %T", msgs[len(msgs)-1])
		}
		for _, m := range msgs {
			if a, ok := m.(*agentloop.AssistantMessage); ok {
				t.Errorf("the cut reply reached the stream: %+v", a.Message.Content)
			}
		}
		t.Logf("interrupted run: %s %v", last.Subtype, last.Errors)
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not stop on Interrupt")
	}
	if err := s.SetModel(ctx, "haiku"); err != nil {
		t.Fatal(err)
	}
	res, err := s.Query(ctx, "second").Result()
	if err != nil || res.Result == nil || *res.Result != "after" {
		t.Fatalf("after the interrupt: %+v, %v", res, err)
	}
	last := srv.LastRequest()
	if err := agentlooptest.ValidateHistory(last.Params.Messages); err != nil {
		t.Errorf("the request after the interrupt is not one the API accepts: %v", err)
	}
	if last.Params.Model != pricing.Resolve("haiku") {
		t.Errorf("model after SetModel = %q", last.Params.Model)
	}
}

// TestDurableSetPermissionMode: a mode set by the client decides the next
// calls: a Write that default mode denies runs after acceptEdits is set.
func TestDurableSetPermissionMode(t *testing.T) {
	cwd := t.TempDir()
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Write", map[string]any{"file_path": filepath.Join(cwd, "a.txt"), "content": "a"}),
		agentlooptest.Text("denied"),
		agentlooptest.ToolUse("toolu_2", "Write", map[string]any{"file_path": filepath.Join(cwd, "b.txt"), "content": "b"}),
		agentlooptest.Text("written"))
	c := startWorkers(t, workerOptions(t, srv), 1)
	ctx := context.Background()
	s, err := Open(ctx, c, testQueue, &agentloop.Options{Cwd: cwd, Tools: []string{"Write"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	msgs, err := s.Query(ctx, "one").Collect()
	if err != nil {
		t.Fatal(err)
	}
	if _, isErr := resultText(msgs, "toolu_1"); !isErr {
		t.Error("default mode let the first Write run")
	}
	if err := s.SetPermissionMode(ctx, "nonsense"); err == nil {
		t.Error("an unknown mode was accepted")
	}
	if err := s.SetPermissionMode(ctx, agentloop.PermissionAcceptEdits); err != nil {
		t.Fatal(err)
	}
	msgs, err = s.Query(ctx, "two").Collect()
	if err != nil {
		t.Fatal(err)
	}
	if text, isErr := resultText(msgs, "toolu_2"); isErr {
		t.Errorf("acceptEdits did not let the second Write run: %s", text)
	}
	if _, err := os.Stat(filepath.Join(cwd, "b.txt")); err != nil {
		t.Error(err)
	}
}

// TestDurableAutoCompaction: past the worker's compaction threshold, the
// workflow's loop compacts (the summary is a model call like any other)
// and the next request starts from the summary.
func TestDurableAutoCompaction(t *testing.T) {
	big := agentlooptest.Text("a long answer")
	big.Usage = model.Usage{InputTokens: 9_500, OutputTokens: 10}
	srv := agentlooptest.NewTB(t, big, agentlooptest.Text("SUMMARY: one long answer"), agentlooptest.Text("after"))
	opts := workerOptions(t, srv)
	opts.DisableAutoCompact, opts.AutoCompactWindow = false, 10_000
	c := startWorkers(t, opts, 1)
	ctx := context.Background()
	s, err := Open(ctx, c, testQueue, &agentloop.Options{Cwd: t.TempDir(), Tools: []string{}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	if _, err := s.Query(ctx, "first").Result(); err != nil {
		t.Fatal(err)
	}
	msgs, err := s.Query(ctx, "second").Collect()
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, m := range msgs {
		labels = append(labels, label(m))
	}
	if !slices.Contains(labels, "system/compact_boundary") {
		t.Errorf("no compact_boundary in %v", labels)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3 (first, summary, second)", len(reqs))
	}
	if body := string(reqs[2].Body); !strings.Contains(body, "SUMMARY: one long answer") {
		t.Errorf("the request after compaction does not start from the summary: %.500s", body)
	}
}

// TestDurableStructuredOutput: Options.OutputFormat travels with the
// session and its run ends with the structured value, as in-process.
func TestDurableStructuredOutput(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_s", "StructuredOutput", map[string]any{"answer": 7}),
		agentlooptest.Text("done"))
	c := startWorkers(t, workerOptions(t, srv), 1)
	schema := json.RawMessage(`{"type":"object","properties":{"answer":{"type":"integer"}},"required":["answer"]}`)
	res, err := Query(context.Background(), c, testQueue, "Answer.", &agentloop.Options{Cwd: t.TempDir(), Tools: []string{},
		OutputFormat: &agentloop.OutputFormat{Type: "json_schema", Schema: schema}}).Result()
	if err != nil {
		t.Fatal(err)
	}
	if string(res.StructuredOutput) != `{"answer":7}` {
		t.Errorf("structured output = %s", res.StructuredOutput)
	}
	if tools := srv.Requests()[0].Params.Tools; len(tools) != 1 || tools[0].Name != "StructuredOutput" {
		t.Errorf("tools offered: %+v", tools)
	}
}

// TestDurableToolSearch: with the default tools, some of which are
// deferred, the durable loop declares the same tools and system prompt to
// the model as the in-process one, and a ToolSearch call loads a deferred
// tool for the next request in both.
func TestDurableToolSearch(t *testing.T) {
	script := []agentlooptest.Reply{
		agentlooptest.ToolUse("toolu_ts", "ToolSearch", map[string]any{"query": "select:WebFetch"}),
		agentlooptest.Text("found"),
	}
	requests := func(durable bool) [][]string {
		srv := agentlooptest.NewTB(t, script...)
		base := workerOptions(t, srv)
		cwd := t.TempDir()
		var err error
		if durable {
			c := startWorkers(t, base, 1)
			_, err = Query(context.Background(), c, testQueue, "Find a web tool.", &agentloop.Options{Cwd: cwd}).Result()
		} else {
			base.Cwd = cwd
			_, err = agentloop.Query(context.Background(), "Find a web tool.", base).Result()
		}
		if err != nil {
			t.Fatal(err)
		}
		var out [][]string
		for _, r := range srv.Requests() {
			var names []string
			for _, td := range r.Params.Tools {
				names = append(names, td.Name)
			}
			out = append(out, names)
		}
		return out
	}
	want, got := requests(false), requests(true)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tools declared per request, in-process (-) and durable (+):\n%s", d)
	}
	if len(want) != 2 || slices.Contains(want[0], "WebFetch") || !slices.Contains(want[1], "WebFetch") {
		t.Errorf("in-process: %v (want WebFetch deferred, then loaded)", want)
	}
}

// TestDurablePartialMessages: with IncludePartialMessages the reply's
// stream events reach the client, signalled by the model call while it
// streams: as many as in-process, all before the reply's message.
func TestDurablePartialMessages(t *testing.T) {
	count := func(durable bool) (events int, labels []string) {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("a reply streamed in several deltas, long enough to split"))
		base := workerOptions(t, srv)
		opts := &agentloop.Options{Cwd: t.TempDir(), Tools: []string{}, IncludePartialMessages: true}
		var msgs []agentloop.Message
		var err error
		if durable {
			c := startWorkers(t, base, 1)
			msgs, err = Query(context.Background(), c, testQueue, "Say it.", opts).Collect()
		} else {
			base.Cwd, base.Tools, base.IncludePartialMessages = opts.Cwd, opts.Tools, true
			msgs, err = agentloop.Query(context.Background(), "Say it.", base).Collect()
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			labels = append(labels, label(m))
			if m.Kind() == "stream_event" {
				events++
			}
		}
		return events, labels
	}
	want, _ := count(false)
	got, labels := count(true)
	if want == 0 || got != want {
		t.Errorf("%d stream events durable, %d in-process", got, want)
	}
	if i, j := slices.Index(labels, "assistant:text"), slices.Index(labels, "stream_event"); i < 0 || j < 0 || j > i {
		t.Errorf("durable stream %v: want the events before the reply", labels)
	}
}
