package conversation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/internal/engine"
	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// transcriptLine is one line of a transcript file, decoded loosely.
type transcriptLine map[string]any

func readTranscript(t *testing.T, path string) []transcriptLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reading the transcript: %v", err)
	}
	defer f.Close()
	var out []transcriptLine
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l transcriptLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("transcript line %q: %v", sc.Text(), err)
		}
		out = append(out, l)
	}
	return out
}

func (l transcriptLine) str(k string) string { s, _ := l[k].(string); return s }

// shape sums up a conversation line: its type, a meta user line as such,
// and each content block by kind (a prompt or marker by its text, a tool
// call by its tool, a tool result by whether it is an error).
func (l transcriptLine) shape() string {
	typ := l.str("type")
	if l["isMeta"] == true {
		return typ + " meta"
	}
	msg, _ := l["message"].(map[string]any)
	switch c := msg["content"].(type) {
	case string:
		return typ + " " + c
	case []any:
		var parts []string
		for _, b := range c {
			b, _ := b.(map[string]any)
			switch b["type"] {
			case "text":
				parts = append(parts, b["text"].(string))
			case "tool_use":
				parts = append(parts, "tool_use "+b["name"].(string))
			case "tool_result":
				parts = append(parts, "tool_result error="+jsonOf(b["is_error"]))
			default:
				parts = append(parts, b["type"].(string))
			}
		}
		return typ + " " + strings.Join(parts, " + ")
	}
	return typ
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// subagentRun is what a test needs of a run with one subagent: the
// session, the agent, and the uuid of the user line that showed the
// subagent's prompt in the stream.
type subagentRun struct {
	sessionID, agentID, promptUUID string
	msgs                           []agentloop.Message
}

func runWithSubagent(t *testing.T, ctx context.Context, prompt string, opts *agentloop.Options, onMsg func(agentloop.Message)) subagentRun {
	t.Helper()
	var r subagentRun
	for m := range agentloop.Query(ctx, prompt, opts) {
		if m == nil {
			continue // the run's error (an interrupt) after its result
		}
		r.msgs = append(r.msgs, m)
		switch m := m.(type) {
		case *agentloop.SystemMessage:
			if m.Subtype == "task_started" {
				r.agentID = sysField(m, "task_id")
			}
		case *agentloop.UserMessage:
			if m.ParentToolUseID != nil && len(m.Message.Content) == 1 && m.Message.Content[0].Type == model.TypeText {
				r.promptUUID = m.UUID
			}
		case *agentloop.ResultMessage:
			r.sessionID = m.SessionID
		}
		if onMsg != nil {
			onMsg(m)
		}
	}
	if r.agentID == "" || r.sessionID == "" || r.promptUUID == "" {
		t.Fatalf("run: agent %q, session %q, prompt line %q", r.agentID, r.sessionID, r.promptUUID)
	}
	return r
}

// checkSidechain checks that every line of a subagent's transcript is a
// sidechain line of agent in session sid, and that the prompt's line has
// the uuid of the stream's prompt line, and returns the lines' shapes.
func checkSidechain(t *testing.T, lines []transcriptLine, r subagentRun, prompt string) []string {
	t.Helper()
	var shapes []string
	promptSeen := false
	for i, l := range lines {
		if l["isSidechain"] != true || l.str("agentId") != r.agentID || l.str("sessionId") != r.sessionID {
			t.Errorf("line %d: isSidechain %v, agentId %q, sessionId %q; want true, %q, %q",
				i, l["isSidechain"], l.str("agentId"), l.str("sessionId"), r.agentID, r.sessionID)
		}
		if l.shape() == "user "+prompt {
			promptSeen = true
			if l.str("uuid") != r.promptUUID {
				t.Errorf("the prompt's line has uuid %s, the stream's prompt line %s", l.str("uuid"), r.promptUUID)
			}
		}
		shapes = append(shapes, l.shape())
	}
	if !promptSeen {
		t.Errorf("no line holds the prompt %q: %q", prompt, shapes)
	}
	return shapes
}

// checkMain checks that the session's own transcript holds no line of the
// subagent.
func checkMain(t *testing.T, path string) {
	t.Helper()
	for i, l := range readTranscript(t, path) {
		if l["isSidechain"] == true || l.str("agentId") != "" {
			t.Errorf("main transcript line %d is the subagent's: %v", i, l)
		}
	}
}

// subagentTranscriptOpts is a session that keeps transcripts in configDir
// (and, given one, a store), with a "reviewer" subagent allowed the gate
// tool.
func subagentTranscriptOpts(t *testing.T, srv *agentlooptest.Server, extra ...agentloop.Tool) *agentloop.Options {
	return &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		SettingSources: []settings.SettingSource{}, Tools: []string{"Agent"}, CustomTools: extra,
		PermissionMode: agentloop.PermissionBypass,
		Agents: map[string]agentloop.AgentDefinition{"reviewer": {Description: "Reviews code", Prompt: "You review code.",
			Tools: []string{"gate"}, Model: "sonnet"}}}
}

