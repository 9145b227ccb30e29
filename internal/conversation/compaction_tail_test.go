package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/pricing"
)

// hugeTool returns size bytes of text for every call, with no spill limit:
// one result can be larger than the whole context window.
func hugeTool(size int) agentloop.Tool {
	return agentloop.NewTool("huge", "Returns a very large output.", func(ctx context.Context, in bigIn, _ *agentloop.ToolCall) (agentloop.ToolResult, error) {
		text := fmt.Sprintf("huge output %d: %s", in.N, strings.Repeat("lorem ipsum ", size/12))
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock(text)}}, nil
	}, &agentloop.ToolOptions{ReadOnly: true, MaxResultChars: -1})
}

// orphanTools returns the tool_result ids of msgs without their tool_use,
// and the tool_use ids of assistant messages that are not the last one
// without a result.
func orphanTools(msgs []model.Message) []string {
	uses, results := map[string]bool{}, map[string]bool{}
	for _, m := range msgs {
		for _, c := range m.Content {
			switch c.Type {
			case model.TypeToolUse:
				uses[c.ID] = true
			case model.TypeToolResult:
				results[c.ToolUseID] = true
			}
		}
	}
	var out []string
	for id := range results {
		if !uses[id] {
			out = append(out, "result without use "+id)
		}
	}
	for id := range uses {
		if !results[id] {
			out = append(out, "use without result "+id)
		}
	}
	return out
}

// tailSession scripts a conversation that reads a.txt and b.txt with Read,
// then calls the huge tool, then answers; summary requests get a summary
// in <analysis>/<summary> form. Every reply reports the request's size.
func tailSession(srv *agentlooptest.Server, cwd string) {
	var mu sync.Mutex
	step := 0
	srv.SetRouter(func(r *agentlooptest.Request) (agentlooptest.Reply, bool) {
		mu.Lock()
		defer mu.Unlock()
		var rep agentlooptest.Reply
		switch {
		case isSummary(r):
			rep = agentlooptest.Text("<analysis>notes</analysis>\n<summary>SUMMARY-TAIL: read a.txt and b.txt, then ran huge.</summary>")
		case step == 0:
			rep = agentlooptest.ToolUse("toolu_a", "Read", map[string]any{"file_path": filepath.Join(cwd, "a.txt")})
		case step == 1:
			rep = agentlooptest.ToolUse("toolu_b", "Read", map[string]any{"file_path": filepath.Join(cwd, "b.txt")})
		case step == 2:
			rep = agentlooptest.ToolUse("toolu_huge", "huge", map[string]any{"n": 1})
		default:
			rep = agentlooptest.Text("Done.")
		}
		if !isSummary(r) {
			step++
		}
		rep.Usage = model.Usage{InputTokens: tokens(r), OutputTokens: 20}
		return rep, true
	})
}

