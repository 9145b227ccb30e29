//go:build unix

package conversation_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
	"github.com/agentloop/agentloop/tool"
	"github.com/google/go-cmp/cmp"
)

// maxIdleClientHeap bounds the live heap an idle Client keeps with the
// default options (issue 34): 9,394 bytes before the run-only parts were
// deferred and shared, ~5,600 after; ~3,550 once the engine session is
// made at the first run, the resolved options are shared between Clients
// made with the same ones and the maps only runs fill are made by the
// first. The bound leaves room for noise and small growth;
// BenchmarkIdleClient reports the figure.
const maxIdleClientHeap = 4200

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
// run (the engine session, the main loop's hook points, the subagent
// registry, the Agent tool's spawner, the compiled permission rules)
// works on that run, whether the Client's accessors ran first (the model
// and effort are answered without the engine; setting the effort makes
// it) or not: the UserPromptSubmit hook's context reaches the first
// request, a deny rule refuses the call it names, the Agent tool runs its
// subagent, PostToolUse and Stop hooks fire, each once, and the requests
// carry the options' model and effort.
func TestIdleClientFirstRun(t *testing.T) {
	tests := []struct {
		name   string
		before func(t *testing.T, c *agentloop.Client) // on the idle Client
		effort string                                  // the first request's
	}{
		{name: "accessors first", effort: "high", before: func(t *testing.T, c *agentloop.Client) {
			if c.SessionID() == "" {
				t.Fatal("no session id before the first run")
			}
			if got, want := c.Model(), pricing.Resolve("sonnet"); got != want {
				t.Errorf("Model() = %q before the first run, want %q", got, want)
			}
			if got := c.Effort(); got != "low" {
				t.Errorf("Effort() = %q before the first run, want low", got)
			}
			if err := c.SetPermissionMode(agentloop.PermissionDefault); err != nil {
				t.Fatal(err)
			}
			if err := c.SetEffort("high"); err != nil {
				t.Fatal(err)
			}
			if got := c.Effort(); got != "high" {
				t.Errorf("Effort() = %q after SetEffort, want high", got)
			}
			if len(c.SupportedCommands()) == 0 {
				t.Error("no supported commands before the first run")
			}
		}},
		{name: "query first", effort: "low", before: func(*testing.T, *agentloop.Client) {}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
				DisallowedTools: []string{"Bash(rm:*)"}, Model: "sonnet", Effort: "low"})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			tt.before(t, c)
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
			if got, want := reqs[0].Params.Model, pricing.Resolve("sonnet"); got != want {
				t.Errorf("the first request's model is %q, want %q", got, want)
			}
			if got := string(reqs[0].Field("output_config")); !strings.Contains(got, `"effort":"`+tt.effort+`"`) {
				t.Errorf("the first request's output_config is %s, want effort %s", got, tt.effort)
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
		})
	}
}

