package serve_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/serve"
)

// A session's life over HTTP: create, list, get, rename and tag, a
// message whose turn streams as stream-json lines, a second message that
// continues the conversation, fork (history copied), delete.
func TestSessionLifecycle(t *testing.T) {
	e := newEnv(t, nil, agentlooptest.Text("Noted: MANGO."), agentlooptest.Text("You said MANGO."),
		agentlooptest.Text("Fork remembers MANGO."))
	rec := e.must(http.StatusCreated, "POST", "/v1/sessions", tokenA,
		map[string]any{"title": "fruit", "tags": []string{"a"}, "model": "claude-sonnet-4-5", "cwd": "proj/x"})
	id := rec["id"].(string)
	want := map[string]any{"id": id, "title": "fruit", "tags": []any{"a"}, "cwd": "proj/x", "model": "claude-sonnet-4-5",
		"state": "idle", "cost_usd": 0.0, "turns": 0.0}
	got := map[string]any{}
	for k := range want {
		got[k] = rec[k]
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("created record (-want +got):\n%s", d)
	}
	if rec["created_at"] == nil || rec["updated_at"] == nil {
		t.Errorf("record without times: %v", rec)
	}

	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "Remember MANGO"})
	evs := ev.until(isResult)
	var kinds []string
	for _, x := range evs {
		if x.Kind == "message" {
			kinds = append(kinds, msgType(x))
		} else {
			kinds = append(kinds, x.Kind)
		}
	}
	if kinds[0] != "state" || !strings.Contains(evs[0].Data, `"running"`) {
		t.Errorf("first event %v, want state running", evs[0])
	}
	if !strings.Contains(strings.Join(kinds, " "), "system/init") || !strings.Contains(strings.Join(kinds, " "), "assistant") {
		t.Errorf("event kinds %v, want system/init, assistant, result", kinds)
	}
	asked := false // the prompt is in the log, for a page that reloads
	for _, x := range evs {
		asked = asked || x.Kind == "message" && strings.Contains(x.Data, `"isReplay":true`) && strings.Contains(x.Data, "Remember MANGO")
	}
	if !asked {
		t.Errorf("no user line with the prompt among the events: %v", kinds)
	}
	for i, x := range evs {
		if x.ID == "" || i > 0 && x.ID <= evs[i-1].ID && len(x.ID) == len(evs[i-1].ID) {
			t.Errorf("event ids not increasing: %v", evs)
		}
	}
	if st := ev.next(); st.Kind != "state" || !strings.Contains(st.Data, `"idle"`) {
		t.Errorf("after the result: %v, want state idle", st)
	}
	got2 := e.waitState(id, tokenA, "idle")
	if got2["turns"] != 1.0 {
		t.Errorf("turns after one message = %v, want 1", got2["turns"])
	}
	if p, ok := got2["pending_permissions"].([]any); !ok || len(p) != 0 {
		t.Errorf("pending_permissions = %v, want []", got2["pending_permissions"])
	}

	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "What did I say?"})
	ev.until(isResult)
	if h := e.model.Requests()[1].Params.Messages; len(h) != 3 || h[1].Content[0].Text != "Noted: MANGO." {
		t.Errorf("second turn's history = %+v, want the first exchange", h)
	}

	patched := e.must(http.StatusOK, "PATCH", "/v1/sessions/"+id, tokenA, map[string]any{"title": "fruits", "tags": []string{"x", "y"}})
	if patched["title"] != "fruits" || len(patched["tags"].([]any)) != 2 {
		t.Errorf("patched record %v", patched)
	}

	fork := e.must(http.StatusCreated, "POST", "/v1/sessions/"+id+"/fork", tokenA, nil)
	fid := fork["id"].(string)
	if fid == id || fork["cwd"] != "proj/x" || fork["title"] != "fruits (fork)" {
		t.Errorf("fork record %v", fork)
	}
	fev := e.subscribe(fid, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+fid+"/messages", tokenA, map[string]string{"text": "And now?"})
	fev.until(isResult)
	if h := e.model.Requests()[2].Params.Messages; len(h) != 5 || h[3].Content[0].Text != "You said MANGO." {
		t.Errorf("fork's history = %+v, want the original's four messages and the new prompt", h)
	}

	list := e.must(http.StatusOK, "GET", "/v1/sessions", tokenA, nil)
	var ids []string
	for _, s := range list["sessions"].([]any) {
		ids = append(ids, s.(map[string]any)["id"].(string))
	}
	if d := cmp.Diff([]string{fid, id}, ids); d != "" {
		t.Errorf("list, newest first (-want +got):\n%s", d)
	}

	e.must(http.StatusNoContent, "DELETE", "/v1/sessions/"+id, tokenA, nil)
	e.must(http.StatusNotFound, "GET", "/v1/sessions/"+id, tokenA, nil)
	list = e.must(http.StatusOK, "GET", "/v1/sessions", tokenA, nil)
	if n := len(list["sessions"].([]any)); n != 1 {
		t.Errorf("%d sessions after delete, want 1", n)
	}
	_ = json.Valid
}

// Messages sent at once to a session not open yet are all taken (the
// replica opens it once, it does not race itself for the lease), and run
// in turn or fold into the running one.
func TestConcurrentMessages(t *testing.T) {
	e := newEnv(t, nil, agentlooptest.Text("r1"), agentlooptest.Text("r2"), agentlooptest.Text("r3"), agentlooptest.Text("r4"))
	e.model.AllowExhausted()
	id := e.create(tokenA, nil)
	const n = 4
	codes := make(chan int, n)
	for i := range n {
		go func() {
			code, _ := e.do("POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": fmt.Sprintf("m%d", i)})
			codes <- code
		}()
	}
	for range n {
		if c := <-codes; c != http.StatusAccepted {
			t.Errorf("concurrent message: %d, want 202", c)
		}
	}
	e.waitState(id, tokenA, "idle")
}

// The events of a message come in the order a page replays them: the
// state "running", the prompt's user line, then the turn's own lines from
// system/init on, even when the turn starts before the server has
// numbered the first two (the hook holds send right after Send queued
// the message).
func TestTurnEventsFollowStateAndPrompt(t *testing.T) {
	t.Cleanup(serve.SetAfterSend(func() { time.Sleep(50 * time.Millisecond) }))
	e := newEnv(t, nil, agentlooptest.Text("one"), agentlooptest.Text("two"))
	id := e.create(tokenA, map[string]any{"title": "order"})
	ev := e.subscribe(id, tokenA, "")
	for i, prompt := range []string{"first", "second"} {
		e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": prompt})
		evs := ev.until(isResult)
		var got []string
		for _, x := range evs[:3] {
			if x.Kind == "message" {
				got = append(got, msgType(x))
			} else {
				got = append(got, x.Kind+" "+x.Data)
			}
		}
		want := []string{`state {"state":"running"}`, "user", "system/init"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("message %d: first events (-want +got):\n%s", i+1, d)
		}
		if st := ev.next(); st.Kind != "state" || !strings.Contains(st.Data, `"idle"`) {
			t.Fatalf("after the result: %v, want state idle", st)
		}
	}
}
