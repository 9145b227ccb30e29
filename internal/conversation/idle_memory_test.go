//go:build unix

package conversation_test

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// maxIdleClientHeap bounds the live heap an idle Client keeps with the
// default options (issue 34): 9,394 bytes before the run-only parts were
// deferred and shared, ~6,300 after. The bound leaves room for noise and
// small growth; BenchmarkIdleClient reports the figure.
const maxIdleClientHeap = 7800

// TestIdleClientHeapBound creates a few hundred Clients with the default
// options (transcripts on, default tools, no settings files) and no turn,
// and bounds the live heap each keeps.
func TestIdleClientHeapBound(t *testing.T) {
	const n = 400
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}}
	warm, err := agentloop.NewClient(opts) // what the process does once
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	clients := make([]*agentloop.Client, 0, n)
	defer func() {
		for _, c := range clients {
			c.Close()
		}
	}()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d bytes of live heap per idle Client", per)
	if per > maxIdleClientHeap {
		t.Errorf("an idle Client keeps %d bytes of live heap, want at most %d", per, maxIdleClientHeap)
	}
	runtime.KeepAlive(clients)
}

// TestIdleClientFirstRun: what an idle Client builds only at its first
// run (the main loop's hook points, the subagent registry, the Agent
// tool's spawner, the compiled permission rules) works on that run, when
// the Client was idle a while and its accessors ran first: the
// UserPromptSubmit hook's context reaches the first request, a deny rule
// refuses the call it names, the Agent tool runs its subagent,
// PostToolUse and Stop hooks fire, each once.
func TestIdleClientFirstRun(t *testing.T) {
	var mu sync.Mutex
	fired := map[hooks.Event][]string{}
	note := func(ev hooks.Event, what string) {
		mu.Lock()
		defer mu.Unlock()
		fired[ev] = append(fired[ev], what)
	}
	h := map[hooks.Event][]hooks.Matcher{
		hooks.UserPromptSubmit: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			note(hooks.UserPromptSubmit, in.(hooks.UserPromptSubmitInput).Prompt)
			return hooks.Output{HookSpecificOutput: &hooks.HookSpecificOutput{
				HookEventName: hooks.UserPromptSubmit, AdditionalContext: "CTX-FROM-HOOK"}}, nil
		}}}},
		hooks.PostToolUse: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			note(hooks.PostToolUse, in.(hooks.PostToolUseInput).ToolName)
			return hooks.Output{}, nil
		}}}},
		hooks.Stop: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			note(hooks.Stop, "stop")
			return hooks.Output{}, nil
		}}}},
	}
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_rm", "Bash", map[string]any{"command": "rm -rf nothing-here"}),
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Look", "prompt": "Say hi."}),
		agentlooptest.Text("hi from the subagent"),
		agentlooptest.Text("done"))
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, Hooks: h, AllowedTools: []string{"Agent"},
		DisallowedTools: []string{"Bash(rm:*)"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Accessors before the first run.
	if c.SessionID() == "" || c.Model() == "" {
		t.Fatal("no session id or model before the first run")
	}
	if err := c.SetPermissionMode(agentloop.PermissionDefault); err != nil {
		t.Fatal(err)
	}
	msgs, err := c.Query(context.Background(), "go").Collect()
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if !strings.Contains(reqs[0].LastUserText(), "CTX-FROM-HOOK") {
		t.Errorf("the first request lacks the UserPromptSubmit hook's context:\n%s", reqs[0].LastUserText())
	}
	if res, ok := reqs[1].ToolResult("toolu_rm"); !ok || res.IsError == nil || !*res.IsError {
		t.Errorf("the call the deny rule names was not refused: %+v", res)
	}
	if res, ok := reqs[3].ToolResult("toolu_a"); !ok || !strings.Contains(res.ResultText(), "hi from the subagent") {
		t.Errorf("the Agent tool did not give its subagent's answer: %+v", res)
	}
	mu.Lock()
	defer mu.Unlock()
	want := map[hooks.Event][]string{hooks.UserPromptSubmit: {"go"}, hooks.PostToolUse: {"Agent"}, hooks.Stop: {"stop"}}
	if diff := cmp.Diff(want, fired); diff != "" {
		t.Errorf("hooks fired (-want +got):\n%s", diff)
	}
	if r, ok := msgs[len(msgs)-1].(*agentloop.ResultMessage); !ok || r.IsError {
		t.Errorf("the run did not end in a successful result: %T", msgs[len(msgs)-1])
	}
}
