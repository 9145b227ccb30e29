package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/hooks"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
)

// compactRules is the CLAUDE.md of the compaction tests: a rule the model
// must keep seeing, and summary instructions.
const compactRules = "Always answer in haiku (RULE-42).\n\n## Summary instructions\nKeep every file name (SUMMARY-RULE-7).\n"

// compactSetup makes a home with a git repository holding CLAUDE.md and
// returns the repository (the working directory) and a config directory
// for transcripts.
func compactSetup(t testing.TB) (cwd, configDir string) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	cwd = filepath.Join(home, "repo")
	if err := os.MkdirAll(filepath.Join(cwd, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, "CLAUDE.md"), []byte(compactRules), 0o644); err != nil {
		t.Fatal(err)
	}
	return cwd, filepath.Join(home, "config")
}

type bigIn struct {
	N int `json:"n" jsonschema:"which output"`
}

// compactBigTool returns size bytes of text for every call.
func compactBigTool(size int) agentloop.Tool {
	return agentloop.NewTool("big", "Returns a large output.", func(ctx context.Context, in bigIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		text := fmt.Sprintf("output %d: %s", in.N, strings.Repeat("lorem ipsum ", size/12))
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock(text)}}, nil
	}, &agentloop.ToolOptions{ReadOnly: true})
}

// isSummary tells a summary request from the conversation's requests.
func isSummary(r *agentlooptest.Request) bool {
	return strings.Contains(r.SystemText(), "summaries of conversations")
}

// instructionText is the last text block of a request: a summary
// request's instruction.
func instructionText(r *agentlooptest.Request) string {
	m := r.Params.Messages[len(r.Params.Messages)-1]
	return m.Content[len(m.Content)-1].Text
}

// tokens is the size of a request as the tests count it: a quarter of its
// body, the rule agentloop estimates with.
func tokens(r *agentlooptest.Request) int64 { return int64(len(r.Body)) / 4 }

// scriptedSession answers every request by itself: summary requests with a
// summary, and the conversation's first turns-1 requests with a call of
// the big tool, then text. Every reply reports the request's size as its
// input tokens.
func scriptedSession(srv *agentlooptest.Server, turns int) {
	var mu sync.Mutex
	main, summaries := 0, 0
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		var rep agentlooptest.Reply
		switch {
		case isSummary(r):
			summaries++
			rep = agentlooptest.Text(fmt.Sprintf("SUMMARY %d: worked on big outputs.", summaries))
		case main < turns-1:
			main++
			rep = agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", main), "big", map[string]any{"n": main})
		default:
			main++
			rep = agentlooptest.Text("All done.")
		}
		rep.Usage = model.Usage{InputTokens: tokens(r), OutputTokens: 50}
		return rep, true
	})
}

func compactOptions(t testing.TB, srv *agentlooptest.Server, cwd, configDir string, window int64) *agentloop.Options {
	return &agentloop.Options{
		Provider: provider(t.(*testing.T), srv, nil), Cwd: cwd, ConfigDir: configDir,
		SystemPrompt: "You are a test agent.", Tools: []string{}, CustomTools: []agentloop.Tool{compactBigTool(6000)},
		SettingSources: []settings.SettingSource{settings.Project}, AutoCompactWindow: window,
	}
}

// hookLog records PreCompact and PostCompact inputs.
type hookLog struct {
	mu   sync.Mutex
	pre  []hooks.PreCompactInput
	post []hooks.PostCompactInput
}

func (l *hookLog) hooks(block bool) map[hooks.Event][]hooks.Matcher {
	return map[hooks.Event][]hooks.Matcher{
		hooks.PreCompact: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			l.mu.Lock()
			l.pre = append(l.pre, in.(hooks.PreCompactInput))
			l.mu.Unlock()
			if block {
				return hooks.Output{Decision: "block", Reason: "not now"}, nil
			}
			return hooks.Output{}, nil
		}}}},
		hooks.PostCompact: {{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
			l.mu.Lock()
			l.post = append(l.post, in.(hooks.PostCompactInput))
			l.mu.Unlock()
			return hooks.Output{}, nil
		}}}},
	}
}

// boundaries returns the compact_metadata of the compact_boundary
// messages.
func boundaries(t *testing.T, msgs []agentloop.Message) []map[string]any {
	var out []map[string]any
	for _, m := range msgs {
		s, ok := m.(*agentloop.SystemMessage)
		if !ok || s.Subtype != "compact_boundary" {
			continue
		}
		var md map[string]any
		if err := json.Unmarshal(s.Data["compact_metadata"], &md); err != nil {
			t.Fatalf("compact_metadata: %v", err)
		}
		out = append(out, md)
	}
	return out
}