func isReviewer(r *agentlooptest.Request) bool {
	return strings.Contains(r.SystemText(), "You review code.")
}

// TestSubagentTranscript: a foreground subagent's run is written to
// <session>/subagents/agent-<id>.jsonl (every line a sidechain line with
// the agent's and the session's ids, the prompt's line with the stream's
// uuid for it) with its .meta.json beside it (finished), and copied to the
// session store under subagents/agent-<id>; the session's own transcript
// holds none of it; the session is listed once, its messages leave the
// subagent out, and it resumes.
func TestSubagentTranscript(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review", "prompt": "Review the code.",
			"subagent_type": "reviewer", "run_in_background": false}),
		agentlooptest.Text("The reviewer found nothing."),
		agentlooptest.Text("Resumed."))
	srv.Route(isReviewer, agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}), agentlooptest.Text("Looks fine."))
	g := newGate()
	g.open()
	store := sessions.NewMemoryStore()
	opts := subagentTranscriptOpts(t, srv, g.tool())
	opts.SessionStore = store
	ctx := context.Background()
	r := runWithSubagent(t, ctx, "review please", opts, nil)

	mainPath := sessions.Path(opts.ConfigDir, opts.Cwd, r.sessionID)
	ids, err := sessions.ListSubagents(mainPath)
	if err != nil || !cmp.Equal(ids, []string{r.agentID}) {
		t.Fatalf("subagent transcripts = %v, %v; want [%s]", ids, err, r.agentID)
	}
	subPath := sessions.SubagentPath(mainPath, r.agentID)
	lines := readTranscript(t, subPath)
	shapes := checkSidechain(t, lines, r, "Review the code.")
	want := []string{"user Review the code.", "assistant tool_use gate", "user tool_result error=null",
		"assistant Looks fine."}
	if diff := cmp.Diff(want, shapes); diff != "" {
		t.Errorf("subagent transcript (-want +got):\n%s", diff)
	}
	meta, err := sessions.ReadSubagentMeta(subPath)
	wantMeta := sessions.SubagentMeta{AgentType: "reviewer", Description: "Review", ToolUseID: "toolu_a", SpawnDepth: 1,
		RequestShape: "foreground", Model: "claude-sonnet-5-5", Finished: true}
	if diff := cmp.Diff(wantMeta, meta); err != nil || diff != "" {
		t.Errorf("meta (-want +got), error %v:\n%s", err, diff)
	}
	checkMain(t, mainPath)

	// The store has the same lines under the subagent's sub-key.
	pk := sessions.ProjectKey(opts.Cwd)
	subs, _ := store.ListSubkeys(ctx, pk, r.sessionID)
	if !contains(subs, "subagents/agent-"+r.agentID) {
		t.Errorf("store sub-keys = %v, want subagents/agent-%s", subs, r.agentID)
	}
	stored, err := store.Load(ctx, sessions.Key{ProjectKey: pk, SessionID: r.sessionID, Subpath: "subagents/agent-" + r.agentID})
	if err != nil || len(stored) != len(lines) {
		t.Fatalf("store copy: %d entries, %v; want %d", len(stored), err, len(lines))
	}
	for i, e := range stored {
		if e.UUID != lines[i].str("uuid") || !e.IsSidechain || e.AgentID != r.agentID {
			t.Errorf("store entry %d = uuid %s sidechain %v agent %s; local uuid %s", i, e.UUID, e.IsSidechain, e.AgentID, lines[i].str("uuid"))
		}
	}
	if listed, _ := store.List(ctx, pk); len(listed) != 1 || listed[0].SessionID != r.sessionID {
		t.Errorf("store sessions = %+v, want only %s", listed, r.sessionID)
	}

	// Listing and reading sessions leave the subagent out.
	infos, err := agentloop.ListSessions(ctx, opts.Cwd, &agentloop.ListSessionsOptions{ConfigDir: opts.ConfigDir})
	if err != nil || len(infos) != 1 || infos[0].SessionID != r.sessionID {
		t.Errorf("ListSessions = %+v, %v; want only %s", infos, err, r.sessionID)
	}
	hist, err := agentloop.SessionMessages(ctx, r.sessionID, &agentloop.SessionMessagesOptions{ConfigDir: opts.ConfigDir})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range hist {
		if u, ok := m.(*agentloop.UserMessage); ok && len(u.Message.Content) > 0 && u.Message.Content[0].Text == "Review the code." {
			t.Errorf("SessionMessages holds the subagent's prompt")
		}
	}
	if _, err := agentloop.SessionMessages(ctx, r.agentID, &agentloop.SessionMessagesOptions{ConfigDir: opts.ConfigDir}); err == nil {
		t.Errorf("SessionMessages of the agent id found a session")
	}

	// The session resumes; its next request is the main conversation.
	resume := *opts
	resume.Resume = r.sessionID
	if _, err := agentloop.Query(ctx, "and now?", &resume).Result(); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if isReviewer(last) || last.LastUserText() != "and now?" {
		t.Fatalf("resumed request: last user text %q", last.LastUserText())
	}
	// The prompt, the Agent call, its result, the answer, the new prompt.
	if _, ok := anyToolResult(last, "toolu_a"); !ok || len(last.Params.Messages) != 5 {
		t.Errorf("resumed request: %d messages, the Agent call's result found: %v; want 5 and true", len(last.Params.Messages), ok)
	}
}

