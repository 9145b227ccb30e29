package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// referenceDir holds transcripts the reference CLI wrote, when this
// machine has them.
func referenceTranscripts(t *testing.T) []string {
	dir := os.Getenv("AGENTLOOP_CONFORMANCE_DIR")
	if dir == "" {
		// The conformance kit sits beside the repository (../shared).
		dir = filepath.Join("..", "..", "shared", "conformance", "scenarios")
	}
	var files []string
	for _, pat := range []string{"*/out/transcripts/*.jsonl", "*/out/*/transcripts/*.jsonl"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	if len(files) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatalf("no reference transcripts under %s: CI must run with the conformance kit beside the repository", dir)
		}
		t.Skipf("no reference transcripts under %s (set AGENTLOOP_CONFORMANCE_DIR)", dir)
	}
	return files
}

// checkHistory reports what the API would reject in a history: roles that
// do not alternate, a first message that is not the user's, a tool_use
// without exactly one tool_result in the next message, or a tool_result
// without its tool_use.
func checkHistory(t *testing.T, name string, h []model.Message) {
	t.Helper()
	for i, m := range h {
		if i == 0 && m.Role != "user" {
			t.Errorf("%s: history starts with %s", name, m.Role)
		}
		if i > 0 && h[i-1].Role == m.Role {
			t.Errorf("%s: messages %d and %d are both %s", name, i-1, i, m.Role)
		}
		if len(m.Content) == 0 {
			t.Errorf("%s: message %d is empty", name, i)
		}
		if m.Role != "assistant" {
			continue
		}
		uses := map[string]bool{}
		for _, c := range m.Content {
			if c.Type == model.TypeToolUse {
				uses[c.ID] = true
			}
		}
		results := map[string]int{}
		if i+1 < len(h) {
			for _, c := range h[i+1].Content {
				if c.Type == model.TypeToolResult {
					results[c.ToolUseID]++
					if !uses[c.ToolUseID] {
						t.Errorf("%s: message %d: tool_result %s without its tool_use", name, i+1, c.ToolUseID)
					}
				}
			}
		}
		for id := range uses {
			if results[id] != 1 {
				t.Errorf("%s: message %d: tool_use %s has %d tool_results", name, i, id, results[id])
			}
		}
	}
}

func TestReferenceTranscripts(t *testing.T) {
	for _, f := range referenceTranscripts(t) {
		name := filepath.Base(filepath.Dir(filepath.Dir(f))) + "/" + filepath.Base(f)
		if strings.Contains(f, "/run1/") {
			name = "run1/" + name
		}
		tr, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(tr.Warnings) > 0 {
			t.Errorf("%s: warnings %q", name, tr.Warnings)
		}
		h := tr.History()
		if len(h) == 0 {
			t.Errorf("%s: empty history", name)
		}
		checkHistory(t, name, h)
		if tr.Leaf == "" {
			t.Errorf("%s: no leaf", name)
		}
		if !strings.Contains(f, "subagents") && tr.Cost == nil {
			t.Errorf("%s: no cost state", name)
		}
		// Every line reads back the same after writing; lines of types
		// not modelled are written back byte for byte.
		data, _ := os.ReadFile(f)
		for i, line := range bytes.Split(bytes.TrimSpace(data), []byte{'\n'}) {
			e, err := ParseEntry(line)
			if err != nil {
				t.Errorf("%s:%d: %v", name, i+1, err)
				continue
			}
			b, err := e.MarshalJSON()
			if err != nil {
				t.Errorf("%s:%d: marshal: %v", name, i+1, err)
				continue
			}
			if !modelled(e.Type) && !bytes.Equal(b, compact(line)) {
				t.Errorf("%s:%d: %s line not kept verbatim", name, i+1, e.Type)
			}
			e2, err := ParseEntry(b)
			if err != nil {
				t.Errorf("%s:%d: reparse: %v", name, i+1, err)
				continue
			}
			if diff := cmp.Diff(e, e2, cmpJSON); diff != "" {
				t.Errorf("%s:%d: round trip (-read +reread):\n%s", name, i+1, diff)
			}
		}
	}
}

// TestReferenceResume checks the reference's resumed session: the second
// run appended to the first run's file, and the history and cost state of
// the result are those of both runs.
func TestReferenceResume(t *testing.T) {
	files := referenceTranscripts(t)
	var first, resumed string
	for _, f := range files {
		if strings.Contains(f, "/l_resume/out/transcripts/") {
			first = f
		}
		if strings.Contains(f, "/l_resume/out/run1/transcripts/") {
			resumed = f
		}
	}
	if first == "" || resumed == "" {
		t.Skip("no l_resume transcripts")
	}
	a, err := Load(first)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(resumed)
	if err != nil {
		t.Fatal(err)
	}
	if a.SessionID() != b.SessionID() {
		t.Errorf("session id changed on resume: %s → %s", a.SessionID(), b.SessionID())
	}
	if len(b.Entries) <= len(a.Entries) {
		t.Fatalf("resumed transcript has %d entries, first run %d", len(b.Entries), len(a.Entries))
	}
	// The resumed prompt continues the first run's chain.
	for _, e := range b.Entries[len(a.Entries):] {
		if e.Type == TypeUser {
			if e.ParentUUID != a.Leaf {
				t.Errorf("resumed prompt's parent = %s, want the first run's leaf %s", e.ParentUUID, a.Leaf)
			}
			break
		}
	}
	h := b.History()
	checkHistory(t, "l_resume", h)
	if len(h) != 4 {
		t.Errorf("resumed history has %d messages, want 4", len(h))
	}
	if b.Cost == nil || a.Cost == nil || b.Cost.TotalCostUSD <= a.Cost.TotalCostUSD {
		t.Errorf("cost state after resume = %+v, first run %+v: want a larger running total", b.Cost, a.Cost)
	}
}