func TestAutoCompactionLongSession(t *testing.T) {
	const window, turns = 20_000, 300
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, turns)
	opts := compactOptions(t, srv, cwd, configDir, window)
	var log hookLog
	opts.Hooks = log.hooks(false)
	msgs, err := agentloop.Query(context.Background(), "Work through the outputs.", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.Subtype != "success" || res.IsError {
		t.Fatalf("result %s %v: %v", res.Subtype, res.IsError, res.Errors)
	}
	var summaries, mains int
	var cost float64
	var lastMain *agentlooptest.Request
	for i, r := range srv.Requests() {
		if n := tokens(r); n > window {
			t.Errorf("request %d is %d tokens, over the %d window", i, n, window)
		}
		p, _, _ := pricing.Lookup(r.Params.Model)
		cost += p.Cost(r.Reply.Usage)
		if isSummary(r) {
			summaries++
			if text := instructionText(r); !strings.Contains(text, "SUMMARY-RULE-7") {
				t.Errorf("summary request %d lacks the CLAUDE.md summary instructions", i)
			}
			if len(r.Params.Tools) != 0 || r.Params.Thinking != nil || r.Params.MaxTokens <= 0 || r.Params.MaxTokens > 20_000 {
				t.Errorf("summary request %d: tools %d, thinking %v, max_tokens %d", i, len(r.Params.Tools), r.Params.Thinking, r.Params.MaxTokens)
			}
			continue
		}
		mains++
		lastMain = r
	}
	if summaries < 3 {
		t.Fatalf("%d compactions in %d turns; want at least 3", summaries, turns)
	}
	if mains != turns {
		t.Errorf("%d conversation requests, want %d", mains, turns)
	}
	// After the compactions the rules are still there, and so is the
	// latest summary, at the head of the history.
	text := allUserText(lastMain)
	if !strings.Contains(text, "RULE-42") {
		t.Error("the CLAUDE.md rules are not in the last request")
	}
	first := lastMain.Params.Messages[0]
	if first.Role != "user" || !strings.Contains(first.Content[0].Text, fmt.Sprintf("SUMMARY %d:", summaries)) {
		t.Errorf("the last request does not start with the latest summary: %.200s", first.Content[0].Text)
	}
	if strings.Contains(text, "output 1: ") {
		t.Error("the first tool output survived the compactions")
	}
	// Stream, hooks and accounting.
	bs := boundaries(t, msgs)
	if len(bs) != summaries {
		t.Errorf("%d compact_boundary messages for %d summaries", len(bs), summaries)
	}
	for i, b := range bs {
		pre, post := b["pre_tokens"].(float64), b["post_tokens"].(float64)
		if b["trigger"] != "auto" || pre <= post || post <= 0 || b["duration_ms"] == nil {
			t.Errorf("boundary %d: %v", i, b)
		}
	}
	if len(log.pre) != summaries || len(log.post) != summaries {
		t.Errorf("PreCompact ran %d times, PostCompact %d, for %d compactions", len(log.pre), len(log.post), summaries)
	}
	for i := range log.post {
		if log.pre[i].Trigger != "auto" || log.pre[i].CustomInstructions != nil || log.post[i].Trigger != "auto" ||
			!strings.HasPrefix(log.post[i].CompactSummary, "SUMMARY ") {
			t.Errorf("hook inputs %d: %+v %+v", i, log.pre[i], log.post[i])
		}
	}
	// num_turns: the prompt, each tool result line, each compaction.
	if want := 1 + (turns - 1) + summaries; res.NumTurns != want {
		t.Errorf("num_turns = %d, want %d", res.NumTurns, want)
	}
	if math.Abs(res.TotalCostUSD-cost) > 1e-9 {
		t.Errorf("total_cost_usd = %v, want %v (summaries included)", res.TotalCostUSD, cost)
	}
}

