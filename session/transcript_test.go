package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func load(t *testing.T, name string) *Transcript {
	t.Helper()
	tr, err := Load(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func text(s string) model.Content { return model.TextBlock(s) }

func TestLoadTestdata(t *testing.T) {
	f := false
	tests := []struct {
		file     string
		history  []model.Message
		leaf     string
		cost     float64
		warnings int
	}{{
		file: "tools.jsonl",
		history: []model.Message{
			{Role: "user", Content: []model.Content{text("List the files and read notes.txt")}},
			{Role: "assistant", Content: []model.Content{
				{Type: model.TypeThinking, Thinking: "Two tools at once.", Signature: "c2lnLTE="},
				text("I'll look."),
				{Type: model.TypeToolUse, ID: "toolu_01", Name: "Bash", Input: json.RawMessage(`{"command":"ls"}`)},
				{Type: model.TypeToolUse, ID: "toolu_02", Name: "Read", Input: json.RawMessage(`{"file_path":"/home/user/proj/notes.txt"}`)},
			}},
			{Role: "user", Content: []model.Content{
				{Type: model.TypeToolResult, ToolUseID: "toolu_01", Text: "notes.txt\n"},
				{Type: model.TypeToolResult, ToolUseID: "toolu_02", Blocks: []model.Content{text("1\thello")}, IsError: &f},
			}},
			{Role: "assistant", Content: []model.Content{text("notes.txt says hello.")}},
		},
		leaf: "a000000a-0000-4000-8000-00000000000a",
		cost: 0.0021,
	}, {
		file: "resumed.jsonl",
		history: []model.Message{
			{Role: "user", Content: []model.Content{text("Remember the word KIWI")}},
			{Role: "assistant", Content: []model.Content{text("I will remember KIWI.")}},
			{Role: "user", Content: []model.Content{text("Which word?")}},
			{Role: "assistant", Content: []model.Content{text("KIWI.")}},
		},
		leaf: "b0000004-0000-4000-8000-000000000004",
		cost: 0.0025,
	}, {
		file: "branched.jsonl",
		history: []model.Message{
			{Role: "user", Content: []model.Content{text("Pick a colour")}},
			{Role: "assistant", Content: []model.Content{text("Blue.")}},
			{Role: "user", Content: []model.Content{text("Another, but warm")}},
			{Role: "assistant", Content: []model.Content{text("Orange.")}},
		},
		leaf: "c0000006-0000-4000-8000-000000000006",
	}, {
		file: "compacted.jsonl",
		history: []model.Message{
			{Role: "user", Content: []model.Content{text("This session is being continued. Summary: a story was started."), text("Continue it")}},
			{Role: "assistant", Content: []model.Content{text("...and they lived happily.")}},
		},
		leaf: "d0000006-0000-4000-8000-000000000006",
	}, {
		file: "truncated.jsonl",
		history: []model.Message{
			{Role: "user", Content: []model.Content{text("Hello")}},
			{Role: "assistant", Content: []model.Content{text("Hi.")}},
		},
		leaf:     "e0000002-0000-4000-8000-000000000002",
		warnings: 1,
	}}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			tr := load(t, tc.file)
			if diff := cmp.Diff(tc.history, tr.History(), cmpJSON); diff != "" {
				t.Errorf("History (-want +got):\n%s", diff)
			}
			if tr.Leaf != tc.leaf {
				t.Errorf("Leaf = %s, want %s", tr.Leaf, tc.leaf)
			}
			var cost float64
			if tr.Cost != nil {
				cost = tr.Cost.TotalCostUSD
			}
			if cost != tc.cost {
				t.Errorf("cost = %v, want %v", cost, tc.cost)
			}
			if len(tr.Warnings) != tc.warnings {
				t.Errorf("warnings = %q, want %d", tr.Warnings, tc.warnings)
			}
		})
	}
}

func TestTruncatedLastLineWarning(t *testing.T) {
	tr := load(t, "truncated.jsonl")
	if len(tr.Entries) != 2 {
		t.Errorf("%d entries, want 2", len(tr.Entries))
	}
	if len(tr.Warnings) != 1 || !strings.Contains(tr.Warnings[0], "truncated.jsonl:3") {
		t.Errorf("warnings = %q, want one naming line 3", tr.Warnings)
	}
}

