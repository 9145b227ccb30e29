package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// deferHook is a PreToolUse callback whose decision the test sets, and
// which remembers the calls it saw.
type deferHook struct {
	mu       sync.Mutex
	decision hooks.Decision
	seen     []string // tool_use ids
}

func (h *deferHook) set(d hooks.Decision) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.decision = d
}

func (h *deferHook) calls() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

func (h *deferHook) matchers() map[hooks.Event][]hooks.Matcher {
	return map[hooks.Event][]hooks.Matcher{hooks.PreToolUse: cb(func(in hooks.Input) hooks.Output {
		h.mu.Lock()
		defer h.mu.Unlock()
		h.seen = append(h.seen, in.(hooks.PreToolUseInput).ToolUseID)
		d := h.decision
		return specific(hooks.PreToolUse, func(o *hooks.HookSpecificOutput) {
			o.PermissionDecision = d
			o.PermissionDecisionReason = "decided by the test"
		})
	})}
}

// deferOpts are options for a session with Write and Bash, both allowed
// by rule, the hook h and a transcript under cfg.
func deferOpts(t *testing.T, srv *agentlooptest.Server, h *deferHook, cwd, cfg string) *agentloop.Options {
	t.Helper()
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{"Write", "Bash"},
		AllowedTools: []string{"Write", "Bash"}, Hooks: h.matchers(), SettingSources: []settings.SettingSource{}}
}

// writeReply is a reply that says a word and asks to write path.
func writeReply(id, path string) agentlooptest.Reply {
	return agentlooptest.Blocks(model.TextBlock("Writing it."),
		agentlooptest.ToolUseBlock(id, "Write", map[string]any{"file_path": path, "content": "hello\n"}))
}

// checkDeferred checks a result ended on the deferred Write call id.
func checkDeferred(t *testing.T, res *agentloop.ResultMessage, id, path string) {
	t.Helper()
	if res == nil {
		t.Fatal("no result")
	}
	stop := ""
	if res.StopReason != nil {
		stop = *res.StopReason
	}
	got := struct {
		Subtype, Stop, Terminal string
		IsError                 bool
	}{res.Subtype, stop, res.TerminalReason, res.IsError}
	want := struct {
		Subtype, Stop, Terminal string
		IsError                 bool
	}{"success", "tool_deferred", "tool_deferred", false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("deferred result (-want +got):\n%s", diff)
	}
	if res.DeferredToolUse == nil {
		t.Fatal("deferred_tool_use missing")
	}
	var in map[string]any
	if err := json.Unmarshal(res.DeferredToolUse.Input, &in); err != nil {
		t.Fatalf("deferred_tool_use.input: %v", err)
	}
	gotUse := map[string]any{"id": res.DeferredToolUse.ID, "name": res.DeferredToolUse.Name, "input": in}
	wantUse := map[string]any{"id": id, "name": "Write", "input": map[string]any{"file_path": path, "content": "hello\n"}}
	if diff := cmp.Diff(wantUse, gotUse); diff != "" {
		t.Errorf("deferred_tool_use (-want +got):\n%s", diff)
	}
	if len(res.PermissionDenials) != 0 {
		t.Errorf("a deferral is no denial: permission_denials = %+v", res.PermissionDenials)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the deferred Write ran: stat %s: %v", path, err)
	}
}

// checkResumedRequest checks that req sends the deferred call's result
// first and then the prompt, in one user message.
func checkResumedRequest(t *testing.T, req *agentlooptest.Request, id, prompt string, isError bool) model.Content {
	t.Helper()
	last := req.LastUserMessage()
	if last == nil || len(last.Content) < 2 {
		t.Fatalf("last user message = %+v, want the tool result and the prompt", last)
	}
	tr, text := last.Content[0], last.Content[len(last.Content)-1]
	if tr.Type != model.TypeToolResult || tr.ToolUseID != id {
		t.Errorf("first block of the user turn = %+v, want the result of %s", tr, id)
	}
	if got := tr.IsError != nil && *tr.IsError; got != isError {
		t.Errorf("tool result is_error = %v, want %v (%q)", got, isError, tr.ResultText())
	}
	if text.Type != model.TypeText || text.Text != prompt {
		t.Errorf("last block of the user turn = %+v, want the prompt %q", text, prompt)
	}
	return tr
}

