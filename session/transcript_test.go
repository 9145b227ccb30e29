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

// TestMalformedLine replaces one line of a good transcript with a damaged
// one: Load skips just that line, keeps every other entry and the chain
// across the gap, and says in one warning, in plain words, where and what.
func TestMalformedLine(t *testing.T) {
	good, err := os.ReadFile(filepath.Join("testdata", "resumed.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	const (
		u1 = "b0000001-0000-4000-8000-000000000001"
		a1 = "b0000002-0000-4000-8000-000000000002"
		u2 = "b0000003-0000-4000-8000-000000000003"
		a2 = "b0000004-0000-4000-8000-000000000004"
	)
	tests := []struct {
		name  string
		line  int // 1-based line replaced
		bad   string
		want  string   // in the warning
		chain []string // uuids of the chain rebuilt
	}{
		{"not JSON", 3, "{\"type\":\"assistant\",\n", "not valid JSON", []string{u1, u2, a2}},
		{"no type", 2, `{"uuid":"x"}` + "\n", "missing type", []string{a1, u2, a2}},
		{"not an object", 4, "[1,2]\n", "not a JSON object", []string{u1, a1, u2, a2}},
		{"bad content block", 3, `{"type":"assistant","message":{"role":"assistant","content":[{"text":"no type"}]}}` + "\n",
			"content block: missing type", []string{u1, u2, a2}},
		{"message of the wrong shape", 7, `{"parentUuid":"` + a1 + `","type":"user","message":"Which word?","uuid":"` + u2 + `"}` + "\n",
			"user message: expected an object, found a string", []string{u1, a1, a2}},
		{"content of the wrong shape", 7, `{"parentUuid":"` + a1 + `","type":"user","message":{"role":"user","content":7},"uuid":"` + u2 + `"}` + "\n",
			"content: expected a list, found a number", []string{u1, a1, a2}},
		{"a block field of the wrong shape", 8, `{"parentUuid":"` + u2 + `","type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":5}]},"uuid":"` + a2 + `"}` + "\n",
			`field "text": expected a string, found a number`, []string{u1, a1, u2}},
		{"a cut line followed by more", 5, `{"type":"cost-st` + "\n", "not valid JSON", []string{u1, a1, u2, a2}},
		{"a cut conversation line", 7, `{"parentUuid":"` + a1 + `","isSidechain":false,"type":"user","message":{"role":"us` + "\n",
			"not valid JSON", []string{u1, a1, a2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ls := append([]string(nil), lines...)
			ls[tc.line-1] = tc.bad
			p := filepath.Join(t.TempDir(), "bad.jsonl")
			data := []byte(strings.Join(ls, ""))
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			tr, err := Load(p)
			if err != nil {
				t.Fatalf("Load = %v, want the damaged line skipped", err)
			}
			if want := strings.Count(string(good), "\n") - 1; len(tr.Entries) != want {
				t.Errorf("%d entries, want %d: every line but the damaged one", len(tr.Entries), want)
			}
			var chain []string
			for _, e := range tr.Chain {
				chain = append(chain, e.UUID)
			}
			if d := cmp.Diff(tc.chain, chain); d != "" {
				t.Errorf("chain (-want +got):\n%s", d)
			}
			if len(tr.Warnings) != 1 {
				t.Fatalf("warnings %q, want one", tr.Warnings)
			}
			w := tr.Warnings[0]
			if !strings.HasPrefix(w, p+":"+itoa(tc.line)+": ") || !strings.Contains(w, tc.want) {
				t.Errorf("warning %q, want %s:%d: … %s", w, p, tc.line, tc.want)
			}
			for _, leak := range []string{"Go ", "json.", "map[", "model."} {
				if strings.Contains(w, leak) {
					t.Errorf("warning %q names Go types (%q)", w, leak)
				}
			}
			if after, _ := os.ReadFile(p); !bytes.Equal(after, data) {
				t.Error("Load modified the file")
			}
		})
	}
}

// TestLoadEmpty: a transcript without a valid entry cannot be resumed; Load
// says so rather than hand back an empty conversation.
func TestLoadEmpty(t *testing.T) {
	for name, data := range map[string]string{
		"empty":         "",
		"blank":         "\n\n  \n",
		"all malformed": "garbage\n{\"type\":\n",
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "x.jsonl")
			os.WriteFile(p, []byte(data), 0o600)
			_, err := Load(p)
			if !errors.Is(err, ErrEmptyTranscript) || !strings.Contains(err.Error(), p) {
				t.Errorf("Load = %v, want ErrEmptyTranscript naming the file", err)
			}
			if name == "all malformed" && !strings.Contains(err.Error(), p+":1: skipped a malformed line") {
				t.Errorf("Load = %v, want the skipped lines named", err)
			}
		})
	}
}

// TestManyMalformedLines: the warnings name the first lines one by one and
// count the rest.
func TestManyMalformedLines(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"user","uuid":"u1","message":{"role":"user","content":"hi"}}` + "\n")
	for range 25 {
		b.WriteString("not json\n")
	}
	tr, err := Parse(strings.NewReader(b.String()), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Entries) != 1 || len(tr.Warnings) != maxLineWarnings+1 ||
		tr.Warnings[maxLineWarnings] != "t.jsonl: 15 more malformed lines skipped" {
		t.Errorf("%d entries, warnings %q", len(tr.Entries), tr.Warnings)
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
			if !modelled(e.Type) && !bytes.Equal(b, line) {
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