// anyToolResult finds the result of call id in any message of r.
func anyToolResult(r *agentlooptest.Request, id string) (model.Content, bool) {
	for _, m := range r.Params.Messages {
		for _, c := range m.Content {
			if c.Type == model.TypeToolResult && c.ToolUseID == id {
				return c, true
			}
		}
	}
	return model.Content{}, false
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// TestSubagentTranscriptInterrupted: interrupted while its tool runs, a
// foreground subagent's transcript ends as the reference's does (its
// call, the call's stopped result, the tool-use marker), its sidecar is
// not marked finished, and the parent session resumes.
func TestSubagentTranscriptInterrupted(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review", "prompt": "Review the code.",
			"subagent_type": "reviewer", "run_in_background": false}),
		agentlooptest.Text("Resumed after the interrupt."))
	srv.Route(isReviewer, withText(agentlooptest.ToolUse("toolu_g", "gate", map[string]any{"text": "x"}), "I will look."))
	g := newGate()
	opts := subagentTranscriptOpts(t, srv, g.tool())
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { <-g.entered; cancel() }()
	r := runWithSubagent(t, ctx, "review please", opts, nil)
	if res, ok := r.msgs[len(r.msgs)-1].(*agentloop.ResultMessage); !ok || res.Subtype != "error_during_execution" {
		t.Fatalf("last message = %s, want the interrupted result", label(r.msgs[len(r.msgs)-1]))
	}

	mainPath := sessions.Path(opts.ConfigDir, opts.Cwd, r.sessionID)
	subPath := sessions.SubagentPath(mainPath, r.agentID)
	shapes := checkSidechain(t, readTranscript(t, subPath), r, "Review the code.")
	want := []string{"user Review the code.", "assistant I will look.", "assistant tool_use gate",
		"user tool_result error=true", "user " + engine.Interrupted}
	if diff := cmp.Diff(want, shapes); diff != "" {
		t.Errorf("interrupted subagent transcript (-want +got):\n%s", diff)
	}
	if meta, err := sessions.ReadSubagentMeta(subPath); err != nil || meta.Finished || meta.ToolUseID != "toolu_a" {
		t.Errorf("meta = %+v, %v; want toolu_a, not finished", meta, err)
	}
	checkMain(t, mainPath)

	resume := *opts
	resume.Resume = r.sessionID
	res, err := agentloop.Query(context.Background(), "go on", &resume).Result()
	if err != nil || res.Subtype != "success" {
		t.Fatalf("resume: %v, %+v", err, res)
	}
	last := srv.Requests()[len(srv.Requests())-1]
	if tr, ok := anyToolResult(last, "toolu_a"); !ok || tr.IsError == nil || !*tr.IsError {
		t.Errorf("resumed request: the Agent call's stopped result = %+v, %v", tr, ok)
	}
	if !strings.Contains(last.LastUserText(), "go on") || strings.Count(jsonOf(last.Params.Messages), "review please") != 1 {
		t.Errorf("resumed request: last user text %q", last.LastUserText())
	}
}

// TestSubagentTranscriptBackground: a background subagent's run is
// written the same way, its sidecar saying so.
func TestSubagentTranscriptBackground(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_a", "Agent", map[string]any{"description": "Review", "prompt": "Review the code.",
			"subagent_type": "reviewer", "run_in_background": true}),
		agentlooptest.Text("Started it."),
		agentlooptest.Text("It is done."))
	srv.Route(isReviewer, agentlooptest.Text("REVIEW DONE"))
	opts := subagentTranscriptOpts(t, srv)
	r := runWithSubagent(t, context.Background(), "review in the background", opts, nil)
	subPath := sessions.SubagentPath(sessions.Path(opts.ConfigDir, opts.Cwd, r.sessionID), r.agentID)
	shapes := checkSidechain(t, readTranscript(t, subPath), r, "Review the code.")
	if diff := cmp.Diff([]string{"user Review the code.", "assistant REVIEW DONE"}, shapes); diff != "" {
		t.Errorf("background subagent transcript (-want +got):\n%s", diff)
	}
	if meta, err := sessions.ReadSubagentMeta(subPath); err != nil || !meta.Finished || meta.RequestShape != "background" {
		t.Errorf("meta = %+v, %v; want a finished background run", meta, err)
	}
}

// withText puts a text block before r's content.
func withText(r agentlooptest.Reply, text string) agentlooptest.Reply {
	r.Content = append([]model.Content{model.TextBlock(text)}, r.Content...)
	return r
}