// A defer on the only call ends the run with the call pending; the same
// Client's next Query fires PreToolUse again, runs the call, and sends its
// result with the new prompt.
func TestDeferClientResumes(t *testing.T) {
	cwd := t.TempDir()
	path := filepath.Join(cwd, "out.txt")
	srv := agentlooptest.NewTB(t, writeReply("toolu_w", path), agentlooptest.Text("Written."))
	h := &deferHook{decision: hooks.Defer}
	c, err := agentloop.NewClient(deferOpts(t, srv, h, cwd, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Query(context.Background(), "write the file").Result()
	if err != nil {
		t.Fatal(err)
	}
	checkDeferred(t, res, "toolu_w", path)
	if srv.Len() != 1 {
		t.Fatalf("%d requests after the deferral, want 1", srv.Len())
	}

	h.set(hooks.Allow)
	msgs, err := c.Query(context.Background(), "go on").Collect()
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "hello\n" {
		t.Errorf("after the resume the file holds %q (%v), want hello", b, err)
	}
	if diff := cmp.Diff([]string{"toolu_w", "toolu_w"}, h.calls()); diff != "" {
		t.Errorf("PreToolUse calls (-want +got):\n%s", diff)
	}
	tr := checkResumedRequest(t, srv.Requests()[1], "toolu_w", "go on", false)
	if !strings.Contains(tr.ResultText(), "out.txt") {
		t.Errorf("tool result %q does not come from Write", tr.ResultText())
	}
	// The stream shows the call's result before the model's reply.
	var sawResult bool
	for _, m := range msgs {
		if u, ok := m.(*message.User); ok && len(u.Message.Content) == 1 && u.Message.Content[0].ToolUseID == "toolu_w" {
			sawResult = true
		}
	}
	last := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if !sawResult || last.TerminalReason != "completed" || last.Text() != "Written." || last.DeferredToolUse != nil {
		t.Errorf("resumed run: saw result %v, result %+v", sawResult, last)
	}
}

// When the re-fired PreToolUse denies, the pending call gets the denial.
func TestDeferClientDeniedOnResume(t *testing.T) {
	cwd := t.TempDir()
	path := filepath.Join(cwd, "out.txt")
	srv := agentlooptest.NewTB(t, writeReply("toolu_w", path), agentlooptest.Text("Fine."))
	h := &deferHook{decision: hooks.Defer}
	c, err := agentloop.NewClient(deferOpts(t, srv, h, cwd, t.TempDir()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	res, err := c.Query(context.Background(), "write the file").Result()
	if err != nil {
		t.Fatal(err)
	}
	checkDeferred(t, res, "toolu_w", path)
	h.set(hooks.Deny)
	res, err = c.Query(context.Background(), "go on").Result()
	if err != nil {
		t.Fatal(err)
	}
	tr := checkResumedRequest(t, srv.Requests()[1], "toolu_w", "go on", true)
	if !strings.Contains(tr.ResultText(), "decided by the test") {
		t.Errorf("denied result %q lacks the hook's reason", tr.ResultText())
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolUseID != "toolu_w" {
		t.Errorf("permission_denials = %+v, want the resumed call", res.PermissionDenials)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the denied Write ran: %v", err)
	}
}

// A deferred session resumed from its transcript settles the call the same
// way; resumed without the tool, it ends in tool_deferred_unavailable and
// the history stays valid for the next prompt.
func TestDeferResumeFromTranscript(t *testing.T) {
	t.Run("allowed", func(t *testing.T) {
		cwd, cfg := t.TempDir(), t.TempDir()
		path := filepath.Join(cwd, "out.txt")
		srv := agentlooptest.NewTB(t, writeReply("toolu_w", path), agentlooptest.Text("Written."))
		h := &deferHook{decision: hooks.Defer}
		res, err := agentloop.Query(context.Background(), "write the file", deferOpts(t, srv, h, cwd, cfg)).Result()
		if err != nil {
			t.Fatal(err)
		}
		checkDeferred(t, res, "toolu_w", path)
		h.set(hooks.Allow)
		o := deferOpts(t, srv, h, cwd, cfg)
		o.Resume = res.SessionID
		res2, err := agentloop.Query(context.Background(), "go on", o).Result()
		if err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(path); err != nil || string(b) != "hello\n" {
			t.Errorf("after the resume the file holds %q (%v), want hello", b, err)
		}
		checkResumedRequest(t, srv.Requests()[1], "toolu_w", "go on", false)
		if h := srv.Requests()[1].Params.Messages; len(h) != 3 || h[1].Content[0].Text != "Writing it." {
			t.Errorf("resumed history = %+v, want prompt, reply with text and call, results and prompt", h)
		}
		if res2.TerminalReason != "completed" || res2.SessionID != res.SessionID {
			t.Errorf("resumed result = %+v", res2)
		}
	})
	t.Run("tool gone", func(t *testing.T) {
		cwd, cfg := t.TempDir(), t.TempDir()
		path := filepath.Join(cwd, "out.txt")
		srv := agentlooptest.NewTB(t, writeReply("toolu_w", path), agentlooptest.Text("Understood."))
		h := &deferHook{decision: hooks.Defer}
		res, err := agentloop.Query(context.Background(), "write the file", deferOpts(t, srv, h, cwd, cfg)).Result()
		if err != nil {
			t.Fatal(err)
		}
		checkDeferred(t, res, "toolu_w", path)
		h.set(hooks.Allow)
		o := deferOpts(t, srv, h, cwd, cfg)
		o.Resume, o.Tools = res.SessionID, []string{"Bash"}
		res2, err := agentloop.Query(context.Background(), "go on", o).Result()
		var re *message.ResultError
		if !errors.As(err, &re) || res2 == nil {
			t.Fatalf("resume without the tool: %v, want a result error", err)
		}
		if !res2.IsError || res2.TerminalReason != "tool_deferred_unavailable" || srv.Len() != 1 {
			t.Errorf("resume without the tool: is_error %v, terminal_reason %q, %d requests; want true, tool_deferred_unavailable, 1",
				res2.IsError, res2.TerminalReason, srv.Len())
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the unavailable Write ran: %v", err)
		}
		// The next prompt goes out with the call answered by an error.
		o = deferOpts(t, srv, h, cwd, cfg)
		o.Resume, o.Tools = res.SessionID, []string{"Bash"}
		if _, err := agentloop.Query(context.Background(), "and now?", o).Result(); err != nil {
			t.Fatal(err)
		}
		checkResumedRequest(t, srv.Requests()[1], "toolu_w", "and now?", true)
	})
}

// A defer on one of two calls of a reply is a denial, and a diagnostic
// says defer needs the only call.
func TestDeferWithTwoCallsDenies(t *testing.T) {
	cwd := t.TempDir()
	path := filepath.Join(cwd, "out.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.Blocks(
			agentlooptest.ToolUseBlock("toolu_a", "Write", map[string]any{"file_path": path, "content": "hello\n"}),
			agentlooptest.ToolUseBlock("toolu_b", "Bash", map[string]any{"command": "touch other"})),
		agentlooptest.Text("Both refused."))
	h := &deferHook{decision: hooks.Defer}
	msgs, err := agentloop.Query(context.Background(), "do both", deferOpts(t, srv, h, cwd, t.TempDir())).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.TerminalReason != "completed" || res.DeferredToolUse != nil || len(res.PermissionDenials) != 2 {
		t.Errorf("result = terminal %q, deferred %+v, %d denials; want completed, none, 2",
			res.TerminalReason, res.DeferredToolUse, len(res.PermissionDenials))
	}
	for _, id := range []string{"toolu_a", "toolu_b"} {
		tr, ok := srv.Requests()[1].ToolResult(id)
		if !ok || tr.IsError == nil || !*tr.IsError || !strings.Contains(tr.ResultText(), "decided by the test") {
			t.Errorf("result of %s = %+v, want the hook's denial", id, tr)
		}
	}
	var diags int
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagHook && strings.Contains(d.Text, "defer") {
			diags++
		}
	}
	if diags != 2 {
		t.Errorf("%d defer diagnostics in the stream, want 2 (one a call)", diags)
	}
	for _, p := range []string{path, filepath.Join(cwd, "other")} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a denied call ran: %s: %v", p, err)
		}
	}
}
