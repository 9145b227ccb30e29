package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func copyTestdata(t *testing.T, name, dst string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestResumeAppendsToSameFile resumes a reference-format session: the
// file, the session id and the chain continue, and the cost state read
// back is the last one.
func TestResumeAppendsToSameFile(t *testing.T) {
	config := t.TempDir()
	cwd := t.TempDir()
	const id = "22222222-2222-4222-8222-222222222222"
	p := Path(config, cwd, id)
	copyTestdata(t, "resumed.jsonl", p)
	before, _ := os.ReadFile(p)

	found, err := Find(config, id)
	if err != nil || found != p {
		t.Fatalf("Find = %q, %v; want %q", found, err, p)
	}
	tr, err := Load(found)
	if err != nil {
		t.Fatal(err)
	}
	if tr.SessionID() != id || tr.Cost == nil || tr.Cost.TotalCostUSD != 0.0025 {
		t.Fatalf("loaded session %s with cost %+v", tr.SessionID(), tr.Cost)
	}
	w, err := Open(found, Envelope{SessionID: tr.SessionID(), Cwd: cwd, Version: "agentloop test"})
	if err != nil {
		t.Fatal(err)
	}
	if w.Leaf() != tr.Leaf {
		t.Errorf("writer leaf = %s, want %s", w.Leaf(), tr.Leaf)
	}
	prompt := PromptEntry("", "And the colour?", "default")
	reply := AssistantEntry(assistantMsg("msg_13", "", model.TextBlock("Green."), "end_turn"))
	if err := w.Append(prompt, reply); err != nil {
		t.Fatal(err)
	}
	total := *tr.Cost
	total.TotalCostUSD += 0.001
	if err := w.Append(LastPromptEntry("And the colour?", ""), CostStateEntry(total)); err != nil {
		t.Fatal(err)
	}
	w.Close()

	after, _ := os.ReadFile(p)
	if !bytes.HasPrefix(after, before) {
		t.Fatal("resuming rewrote the existing lines")
	}
	files, _ := os.ReadDir(filepath.Dir(p))
	if len(files) != 1 {
		t.Errorf("project dir holds %d files, want the one transcript", len(files))
	}
	tr2, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	added := tr2.Entries[len(tr.Entries):]
	if added[0].ParentUUID != tr.Leaf || added[1].ParentUUID != added[0].UUID {
		t.Errorf("chain of the resumed turn: %s → %s → %s", tr.Leaf, added[0].ParentUUID, added[1].ParentUUID)
	}
	for _, e := range added {
		if e.SessionID != id {
			t.Errorf("%s entry has session %s, want %s", e.Type, e.SessionID, id)
		}
	}
	if added[2].LeafUUID != added[1].UUID {
		t.Errorf("last-prompt leaf = %s, want %s", added[2].LeafUUID, added[1].UUID)
	}
	want := append(tr.History(),
		model.Message{Role: "user", Content: []model.Content{model.TextBlock("And the colour?")}},
		model.Message{Role: "assistant", Content: []model.Content{model.TextBlock("Green.")}})
	if diff := cmp.Diff(want, tr2.History(), cmpJSON); diff != "" {
		t.Errorf("history after resume (-want +got):\n%s", diff)
	}
	if tr2.Cost.TotalCostUSD != total.TotalCostUSD {
		t.Errorf("cost after resume = %v, want %v", tr2.Cost.TotalCostUSD, total.TotalCostUSD)
	}
}

func TestOpenRepairsCutLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	copyTestdata(t, "truncated.jsonl", p)
	w, err := Open(p, Envelope{SessionID: "55555555-5555-4555-8555-555555555555"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(PromptEntry("e0000003-0000-4000-8000-000000000003", "And then?", "default")); err != nil {
		t.Fatal(err)
	}
	w.Close()
	tr, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 0 || len(tr.Entries) != 3 {
		t.Fatalf("after repair: %d entries, warnings %q", len(tr.Entries), tr.Warnings)
	}
	if got := tr.Entries[2].ParentUUID; got != "e0000002-0000-4000-8000-000000000002" {
		t.Errorf("appended prompt's parent = %s", got)
	}
}

func TestOpenCompletesUnterminatedLine(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	line := `{"type":"custom-title","customTitle":"x","sessionId":"s"}`
	if err := os.WriteFile(p, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := Open(p, Envelope{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(TagEntry("", "t"))
	w.Close()
	tr, err := Load(p)
	if err != nil || len(tr.Entries) != 2 || tr.Entries[0].CustomTitle != "x" || tr.Entries[1].Tag != "t" || tr.Entries[1].SessionID != "s" {
		t.Fatalf("Load = %+v, %v", tr, err)
	}
}

func TestCreateExisting(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a", "b", "s.jsonl")
	w, err := Create(p, Envelope{})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := Create(p, Envelope{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("Create of an existing file = %v, want ErrExist", err)
	}
	if err := w.Append(PromptEntry("", "x", "")); err == nil {
		t.Error("Append after Close succeeded")
	}
}

func TestConcurrentAppend(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(p, Envelope{SessionID: testSID})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, batches = 8, 40
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range batches {
				a := PromptEntry("", fmt.Sprintf("%d-%d a %s", g, i, bytes.Repeat([]byte("x"), 3000)), "default")
				b := AssistantEntry(assistantMsg(fmt.Sprintf("m-%d-%d", g, i), "", model.TextBlock("ok"), "end_turn"))
				if err := w.Append(a, b); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	w.Close()
	tr, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != 2*goroutines*batches {
		t.Fatalf("%d entries, want %d", len(tr.Entries), 2*goroutines*batches)
	}
	// Each batch stays together, and the chain runs through every entry.
	for i := 0; i < len(tr.Entries); i += 2 {
		a, b := tr.Entries[i], tr.Entries[i+1]
		if b.ParentUUID != a.UUID {
			t.Fatalf("entries %d and %d of one batch are not adjacent in the chain", i, i+1)
		}
		if i > 0 && a.ParentUUID != tr.Entries[i-1].UUID {
			t.Fatalf("entry %d does not continue the chain", i)
		}
	}
	if len(tr.Chain) != len(tr.Entries) {
		t.Errorf("chain has %d entries, want %d", len(tr.Chain), len(tr.Entries))
	}
}

func TestRawEntriesVerbatim(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(p, Envelope{SessionID: testSID})
	if err != nil {
		t.Fatal(err)
	}
	line := `{"type":"file-history-snapshot","messageId":"m1","snapshot":{"trackedFileBackups":{},"timestamp":"2026-01-01T00:00:00.000Z"},"isSnapshotUpdate":false}`
	e, err := ParseEntry([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(e); err != nil {
		t.Fatal(err)
	}
	w.Close()
	got, _ := os.ReadFile(p)
	if string(got) != line+"\n" {
		t.Errorf("file = %s, want the line verbatim", got)
	}
}

func TestSubagentTranscript(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	main := Path(config, cwd, testSID)
	sub := SubagentPath(main, "a1b2c3")
	if want := filepath.Join(ProjectDir(config, cwd), testSID, "subagents", "agent-a1b2c3.jsonl"); sub != want {
		t.Errorf("SubagentPath = %s, want %s", sub, want)
	}
	w, err := Create(sub, Envelope{SessionID: testSID, AgentID: "a1b2c3", IsSidechain: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(PromptEntry("", "Review the code", ""),
		AssistantEntry(assistantMsg("msg_s", "", model.TextBlock("Looks fine."), "end_turn")))
	w.Close()
	meta := SubagentMeta{ToolUseID: "toolu_9", AgentType: "reviewer"}
	if err := WriteSubagentMeta(sub, meta); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSubagentMeta(sub); err != nil || got != meta {
		t.Errorf("ReadSubagentMeta = %+v, %v", got, err)
	}
	ids, err := ListSubagents(main)
	if err != nil || len(ids) != 1 || ids[0] != "a1b2c3" {
		t.Errorf("ListSubagents = %v, %v", ids, err)
	}
	tr, err := Load(sub)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tr.Entries {
		if !e.IsSidechain || e.AgentID != "a1b2c3" {
			t.Errorf("subagent entry %+v", e)
		}
	}
	want := []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("Review the code")}},
		{Role: "assistant", Content: []model.Content{model.TextBlock("Looks fine.")}},
	}
	if diff := cmp.Diff(want, tr.History(), cmpJSON); diff != "" {
		t.Errorf("subagent history (-want +got):\n%s", diff)
	}
	if len(tr.Messages()) != 2 {
		t.Errorf("subagent Messages = %d, want 2", len(tr.Messages()))
	}
}

func TestCompactBoundaryRestartsChain(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	w, err := Create(p, Envelope{SessionID: testSID})
	if err != nil {
		t.Fatal(err)
	}
	w.Append(PromptEntry("", "long task", "default"),
		AssistantEntry(assistantMsg("m1", "", model.TextBlock("lots of work"), "end_turn")))
	before := w.Leaf()
	summary := PromptEntry("", "Summary of the work so far.", "")
	summary.IsCompactSummary = true
	summary.PermissionMode = ""
	w.Append(CompactBoundaryEntry("auto", 150000, before), summary)
	w.Append(PromptEntry("", "continue", "default"),
		AssistantEntry(assistantMsg("m2", "", model.TextBlock("done"), "end_turn")))
	w.Close()
	tr, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	b := tr.Entries[2]
	if b.Subtype != SubtypeCompactBoundary || b.ParentUUID != "" || b.LogicalParentUUID != before {
		t.Errorf("boundary = %+v", b)
	}
	want := []model.Message{
		{Role: "user", Content: []model.Content{model.TextBlock("Summary of the work so far."), model.TextBlock("continue")}},
		{Role: "assistant", Content: []model.Content{model.TextBlock("done")}},
	}
	if diff := cmp.Diff(want, tr.History(), cmpJSON); diff != "" {
		t.Errorf("history after compaction (-want +got):\n%s", diff)
	}
}

// TestWrittenLineShape checks the raw JSON of written lines against the
// reference's shape.
func TestWrittenLineShape(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.jsonl")
	w, _ := Create(p, Envelope{SessionID: testSID, Cwd: "/w", Version: "agentloop 0.1.0"})
	w.Append(PromptEntry("", "a <b> & c", "default"),
		APIErrorEntry(model.RetryInfo{Attempt: 2, MaxRetries: 10, Status: 529, Delay: 1200 * 1e6,
			Err: &model.APIError{Status: 529, Type: "overloaded_error", Message: "Overloaded", RequestID: "req_9"}}))
	w.Close()
	data, _ := os.ReadFile(p)
	lines := bytes.Split(bytes.TrimSpace(data), []byte{'\n'})
	var user, sys map[string]any
	if err := json.Unmarshal(lines[0], &user); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(lines[1], &sys)
	for _, k := range []string{"parentUuid", "isSidechain", "type", "message", "uuid", "timestamp", "permissionMode",
		"userType", "entrypoint", "cwd", "sessionId", "version", "gitBranch"} {
		if _, ok := user[k]; !ok {
			t.Errorf("user line lacks %s: %s", k, lines[0])
		}
	}
	if user["parentUuid"] != nil || user["gitBranch"] != "" || user["entrypoint"] != "sdk-go" || user["userType"] != "external" {
		t.Errorf("user line = %s", lines[0])
	}
	if msg := user["message"].(map[string]any); msg["content"] != "a <b> & c" {
		t.Errorf("prompt content = %v", msg["content"])
	}
	if !bytes.Contains(lines[0], []byte(`"a <b> & c"`)) {
		t.Errorf("prompt escaped: %s", lines[0])
	}
	if sys["subtype"] != "api_error" || sys["level"] != "error" || sys["retryAttempt"] != 2.0 || sys["maxRetries"] != 10.0 ||
		sys["retryInMs"] != 1200.0 || sys["source"] != "request_retry" || sys["parentUuid"] != user["uuid"] {
		t.Errorf("system line = %s", lines[1])
	}
	if e := sys["error"].(map[string]any); e["status"] != 529.0 || e["requestId"] != "req_9" {
		t.Errorf("system error = %v", e)
	}
}