func TestManualCompactAndClearViaClient(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 3)
	opts := compactOptions(t, srv, cwd, configDir, 0)
	var log hookLog
	opts.Hooks = log.hooks(false)
	var starts []string
	opts.Hooks[hooks.SessionStart] = []hooks.Matcher{{Hooks: []hooks.Callback{func(ctx context.Context, in hooks.Input, _ string) (hooks.Output, error) {
		starts = append(starts, in.(hooks.SessionStartInput).Source)
		return hooks.Output{}, nil
	}}}}
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if _, err := c.Query(ctx, "Look at two outputs.").Result(); err != nil {
		t.Fatal(err)
	}
	before := len(srv.Requests())
	msgs, err := c.Query(ctx, "/compact keep the output numbers").Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	reqs := srv.Requests()[before:]
	if len(reqs) != 1 || !isSummary(reqs[0]) {
		t.Fatalf("/compact sent %d requests", len(reqs))
	}
	text := instructionText(reqs[0])
	if !strings.Contains(text, "keep the output numbers") || !strings.Contains(text, "SUMMARY-RULE-7") {
		t.Errorf("summary request lacks the custom or CLAUDE.md instructions: %.300s", text)
	}
	if res.Subtype != "success" || res.NumTurns != 0 || res.Result == nil || *res.Result != "" {
		t.Errorf("result %s, num_turns %d, %v", res.Subtype, res.NumTurns, res.Result)
	}
	bs := boundaries(t, msgs)
	if len(bs) != 1 || bs[0]["trigger"] != "manual" {
		t.Errorf("boundaries %v", bs)
	}
	var summaryLine bool
	for _, m := range msgs {
		if u, ok := m.(*agentloop.UserMessage); ok && strings.Contains(u.Message.Content[0].Text, "SUMMARY 1:") {
			summaryLine = true
		}
	}
	if !summaryLine {
		t.Error("the summary is not in the stream as a user line")
	}
	if len(log.pre) != 1 || log.pre[0].Trigger != "manual" || log.pre[0].CustomInstructions == nil ||
		*log.pre[0].CustomInstructions != "keep the output numbers" || len(log.post) != 1 || log.post[0].Trigger != "manual" {
		t.Errorf("hooks: %+v %+v", log.pre, log.post)
	}
	// The conversation goes on from the summary.
	srv.SetRouter(nil)
	srv.Push(agentlooptest.Text("Still here."))
	if _, err := c.Query(ctx, "Go on.").Result(); err != nil {
		t.Fatal(err)
	}
	next := srv.LastRequest()
	if m := next.Params.Messages[0]; !strings.Contains(m.Content[0].Text, "SUMMARY 1:") || !strings.Contains(allUserText(next), "RULE-42") {
		t.Errorf("after /compact the history starts %.200s", m.Content[0].Text)
	}
	// /clear: a fresh history and totals, SessionStart with source clear
	// (after the one with source compact of the /compact above).
	res, err = c.Query(ctx, "/clear").Result()
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalCostUSD != 0 || res.NumTurns != 0 {
		t.Errorf("/clear result: cost %v, num_turns %d", res.TotalCostUSD, res.NumTurns)
	}
	if len(starts) != 3 || starts[1] != "compact" || starts[2] != "clear" {
		t.Errorf("SessionStart sources %v", starts)
	}
	srv.Push(agentlooptest.Text("Fresh."))
	res, err = c.Query(ctx, "Hello again.").Result()
	if err != nil {
		t.Fatal(err)
	}
	last := srv.LastRequest()
	if n := len(last.Params.Messages); n != 1 || strings.Contains(allUserText(last), "SUMMARY 1:") {
		t.Errorf("after /clear the request has %d messages: %.200s", n, allUserText(last))
	}
	p, _, _ := pricing.Lookup(last.Params.Model)
	if want := p.Cost(last.Reply.Usage); math.Abs(res.TotalCostUSD-want) > 1e-12 {
		t.Errorf("cost after /clear = %v, want only the new reply's %v", res.TotalCostUSD, want)
	}
}

func TestCompactionFailureEndsRun(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 100)
	srv.Route(isSummary, agentlooptest.Error(400, "invalid_request_error", "prompt is too long"))
	opts := compactOptions(t, srv, cwd, configDir, 20_000)
	msgs, err := agentloop.Query(context.Background(), "Work.", opts).Collect()
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if err == nil || res.Subtype != "error_during_execution" || len(res.Errors) != 1 ||
		!strings.Contains(res.Errors[0], "Compaction failed") || !strings.Contains(res.Errors[0], "prompt is too long") {
		t.Fatalf("err %v, result %s %v", err, res.Subtype, res.Errors)
	}
	var summaries int
	for _, r := range srv.Requests() {
		if isSummary(r) {
			summaries++
		}
	}
	if summaries != 1 {
		t.Errorf("%d summary requests; a failed one must end the run", summaries)
	}
}

