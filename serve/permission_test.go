package serve_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
	"github.com/agentloop/agentloop/session"
)

// permissionRequest reads events until a permission_request and decodes it.
func permissionRequest(t *testing.T, ev *sse) map[string]any {
	t.Helper()
	evs := ev.until(kindIs("permission_request"))
	var req map[string]any
	if err := json.Unmarshal([]byte(evs[len(evs)-1].Data), &req); err != nil {
		t.Fatal(err)
	}
	return req
}

// A Bash call in the default mode is asked over HTTP: the stream carries
// permission_request, the state is requires_action and GET lists it;
// POST allow runs the tool (its output goes back to the model) and
// publishes permission_resolved; a second answer is a conflict.
func TestPermissionAllow(t *testing.T) {
	e := newEnv(t, nil,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "echo served-$((40+2))", "description": "Print a word"}),
		agentlooptest.Text("It printed served-42."))
	id := e.create(tokenA, map[string]any{"tools": []string{"Bash"}, "permission_mode": "default"})
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "run it"})
	req := permissionRequest(t, ev)
	if req["tool_name"] != "Bash" || req["tool_use_id"] != "toolu_1" || req["request_id"] == "" {
		t.Fatalf("permission_request %v", req)
	}
	if in, _ := req["input"].(map[string]any); in["command"] != "echo served-$((40+2))" {
		t.Errorf("permission_request input %v", req["input"])
	}
	rec := e.waitState(id, tokenA, "requires_action")
	if p := rec["pending_permissions"].([]any); len(p) != 1 || p[0].(map[string]any)["request_id"] != req["request_id"] {
		t.Errorf("pending_permissions %v", p)
	}
	rid := req["request_id"].(string)
	e.must(http.StatusOK, "POST", "/v1/sessions/"+id+"/permissions/"+rid, tokenA, map[string]string{"behavior": "allow"})
	evs := ev.until(isResult)
	resolved := false
	for _, x := range evs {
		if x.Kind == "permission_resolved" && strings.Contains(x.Data, `"allow"`) && strings.Contains(x.Data, rid) {
			resolved = true
		}
	}
	if !resolved {
		t.Errorf("no permission_resolved allow among %v", evs)
	}
	res, ok := e.model.Requests()[1].ToolResult("toolu_1")
	if !ok || res.IsError != nil && *res.IsError || !strings.Contains(res.ResultText(), "served-42") {
		t.Errorf("tool result sent to the model: %+v, want the command's output", res)
	}
	again := e.must(http.StatusConflict, "POST", "/v1/sessions/"+id+"/permissions/"+rid, tokenA, map[string]string{"behavior": "allow"})
	if errBody, _ := again["error"].(map[string]any); errBody == nil || errBody["type"] != "conflict" {
		t.Errorf("second answer: %v, want a conflict error", again)
	} else if h, ok := errBody["holder"]; ok {
		t.Errorf("second answer names holder %q: a 409 no replica holds carries no holder", h)
	}
	e.must(http.StatusNotFound, "POST", "/v1/sessions/"+id+"/permissions/perm_nope", tokenA, map[string]string{"behavior": "allow"})
}

// POST deny refuses the call: the tool does not run and the model is told
// the message.
func TestPermissionDeny(t *testing.T) {
	e := newEnv(t, nil,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch denied-file"}),
		agentlooptest.Text("OK, I did not."))
	id := e.create(tokenA, map[string]any{"tools": []string{"Bash"}})
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "touch it"})
	req := permissionRequest(t, ev)
	e.must(http.StatusOK, "POST", "/v1/sessions/"+id+"/permissions/"+req["request_id"].(string), tokenA,
		map[string]string{"behavior": "deny", "message": "not on my watch"})
	ev.until(isResult)
	res, ok := e.model.Requests()[1].ToolResult("toolu_1")
	if !ok || res.IsError == nil || !*res.IsError || !strings.Contains(res.ResultText(), "not on my watch") {
		t.Errorf("tool result sent to the model: %+v, want the denial", res)
	}
	e.must(http.StatusBadRequest, "POST", "/v1/sessions/"+id+"/permissions/x", tokenA, map[string]string{"behavior": "maybe"})
	m := metricsText(t, e)
	for _, want := range []string{"agentloop_serve_tool_errors_total 1\n", "agentloop_serve_permission_requests_total 1\n"} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
}

// Interrupt ends a turn waiting on a permission: the request is resolved
// as cancelled, the turn ends with a result, the session is idle and
// takes the next message.
func TestInterrupt(t *testing.T) {
	e := newEnv(t, nil,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch never-file"}),
		agentlooptest.Text("Back again."))
	id := e.create(tokenA, map[string]any{"tools": []string{"Bash"}})
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "go"})
	req := permissionRequest(t, ev)
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil)
	evs := ev.until(isResult)
	cancelled := false
	for _, x := range evs {
		if x.Kind == "permission_resolved" && strings.Contains(x.Data, req["request_id"].(string)) && strings.Contains(x.Data, "cancelled") {
			cancelled = true
		}
	}
	if !cancelled {
		t.Errorf("no permission_resolved cancelled among %v", evs)
	}
	e.waitState(id, tokenA, "idle")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "again"})
	evs = ev.until(isResult)
	if !strings.Contains(evs[len(evs)-1].Data, "Back again.") {
		t.Errorf("turn after the interrupt ended with %s", evs[len(evs)-1].Data)
	}
}

