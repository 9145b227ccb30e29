package servetemporal

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/server/temporaltest"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/temporal"
)

// TestServeBackend drives serve's HTTP API over the Temporal backend with
// an in-process worker: a turn through a permission request answered over
// HTTP; a session whose workflow ended for idleness goes on with its
// conversation; a fork carries the conversation; options the durable loop
// does not carry are refused at creation; DELETE ends the workflow.
func TestServeBackend(t *testing.T) {
	ts := temporaltest.NewServer(temporaltest.WithT(t))
	c := ts.GetDefaultClient()
	api := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_w", "Write", map[string]any{"file_path": "a.txt", "content": "hi"}),
		agentlooptest.Text("written"),
		agentlooptest.Text("second"),
		agentlooptest.Text("forked"))
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	base := &agentloop.Options{}
	backend, err := temporal.ServeBackend(c, "serve-backend", base, &temporal.SessionOptions{IdleTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tenants := serve.NewMemoryTenants()
	tenants.Add("tok", serve.Tenant{ID: "acme"})
	srv, err := serve.New(serve.Config{Root: t.TempDir(), DataDir: t.TempDir(), Tenants: tenants, Provider: p,
		Base: base, Backend: backend, SettingSources: []settings.SettingSource{}, PollInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	w, err := temporal.NewWorker(c, "serve-backend", base, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfgRoot := t.TempDir()
	w.SessionBase(func(in temporal.SessionInput) (*agentloop.Options, error) {
		return srv.SessionOptions(in.Cwd, filepath.Join(cfgRoot, in.SessionID))
	})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	r := &replica{url: hs.URL}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	// Options the durable loop does not carry: 400 at creation.
	code, body := r.do(t, "POST", "/v1/sessions", map[string]any{"agents": map[string]any{"x": map[string]any{"description": "d", "prompt": "p"}}})
	if code != 400 || !strings.Contains(string(body), "Agents") {
		t.Errorf("create with agents: %d %s, want 400 naming Agents", code, body)
	}

	code, body = r.do(t, "POST", "/v1/sessions", map[string]any{"tools": []string{"Write"}})
	if code != 201 {
		t.Fatalf("create: %d %s", code, body)
	}
	var rec struct{ ID, Cwd string }
	_ = json.Unmarshal(body, &rec)
	events := make(chan sse, 100)
	go func() { _ = follow(ctx, r, rec.ID, 0, events) }()
	if code, body := r.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", map[string]string{"text": "write it"}); code != 202 {
		t.Fatalf("message: %d %s", code, body)
	}
	// The Write asks; the answer goes over HTTP to the workflow.
	ev := next(t, events, func(ev sse) bool { return ev.Kind == "permission_request" })
	var pr struct {
		RequestID string `json:"request_id"`
		ToolName  string `json:"tool_name"`
	}
	_ = json.Unmarshal([]byte(ev.Data), &pr)
	if pr.ToolName != "Write" {
		t.Fatalf("permission request %s", ev.Data)
	}
	if code, body := r.do(t, "POST", "/v1/sessions/"+rec.ID+"/permissions/"+pr.RequestID, map[string]string{"behavior": "allow"}); code != 200 {
		t.Fatalf("answer: %d %s", code, body)
	}
	next(t, events, func(ev sse) bool { return ev.Kind == "message" && strings.Contains(ev.Data, `"type":"result"`) })

	// The workflow ends after 2s idle; the next prompt goes on from its
	// conversation in a new one.
	wid := "agentloop-" + rec.ID
	waitFor(t, 30*time.Second, func() bool {
		d, err := c.DescribeWorkflowExecution(ctx, wid, "")
		return err == nil && d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED
	})
	if code, body := r.do(t, "POST", "/v1/sessions/"+rec.ID+"/messages", map[string]string{"text": "again"}); code != 202 {
		t.Fatalf("message after the workflow ended: %d %s", code, body)
	}
	next(t, events, func(ev sse) bool { return ev.Kind == "message" && strings.Contains(ev.Data, `"type":"result"`) })
	reqs := api.Requests()
	if len(reqs) != 3 || len(reqs[2].Params.Messages) != 5 {
		t.Fatalf("the request after the restart has %d messages, want 5 (the first turn's 4 and the prompt)", len(reqs[len(reqs)-1].Params.Messages))
	}
	waitFor(t, 20*time.Second, func() bool {
		_, b := r.do(t, "GET", "/v1/sessions/"+rec.ID, nil)
		return strings.Contains(string(b), `"state":"idle"`)
	})

	// A fork goes on from the conversation.
	code, body = r.do(t, "POST", "/v1/sessions/"+rec.ID+"/fork", nil)
	if code != 201 {
		t.Fatalf("fork: %d %s", code, body)
	}
	var fork struct{ ID string }
	_ = json.Unmarshal(body, &fork)
	fevents := make(chan sse, 100)
	go func() { _ = follow(ctx, r, fork.ID, 0, fevents) }()
	if code, body := r.do(t, "POST", "/v1/sessions/"+fork.ID+"/messages", map[string]string{"text": "in the fork"}); code != 202 {
		t.Fatalf("message to the fork: %d %s", code, body)
	}
	next(t, fevents, func(ev sse) bool { return ev.Kind == "message" && strings.Contains(ev.Data, `"type":"result"`) })
	if reqs := api.Requests(); len(reqs) != 4 || len(reqs[3].Params.Messages) != 7 {
		t.Errorf("the fork's request has %d messages, want 7 (the source's 6 and the prompt)", len(reqs[len(reqs)-1].Params.Messages))
	}

	// DELETE ends the workflow.
	if code, body := r.do(t, "DELETE", "/v1/sessions/"+fork.ID, nil); code != 204 {
		t.Fatalf("delete: %d %s", code, body)
	}
	d, err := c.DescribeWorkflowExecution(ctx, "agentloop-"+fork.ID, "")
	if err != nil || d.GetWorkflowExecutionInfo().GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Errorf("the fork's workflow after DELETE: %v %v", d.GetWorkflowExecutionInfo().GetStatus(), err)
	}
}

// next returns the first event from events that match accepts.
func next(t *testing.T, events <-chan sse, match func(sse) bool) sse {
	t.Helper()
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev := <-events:
			if match(ev) {
				return ev
			}
		case <-deadline:
			t.Fatal("no matching event within 60s")
		}
	}
}