func TestPreCompactBlockSkipsAutoCompaction(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 12)
	opts := compactOptions(t, srv, cwd, configDir, 20_000)
	var log hookLog
	opts.Hooks = log.hooks(true)
	res, err := agentloop.Query(context.Background(), "Work.", opts).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range srv.Requests() {
		if isSummary(r) {
			t.Fatal("a summary request was sent although PreCompact blocked")
		}
	}
	if len(log.pre) != 1 || log.pre[0].Trigger != "auto" || len(log.post) != 0 {
		t.Errorf("PreCompact %d times, PostCompact %d times", len(log.pre), len(log.post))
	}
	if res.Subtype != "success" {
		t.Errorf("result %s", res.Subtype)
	}
}

func TestAutoCompactDisabled(t *testing.T) {
	cwd, configDir := compactSetup(t)
	for _, how := range []string{"option", "settings"} {
		t.Run(how, func(t *testing.T) {
			srv := agentlooptest.NewTB(t)
			scriptedSession(srv, 12)
			opts := compactOptions(t, srv, cwd, configDir, 20_000)
			if how == "option" {
				opts.DisableAutoCompact = true
			} else {
				opts.Settings = `{"autoCompactEnabled": false}`
			}
			if _, err := agentloop.Query(context.Background(), "Work.", opts).Result(); err != nil {
				t.Fatal(err)
			}
			for _, r := range srv.Requests() {
				if isSummary(r) {
					t.Fatal("compacted although automatic compaction is off")
				}
			}
		})
	}
	t.Run("settings window", func(t *testing.T) {
		srv := agentlooptest.NewTB(t)
		scriptedSession(srv, 12)
		opts := compactOptions(t, srv, cwd, configDir, 0)
		opts.Settings = `{"autoCompactWindow": 20000}`
		if _, err := agentloop.Query(context.Background(), "Work.", opts).Result(); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, r := range srv.Requests() {
			if isSummary(r) {
				n++
			}
		}
		if n == 0 {
			t.Error("the settings' autoCompactWindow did not compact")
		}
	})
}