// A tool result larger than the whole window on its own: the compaction
// summarises it with the rest (shortened to fit the summary request), and
// the conversation goes on from the summary alone, with the files read
// before re-attached, in a request under the threshold and with no tool
// pair cut in two.
func TestCompactionOfOversizedLastToolResult(t *testing.T) {
	const window = 8_000
	cwd, configDir := compactSetup(t)
	for name, text := range map[string]string{"a.txt": "alpha one\nalpha two\n", "b.txt": "beta one\nbeta two\n"} {
		if err := os.WriteFile(filepath.Join(cwd, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := agentlooptest.NewTB(t)
	tailSession(srv, cwd)
	opts := compactOptions(t, srv, cwd, configDir, window)
	opts.Tools = []string{"Read"}
	opts.AllowedTools = []string{"Read"}
	opts.CustomTools = []agentloop.Tool{hugeTool(60_000)} // ~15k tokens: more than the window
	msgs, err := agentloop.Query(context.Background(), "Read a.txt and b.txt, then run huge.", opts).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.Subtype != "success" || res.IsError {
		t.Fatalf("result %s %v: %v", res.Subtype, res.IsError, res.Errors)
	}
	p, _, _ := pricing.Lookup(opts.Model)
	threshold := engine.AutoCompactThreshold(window, p.MaxOutput)
	var summary, after *agentlooptest.Request
	for i, r := range srv.Requests() {
		if isSummary(r) {
			if summary != nil {
				t.Fatalf("request %d: a second compaction", i)
			}
			summary = r
			continue
		}
		if summary != nil && after == nil {
			after = r
		}
	}
	if summary == nil || after == nil {
		t.Fatalf("no compaction, or nothing after it, in %d requests", len(srv.Requests()))
	}
	if n := tokens(summary); n > window {
		t.Errorf("the summary request is %d tokens, over the %d window", n, window)
	}
	if body := string(summary.Body); !strings.Contains(body, "huge output 1: ") || !strings.Contains(body, "left out of the summary request") {
		t.Errorf("the summary request does not carry the shortened huge result: %.400s", body)
	}
	if n := tokens(after); n > threshold {
		t.Errorf("the first request after the boundary is %d tokens, over the %d threshold", n, threshold)
	}
	if o := orphanTools(after.Params.Messages); len(o) > 0 {
		t.Errorf("the first request after the boundary has a tool pair cut in two: %v", o)
	}
	ms := after.Params.Messages
	if len(ms) != 1 || ms[0].Role != "user" {
		t.Fatalf("the history after the boundary is %d messages; want the summary alone", len(ms))
	}
	text := allUserText(after)
	if !strings.Contains(ms[0].Content[0].Text, "SUMMARY-TAIL:") || strings.Contains(text, "<analysis>") ||
		strings.Contains(text, "huge output 1: ") {
		t.Errorf("the history after the boundary is not the summary: %.600s", text)
	}
	a, b := strings.Index(text, "1\talpha one"), strings.Index(text, "1\tbeta one")
	if a < 0 || b < 0 || b > a {
		t.Errorf("a.txt and b.txt are not re-attached, the most recent first (a at %d, b at %d): %.1500s", a, b, text)
	}
	if bs := boundaries(t, msgs); len(bs) != 1 || bs[0]["trigger"] != "auto" || bs[0]["preserved_segment"] != nil {
		t.Errorf("boundaries %v; want one auto boundary with nothing preserved", bs)
	}
}

// /compact on a resumed session, as the reference does it: the summary
// covers all but the last reply, pre_tokens counts from the usage of that
// reply (kept in the transcript), the result is empty with no turns, and
// the next request carries the summary with the file read before it, the
// last reply verbatim, then the command's record before the new prompt.
func TestCompactResumedSession(t *testing.T) {
	cwd, configDir := compactSetup(t)
	if err := os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("alpha one\nalpha two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	answer := agentlooptest.Text("A holds alpha lines.")
	answer.Usage = model.Usage{InputTokens: 7_000, OutputTokens: 20}
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_a", "Read", map[string]any{"file_path": filepath.Join(cwd, "a.txt")}), answer)
	opts := func() *agentloop.Options {
		o := compactOptions(t, srv, cwd, configDir, 0)
		o.Tools, o.AllowedTools = []string{"Read"}, []string{"Read"}
		return o
	}
	first, err := agentloop.Query(context.Background(), "Read a.txt.", opts()).Result()
	if err != nil {
		t.Fatal(err)
	}
	srv.Route(isSummary, agentlooptest.Text("<summary>SUMMARY-RESUMED</summary>"))
	o := opts()
	o.Resume = first.SessionID
	msgs, err := agentloop.Query(context.Background(), "/compact keep the file names", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	res := msgs[len(msgs)-1].(*agentloop.ResultMessage)
	if res.Subtype != "success" || res.Result == nil || *res.Result != "" || res.NumTurns != 0 {
		t.Errorf("result %s %v, num_turns %d", res.Subtype, res.Result, res.NumTurns)
	}
	bs := boundaries(t, msgs)
	if len(bs) != 1 {
		t.Fatalf("boundaries %v", bs)
	}
	if pre := bs[0]["pre_tokens"].(float64); pre < 7_000 || pre > 7_100 {
		t.Errorf("pre_tokens %v; want the last reply's context (7,000 and a little)", pre)
	}
	var echoed bool
	for _, m := range msgs {
		if u, ok := m.(*agentloop.UserMessage); ok && u.IsReplay && u.Message.Content[0].Text == "<local-command-stdout>Compacted </local-command-stdout>" {
			echoed = true
		}
	}
	if !echoed {
		t.Error("the command's output is not echoed to the stream as a replayed user line")
	}
	summaryReq := srv.LastRequest()
	if !isSummary(summaryReq) || strings.Contains(string(summaryReq.Body), "A holds alpha lines.") {
		t.Errorf("the summary request covers the kept reply too: %.600s", summaryReq.Body)
	}
	srv.SetRouter(nil)
	srv.Push(agentlooptest.Text("It says alpha."))
	o = opts()
	o.Resume = res.SessionID
	if _, err := agentloop.Query(context.Background(), "What did a.txt say?", o).Result(); err != nil {
		t.Fatal(err)
	}
	ms := srv.LastRequest().Params.Messages
	var roles string
	for _, m := range ms {
		roles += m.Role[:1]
	}
	if roles != "uau" {
		t.Fatalf("roles %q after the resumed /compact; want uau (summary, kept reply, new turn)", roles)
	}
	head, reply, last := textOf(ms[0]), textOf(ms[1]), textOf(ms[2])
	if !strings.Contains(head, "SUMMARY-RESUMED") || !strings.Contains(head, "1\talpha one") {
		t.Errorf("first message lacks the summary or the re-attached a.txt: %.800s", head)
	}
	if reply != "A holds alpha lines." {
		t.Errorf("kept reply %q", reply)
	}
	if i, j := strings.Index(last, "<command-name>/compact</command-name>"), strings.Index(last, "What did a.txt say?"); i < 0 || j < i ||
		!strings.Contains(last, "<command-args>keep the file names</command-args>") {
		t.Errorf("the new turn lacks the command's record before the prompt: %.600s", last)
	}
}

func textOf(m model.Message) string {
	var b strings.Builder
	for _, c := range m.Content {
		if c.Type == model.TypeText {
			b.WriteString(c.Text)
			b.WriteByte('\n')
		}
	}
	return strings.TrimSpace(b.String())
}