func TestMalformedLine(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "resumed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	tests := []struct {
		name string
		line int // 1-based line replaced
		bad  string
		want string
	}{
		{"not JSON", 3, "{\"type\":\"assistant\",\n", "not JSON"},
		{"no type", 2, `{"uuid":"x"}` + "\n", "missing type"},
		{"not an object", 4, "[1,2]\n", "not a JSON object"},
		{"bad content block", 3, `{"type":"assistant","message":{"role":"assistant","content":[{"text":"no type"}]}}` + "\n", "assistant message"},
		{"a cut line followed by more", 5, `{"type":"cost-st` + "\n", "cut"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ls := append([]string(nil), lines...)
			ls[tc.line-1] = tc.bad
			p := filepath.Join(t.TempDir(), "bad.jsonl")
			if err := os.WriteFile(p, []byte(strings.Join(ls, "")), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := Load(p)
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("Load = %v, want a *LineError", err)
			}
			if le.Line != tc.line || le.Path != p {
				t.Errorf("error at %s:%d, want %s:%d", le.Path, le.Line, p, tc.line)
			}
			if msg := err.Error(); !strings.Contains(msg, p) || !strings.Contains(msg, ":"+itoa(tc.line)+":") {
				t.Errorf("error %q does not name the file and line", msg)
			}
		})
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestLineRoundTrip checks that every line of the testdata reads back the
// same after writing, and that lines of types not modelled are written
// back byte for byte.
func TestLineRoundTrip(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte{'\n'}) {
			e, err := ParseEntry(line)
			if err != nil {
				continue // blank or the truncated line
			}
			b, err := e.MarshalJSON()
			if err != nil {
				t.Errorf("%s:%d: marshal: %v", f, i+1, err)
				continue
			}
			if !modelled[e.Type] && !bytes.Equal(b, line) {
				t.Errorf("%s:%d: %s line not kept verbatim:\n got %s\nwant %s", f, i+1, e.Type, b, line)
			}
			e2, err := ParseEntry(b)
			if err != nil {
				t.Errorf("%s:%d: reparse: %v", f, i+1, err)
				continue
			}
			if diff := cmp.Diff(e, e2, cmpJSON); diff != "" {
				t.Errorf("%s:%d: round trip (-read +reread):\n%s", f, i+1, diff)
			}
			if !jsonEq(line, b) {
				t.Errorf("%s:%d: written line differs in meaning:\n got %s\nwant %s", f, i+1, b, line)
			}
		}
	}
}

// jsonEq compares JSON objects by meaning; top-level false booleans count
// as absent (they are not written).
func jsonEq(a, b []byte) bool {
	var va, vb map[string]any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	for _, m := range []map[string]any{va, vb} {
		for k, v := range m {
			if v == false {
				delete(m, k)
			}
		}
	}
	return cmp.Equal(va, vb)
}

func TestAt(t *testing.T) {
	tr := load(t, "resumed.jsonl")
	at, err := tr.At("b0000002-0000-4000-8000-000000000002")
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Message{
		{Role: "user", Content: []model.Content{text("Remember the word KIWI")}},
		{Role: "assistant", Content: []model.Content{text("I will remember KIWI.")}},
	}
	if diff := cmp.Diff(want, at.History(), cmpJSON); diff != "" {
		t.Errorf("History at an earlier entry (-want +got):\n%s", diff)
	}
	if at.Leaf != "b0000002-0000-4000-8000-000000000002" {
		t.Errorf("Leaf = %s", at.Leaf)
	}
	if _, err := tr.At("nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("At(unknown) = %v, want ErrNotFound", err)
	}
}

func TestMessages(t *testing.T) {
	tr := load(t, "branched.jsonl")
	var got []string
	for _, e := range tr.Messages() {
		got = append(got, e.UUID[:8])
	}
	want := []string{"c0000001", "c0000002", "c0000005", "c0000006"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Messages (-want +got):\n%s", diff)
	}
}

func TestAppendUser(t *testing.T) {
	h := []model.Message{{Role: "user", Content: []model.Content{text("a")}}}
	got := AppendUser(h, text("b"))
	want := []model.Message{{Role: "user", Content: []model.Content{text("a"), text("b")}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("AppendUser to a user message (-want +got):\n%s", diff)
	}
	if len(h[0].Content) != 1 {
		t.Errorf("AppendUser changed its argument")
	}
	h = append(want, model.Message{Role: "assistant", Content: []model.Content{text("c")}})
	if got := AppendUser(h, text("d")); len(got) != 3 || got[2].Role != "user" {
		t.Errorf("AppendUser after an assistant message = %+v", got)
	}
}

func FuzzParseEntry(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.jsonl"))
	for _, p := range files {
		data, _ := os.ReadFile(p)
		for _, l := range bytes.Split(data, []byte{'\n'}) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"type":"user","message":{"role":"user","content":null}}`))
	f.Add([]byte(`{"type":"cost-state","totalCostUSD":"x"}`))
	f.Add([]byte(`{"type":"user","parentUuid":5,"isSidechain":"no","message":{"content":[{"type":"tool_result","content":[{"type":"image"}]}]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		e, err := ParseEntry(line)
		if err != nil {
			return
		}
		b1, err := e.MarshalJSON()
		if err != nil {
			return // e.g. a block the model package cannot write back
		}
		e2, err := ParseEntry(b1)
		if err != nil {
			t.Fatalf("a written line does not parse: %v\nline: %s\nwritten: %s", err, line, b1)
		}
		b2, err := e2.MarshalJSON()
		if err != nil {
			t.Fatalf("a re-read entry does not marshal: %v", err)
		}
		if !bytes.Equal(b1, b2) {
			t.Fatalf("writing is not stable:\n1: %s\n2: %s", b1, b2)
		}
	})
}