// BenchmarkCompactionQuery measures a /compact through a Client against a
// scripted server that answers at once: the whole path (hooks, the
// summary request over loopback HTTP, the stream, the transcript) of a
// conversation of a tool round of 6 KB and what the last /compact kept
// (at most a fifth of the 20k window).
func BenchmarkCompactionQuery(b *testing.B) {
	cwd, configDir := compactSetup(b)
	srv := agentlooptest.NewTB(b)
	var mu sync.Mutex
	n := 0
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		n++
		switch {
		case isSummary(r):
			return agentlooptest.Text("SUMMARY."), true
		case r.Params.Messages[len(r.Params.Messages)-1].Content[0].Type == model.TypeToolResult:
			return agentlooptest.Text("Done."), true
		}
		return agentlooptest.ToolUse(fmt.Sprintf("toolu_%d", n), "big", map[string]any{"n": n}), true
	})
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: srv.URL})
	if err != nil {
		b.Fatal(err)
	}
	c, err := agentloop.NewClient(&agentloop.Options{Provider: p, Cwd: cwd, ConfigDir: configDir,
		SystemPrompt: "You are a test agent.", Tools: []string{}, CustomTools: []agentloop.Tool{compactBigTool(6_000)},
		SettingSources: []settings.SettingSource{settings.Project}, AutoCompactWindow: 20_000, DisableAutoCompact: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		if _, err := c.Query(ctx, "Work.").Result(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := c.Query(ctx, "/compact").Result(); err != nil {
			b.Fatal(err)
		}
	}
}

// With partial messages, a compaction is framed by status messages:
// compacting before, compact_result success after the boundary and the
// summary line.
func TestCompactionStatusMessages(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 16)
	opts := compactOptions(t, srv, cwd, configDir, 20_000)
	opts.IncludePartialMessages = true
	msgs, err := agentloop.Query(context.Background(), "Work.", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range msgs {
		switch m := m.(type) {
		case *agentloop.SystemMessage:
			switch {
			case m.Subtype == "compact_boundary":
				got = append(got, "boundary")
			case m.Status != nil && m.Status.Status != nil && *m.Status.Status == "compacting":
				got = append(got, "compacting")
			case m.Status != nil && m.Status.Status == nil:
				got = append(got, "status:"+string(m.Data["compact_result"]))
			}
		case *agentloop.UserMessage:
			if strings.Contains(m.Message.Content[0].Text, "<summary>") {
				got = append(got, "summary")
			}
		}
	}
	want := []string{"compacting", "boundary", "summary", `status:"success"`}
	if len(got) < 4 || strings.Join(got[:4], " ") != strings.Join(want, " ") {
		t.Errorf("compaction messages %v, want %v first", got, want)
	}
}

func TestContextUsageReportsCompaction(t *testing.T) {
	cwd, configDir := compactSetup(t)
	for _, disable := range []bool{false, true} {
		srv := agentlooptest.NewTB(t)
		opts := compactOptions(t, srv, cwd, configDir, 50_000)
		opts.DisableAutoCompact = disable
		c, err := agentloop.NewClient(opts)
		if err != nil {
			t.Fatal(err)
		}
		u, err := c.ContextUsage(context.Background())
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		// 50k less a tenth reserved for the summary, less a fifteenth.
		if u.IsAutoCompactEnabled == disable || u.AutoCompactThreshold != 50_000-5_000-3_333 {
			t.Errorf("disabled %v: enabled %v, threshold %d", disable, u.IsAutoCompactEnabled, u.AutoCompactThreshold)
		}
	}
}

// A session resumed after compactions goes on from the last summary and
// what it kept, not from the whole conversation.
func TestResumeAfterCompaction(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 30)
	opts := compactOptions(t, srv, cwd, configDir, 20_000)
	res, err := agentloop.Query(context.Background(), "Work.", opts).Result()
	if err != nil {
		t.Fatal(err)
	}
	var last *agentlooptest.Request
	summaries := 0
	for _, r := range srv.Requests() {
		if isSummary(r) {
			summaries++
		} else {
			last = r
		}
	}
	if summaries < 2 {
		t.Fatalf("%d compactions", summaries)
	}
	srv.SetRouter(nil)
	srv.Push(agentlooptest.Text("Resumed."))
	opts = compactOptions(t, srv, cwd, configDir, 20_000)
	opts.Resume = res.SessionID
	if _, err := agentloop.Query(context.Background(), "Go on.", opts).Result(); err != nil {
		t.Fatal(err)
	}
	got := srv.LastRequest().Params.Messages
	want := last.Params.Messages // the conversation's last request before the resume
	if !strings.Contains(got[0].Content[0].Text, fmt.Sprintf("SUMMARY %d:", summaries)) {
		t.Fatalf("the resumed history starts %.200s", got[0].Content[0].Text)
	}
	if text := allUserText(srv.LastRequest()); strings.Contains(text, "output 1: ") || !strings.Contains(text, "RULE-42") {
		t.Error("the resumed history has the compacted outputs, or lacks the CLAUDE.md rules")
	}
	// The resumed history is the last request's plus its reply and the new prompt.
	if len(got) != len(want)+2 {
		t.Errorf("resumed history has %d messages; the last request had %d", len(got), len(want))
	}
}

func TestAutoCompactWindowOptionChecked(t *testing.T) {
	_, err := agentloop.NewClient(&agentloop.Options{AutoCompactWindow: -1, Provider: provider(t, agentlooptest.NewTB(t), nil)})
	if !errors.Is(err, agentloop.ErrInvalidOption) || !strings.Contains(err.Error(), "AutoCompactWindow") {
		t.Errorf("error %v", err)
	}
}

// After /clear, a resumed session goes on from the conversation that
// followed it.
func TestResumeAfterClear(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t, agentlooptest.Text("Old answer."), agentlooptest.Text("New answer."), agentlooptest.Text("Resumed."))
	opts := compactOptions(t, srv, cwd, configDir, 0)
	c, err := agentloop.NewClient(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, p := range []string{"OLD question", "/clear", "NEW question"} {
		if _, err := c.Query(ctx, p).Result(); err != nil {
			t.Fatal(err)
		}
	}
	id := c.SessionID()
	c.Close()
	opts = compactOptions(t, srv, cwd, configDir, 0)
	opts.Resume = id
	if _, err := agentloop.Query(ctx, "Go on.", opts).Result(); err != nil {
		t.Fatal(err)
	}
	text := allUserText(srv.LastRequest())
	if strings.Contains(text, "OLD question") || !strings.Contains(text, "NEW question") || !strings.Contains(text, "RULE-42") {
		t.Errorf("resumed after /clear: %.300s", text)
	}
}
