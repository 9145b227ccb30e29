package temporal

import (
	"context"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/tool"
)

// TestDurableLargePayloads: a tool result of 3 MB (over Temporal's 2 MB
// payload limit; the tool sets no inline limit) goes through a session
// whose client and worker use SpillingDataConverter: the activity result,
// the next model request and the session's lines are kept in the session
// store, and the model gets the whole result. A result over its tool's
// inline limit is saved by the worker and previewed, as in-process.
// With Temporal's default converter the huge result never arrives (its
// activity's result is refused, and the model gets an error instead).
func TestDurableLargePayloads(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 3<<20/16)
	type empty struct{}
	huge := tool.New("Huge", "Returns a large text.", func(context.Context, empty, *tool.Call) (tool.Result, error) {
		return tool.Text(big), nil
	}, &tool.Options{ReadOnly: true, MaxResultChars: -1})
	long := tool.New("Long", "Returns a long text.", func(context.Context, empty, *tool.Call) (tool.Result, error) {
		return tool.Text(big[:200_000]), nil
	}, &tool.Options{ReadOnly: true})
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_huge", "Huge", map[string]any{}),
		agentlooptest.ToolUse("toolu_long", "Long", map[string]any{}),
		agentlooptest.Text("done"))
	base := workerOptions(t, srv)
	base.CustomTools = []agentloop.Tool{huge, long}
	ts := newTestServer(t)
	store := session.NewMemoryStore()
	c, err := client.Dial(client.Options{HostPort: ts.GetFrontendHostPort(), Namespace: ts.GetDefaultNamespace(),
		DataConverter: SpillingDataConverter(store, 0)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := NewWorker(c, testQueue, base, &worker.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Query(ctx, c, testQueue, "Fetch both.", &agentloop.Options{Cwd: t.TempDir()}).Result()
	if err != nil {
		t.Fatalf("the session failed: %v", err)
	}
	if res.Subtype != "success" {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	msgs := reqs[2].Params.Messages
	var hugeText, longText string
	for _, m := range msgs {
		for _, b := range m.Content {
			switch b.ToolUseID {
			case "toolu_huge":
				hugeText = b.ResultText()
			case "toolu_long":
				longText = b.ResultText()
			}
		}
	}
	if hugeText != big {
		t.Errorf("the model got %d bytes of the huge result, want all %d", len(hugeText), len(big))
	}
	if len(longText) > 10_000 || !strings.Contains(longText, ".txt") {
		t.Errorf("the long result reached the model as %d bytes (%.200q), want a preview naming its file", len(longText), longText)
	}
	spilled, err := store.List(ctx, spillProject)
	if err != nil || len(spilled) == 0 {
		t.Errorf("nothing spilled to the store (%v)", err)
	}
}
