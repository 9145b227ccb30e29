package conversation_test

import (
	"context"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// /compact works through the one-shot Query too: sent as the prompt of a
// resumed session it compacts that session, and the next resume goes on
// from the summary.
func TestCompactViaQuery(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 3)
	ctx := context.Background()
	first, err := agentloop.Query(ctx, "Look at two outputs.", compactOptions(t, srv, cwd, configDir, 0)).Result()
	if err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	opts := compactOptions(t, srv, cwd, configDir, 0)
	opts.Resume = first.SessionID
	msgs, err := agentloop.Query(ctx, "/compact keep the output numbers", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()[before:]
	if len(reqs) != 1 || !isSummary(reqs[0]) {
		t.Fatalf("/compact through Query sent %d requests", len(reqs))
	}
	if text := instructionText(reqs[0]); !strings.Contains(text, "keep the output numbers") || !strings.Contains(text, "SUMMARY-RULE-7") {
		t.Errorf("summary request lacks the custom or CLAUDE.md instructions: %.300s", text)
	} else if strings.Contains(text, "</system-reminder>") {
		t.Errorf("the CLAUDE.md summary instructions carry the memory block's frame: %.600s", text)
	}
	if !strings.Contains(string(reqs[0].Body), "output 2: ") {
		t.Errorf("the summary request does not carry the resumed conversation: %.3000s", reqs[0].Body)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.Subtype != "success" || res.Result == nil || *res.Result != "" || res.NumTurns != 0 {
		t.Errorf("result %s %v", res.Subtype, res.Result)
	}
	if bs := boundaries(t, msgs); len(bs) != 1 || bs[0]["trigger"] != "manual" {
		t.Errorf("boundaries %v", bs)
	}
	srv.SetRouter(nil)
	srv.Push(agentlooptest.Text("Still here."))
	opts = compactOptions(t, srv, cwd, configDir, 0)
	opts.Resume = res.SessionID
	if _, err := agentloop.Query(ctx, "Go on.", opts).Result(); err != nil {
		t.Fatal(err)
	}
	next := srv.LastRequest()
	if text := allUserText(next); !strings.Contains(next.Params.Messages[0].Content[0].Text, "SUMMARY 1:") ||
		strings.Contains(string(next.Body), "output 1: ") || !strings.Contains(text, "RULE-42") {
		t.Errorf("after /compact via Query the resumed history is %.300s\n%s", text, next.Body)
	}
}