// The server's settings bind every session as they bind the CLI: a deny
// rule of Config.Base's settings refuses the call even in a session that
// asked for bypassPermissions, and nothing is asked over HTTP.
func TestServerSettingsBindSessions(t *testing.T) {
	e := newEnv(t, func(c *serve.Config) {
		c.Base.Settings = `{"permissions":{"deny":["Bash(touch:*)"]}}`
		c.AllowModes = []agentloop.PermissionMode{agentloop.PermissionBypass}
	},
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch owned", "description": "Make a file"}),
		agentlooptest.Text("Could not."))
	id := e.create(tokenA, map[string]any{"tools": []string{"Bash"}, "permission_mode": "bypassPermissions"})
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "make it"})
	for _, x := range ev.until(isResult) {
		if x.Kind == "permission_request" {
			t.Errorf("a denied call was asked over HTTP: %v", x)
		}
	}
	res, ok := e.model.Requests()[1].ToolResult("toolu_1")
	if !ok || res.IsError == nil || !*res.IsError {
		t.Fatalf("tool result %+v, want a denial", res)
	}
	matches, _ := filepath.Glob(filepath.Join(e.srvRoot(), "*", "owned"))
	if len(matches) > 0 {
		t.Fatalf("the denied command ran: %v", matches)
	}
}

// POST allow with updated_input runs the tool on the input the answer
// gives, not the model's.
func TestPermissionAllowUpdatedInput(t *testing.T) {
	e := newEnv(t, nil,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch model-was-here && echo from-the-model", "description": "Print"}),
		agentlooptest.Text("Done."))
	id := e.create(tokenA, map[string]any{"tools": []string{"Bash"}, "permission_mode": "default"})
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "run it"})
	req := permissionRequest(t, ev)
	e.must(http.StatusOK, "POST", "/v1/sessions/"+id+"/permissions/"+req["request_id"].(string), tokenA,
		map[string]any{"behavior": "allow", "updated_input": map[string]any{"command": "echo from-the-user", "description": "Print"}})
	ev.until(isResult)
	res, ok := e.model.Requests()[1].ToolResult("toolu_1")
	if !ok || !strings.Contains(res.ResultText(), "from-the-user") || strings.Contains(res.ResultText(), "from-the-model") {
		t.Fatalf("tool result %+v, want the output of the updated command", res)
	}
	code, body := e.do("POST", "/v1/sessions/"+id+"/permissions/perm_x", tokenA, map[string]any{"behavior": "allow", "updated_input": []int{1}})
	if code != http.StatusBadRequest && code != http.StatusNotFound {
		t.Errorf("updated_input not an object: %d %s, want 400 or 404", code, body)
	}
}

// A replica that does not hold a session lists the permission prompts
// waiting on the holder (from the stored events); a POST answering one
// goes to the holder through a store that can carry it, and is a 409
// naming the holder with one that cannot; once answered, the list is
// empty.
// With a store slow to take events, an event is shown only once it is
// stored, so the other replica finds what the client just saw.
func TestPendingPermissionsSeenFromOtherReplica(t *testing.T) {
	t.Run("memory", func(t *testing.T) { testPendingElsewhere(t, session.NewMemoryStore()) })
	t.Run("slow events", func(t *testing.T) {
		testPendingElsewhere(t, slowEvents{session.NewMemoryStore(), 50 * time.Millisecond})
	})
}

func testPendingElsewhere(t *testing.T, store session.Store) {
	model := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_1", "Bash", map[string]any{"command": "touch x && echo done", "description": "Make x"}),
		agentlooptest.Text("Made it."))
	named := func(id string) func(*serve.Config) {
		return func(c *serve.Config) { c.ReplicaID, c.IdleRelease = id, time.Hour }
	}
	x := newEnvWith(t, model, store, named("replica-X"))
	y := newEnvWith(t, model, store, named("replica-Y"))
	id := x.create(tokenA, map[string]any{"tools": []string{"Bash"}, "permission_mode": "default"})
	ev := x.subscribe(id, tokenA, "")
	x.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "make x"})
	req := permissionRequest(t, ev)
	rid := req["request_id"].(string)
	rec := y.must(http.StatusOK, "GET", "/v1/sessions/"+id, tokenA, nil)
	p, _ := rec["pending_permissions"].([]any)
	if len(p) != 1 || p[0].(map[string]any)["request_id"] != rid {
		t.Fatalf("pending_permissions on the other replica: %v, want %s", rec["pending_permissions"], rid)
	}
	if _, forwards := store.(session.Watcher); !forwards {
		// A store that cannot carry the answer to X: 409 naming X.
		code, body := y.do("POST", "/v1/sessions/"+id+"/permissions/"+rid, tokenA, map[string]string{"behavior": "allow"})
		if code != http.StatusConflict || !strings.Contains(string(body), "replica-X") {
			t.Fatalf("answer on the other replica: %d %s, want 409 naming replica-X", code, body)
		}
		x.must(http.StatusOK, "POST", "/v1/sessions/"+id+"/permissions/"+rid, tokenA, map[string]string{"behavior": "allow"})
	} else {
		// The answer goes to X through the store.
		y.must(http.StatusOK, "POST", "/v1/sessions/"+id+"/permissions/"+rid, tokenA, map[string]string{"behavior": "allow"})
	}
	ev.until(isResult)
	rec = y.must(http.StatusOK, "GET", "/v1/sessions/"+id, tokenA, nil)
	if p, _ := rec["pending_permissions"].([]any); len(p) != 0 {
		t.Fatalf("pending_permissions after the answer: %v, want none", p)
	}
}