// TestIdleClientEngineAsAtNewClient: the engine an idle Client makes at
// its first run is the one NewClient would have made: the first request
// is the same, byte for byte, as that of a Client whose engine was made
// at once (by SetEffort), with every option the engine takes from the
// session set, though CLAUDE.md changed in between (both send what
// NewClient read).
func TestIdleClientEngineAsAtNewClient(t *testing.T) {
	cwd := t.TempDir()
	memo := filepath.Join(cwd, "CLAUDE.md")
	if err := os.WriteFile(memo, []byte("MEMO-AT-NEWCLIENT"), 0o644); err != nil {
		t.Fatal(err)
	}
	var touched atomic.Int32
	custom := testTools(&touched)[:1]
	type client struct {
		srv *agentlooptest.Server
		c   *agentloop.Client
	}
	clients := map[string]*client{}
	for _, name := range []string{"made at once", "made at the first run"} {
		srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
		c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: t.TempDir(),
			SettingSources: []settings.SettingSource{settings.Project}, Model: "sonnet", FallbackModels: []string{"opus"},
			Effort: "medium", MaxThinkingTokens: 2048, MaxTokens: 4000, MaxTurns: 3, MaxBudgetUSD: 5,
			AppendSystemPrompt: "APPENDED", CustomTools: custom, Betas: []string{"context-1m-2025-08-07"},
			IncludePartialMessages: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if name == "made at once" {
			if err := c.SetEffort("medium"); err != nil {
				t.Fatal(err)
			}
		}
		clients[name] = &client{srv: srv, c: c}
	}
	if err := os.WriteFile(memo, []byte("MEMO-AFTER"), 0o644); err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{}
	for name, cl := range clients {
		if _, err := cl.c.Query(context.Background(), "hi").Result(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		reqs := cl.srv.Requests()
		if len(reqs) != 1 {
			t.Fatalf("%s: %d requests, want 1", name, len(reqs))
		}
		bodies[name] = strings.ReplaceAll(string(reqs[0].Body), cl.c.SessionID(), "SESSION-ID")
	}
	if diff := cmp.Diff(bodies["made at once"], bodies["made at the first run"]); diff != "" {
		t.Errorf("the first request of the engine made at the first run differs (-at once +first run):\n%s", diff)
	}
	for _, want := range []string{"MEMO-AT-NEWCLIENT", "APPENDED", `"echo"`, `"budget_tokens":2048`, `"max_tokens":4000`} {
		if !strings.Contains(bodies["made at the first run"], want) {
			t.Errorf("the first request lacks %s:\n%s", want, bodies["made at the first run"])
		}
	}
}

// shiftyTool is a custom tool whose name the test changes after NewClient,
// which its Info contract allows between runs.
// Its schema is an object's unless schema is set.
type shiftyTool struct {
	name   atomic.Pointer[string]
	schema string
}

func (s *shiftyTool) Info() tool.Info {
	schema := `{"type":"object"}`
	if s.schema != "" {
		schema = s.schema
	}
	return tool.Info{Name: *s.name.Load(), Description: "Shifts.", InputSchema: []byte(schema)}
}

func (s *shiftyTool) Run(context.Context, *agentloop.ToolCall) (agentloop.ToolResult, error) {
	return agentloop.ToolResult{}, nil
}

// TestIdleClientToolChangedBeforeFirstRun: a custom tool whose Info no
// longer passes the engine's checks when the idle Client makes its engine
// (NewClient checked it as it was) fails that run with an error that says
// so, rather than running without it unannounced; the Client's accessors
// go on working.
func TestIdleClientToolChangedBeforeFirstRun(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	tl := &shiftyTool{}
	name := "shifty"
	tl.name.Store(&name)
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, CustomTools: []agentloop.Tool{tl}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	blank := ""
	tl.name.Store(&blank)
	_, err = c.Query(context.Background(), "hi").Result()
	if err == nil || !strings.Contains(err.Error(), "the tools changed since the session started") {
		t.Errorf("the first run's error is %v, want one saying the tools changed", err)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
	if c.Model() == "" {
		t.Error("no model after the failed run")
	}
}

// TestIdleClientConcurrentFirstUse: the calls that make an idle Client's
// engine may come at once from several goroutines (run it with -race):
// one engine is made, and what each call set is in it.
func TestIdleClientConcurrentFirstUse(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.Text("ok"))
	c, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, Model: "sonnet"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			switch {
			case i%4 == 0:
				if err := c.SetEffort("high"); err != nil {
					t.Error(err)
				}
			case i%4 == 1:
				if err := c.SetMaxThinkingTokens(2048); err != nil {
					t.Error(err)
				}
			case i == 3: // one only: it takes the Client as a query does
				if _, err := c.ContextUsage(context.Background()); err != nil {
					t.Error(err)
				}
			default:
				c.Model()
				c.Effort()
			}
		})
	}
	wg.Wait()
	if _, err := c.Query(context.Background(), "hi").Result(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	body := string(reqs[0].Body)
	for _, want := range []string{`"effort":"high"`, `"budget_tokens":2048`} {
		if !strings.Contains(body, want) {
			t.Errorf("the request lacks %s, set before the first run:\n%s", want, body)
		}
	}
}

// TestIdleClientsShareNoState: Clients made with the same options share
// the options they resolved to (an idle Client keeps less), and nothing a
// Client changes on its own: a /rename names one Client only.
func TestIdleClientsShareNoState(t *testing.T) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	opts := &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, Title: "Shared title"}
	var cs [2]*agentloop.Client
	for i := range cs {
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		cs[i] = c
	}
	title := func(c *agentloop.Client, prompt string) string {
		r, err := c.Query(context.Background(), prompt).Result()
		if err != nil {
			t.Fatalf("%s: %v", prompt, err)
		}
		return r.Text()
	}
	if got := title(cs[0], "/rename Mine"); !strings.Contains(got, "Session title set to: Mine") {
		t.Fatalf("/rename Mine said %q", got)
	}
	want := []string{"Current title: Mine", "Current title: Shared title"}
	for i, c := range cs {
		if got := title(c, "/rename"); !strings.Contains(got, want[i]) {
			t.Errorf("client %d: /rename said %q, want %q", i, got, want[i])
		}
	}
}

// TestIdleClientEngineErrorAtNewClient: what the engine refuses (here a
// custom tool's schema that does not compile) is NewClient's error,
// though the engine itself is made later.
func TestIdleClientEngineErrorAtNewClient(t *testing.T) {
	srv := agentlooptest.NewServer()
	defer srv.Close()
	tl := &shiftyTool{schema: `{"type": 7}`}
	name := "shifty"
	tl.name.Store(&name)
	_, err := agentloop.NewClient(&agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, CustomTools: []agentloop.Tool{tl}})
	if err == nil || !strings.Contains(err.Error(), `tool "shifty"`) {
		t.Errorf("NewClient = %v, want the engine's error about tool shifty", err)
	}
}
