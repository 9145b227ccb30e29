package serve_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
)

// An interrupt through serve ends the turn as every entry point does: the
// marker line, then the error result; the next message is sent after the
// marker, as a new prompt, in a request the API accepts.
func TestInterruptWritesMarker(t *testing.T) {
	slow := agentlooptest.Text("slow")
	slow.Delay = 30 * time.Second
	e := newEnv(t, nil, slow, agentlooptest.Text("second answer"))
	id := e.create(tokenA, map[string]any{})
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "first prompt"})
	ev.until(func(e sseEvent) bool { return e.Kind == "state" && strings.Contains(e.Data, "running") })
	for e.model.Len() < 1 {
		time.Sleep(10 * time.Millisecond)
	}
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/interrupt", tokenA, nil)
	seen := ev.until(isResult)
	marker := -1
	for i, s := range seen {
		if s.Kind == "message" && strings.Contains(s.Data, engine.InterruptedMarker) {
			marker = i
		}
	}
	if marker < 0 || !strings.Contains(seen[len(seen)-1].Data, "error_during_execution") {
		t.Fatalf("the interrupted turn's events lack the marker (%d) or the error result: %v", marker, seen)
	}
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "second prompt"})
	ev.until(isResult)
	msgs := e.model.LastRequest().Params.Messages
	if err := agentlooptest.ValidateHistory(msgs); err != nil {
		t.Errorf("the next request is invalid: %v", err)
	}
	last := msgs[len(msgs)-1].Content
	if len(msgs) != 1 || len(last) < 3 || last[len(last)-2].Text != engine.InterruptedMarker+"\n" || last[len(last)-1].Text != "second prompt" {
		t.Errorf("the next request: %+v; want the prompt, the marker, the new prompt in one user turn", msgs)
	}
}
