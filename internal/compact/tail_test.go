package compact

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

func TestSplitLast(t *testing.T) {
	big := strings.Repeat("x", 40_000) // ~10k tokens
	for _, tc := range []struct {
		name       string
		history    []model.Message
		keep       int64
		older, kpt int // lengths
	}{
		{"last round kept", []model.Message{user("go"), call("a"), result("a", "small")}, 1000, 1, 2},
		{"reply kept (a /compact after the answer)", []model.Message{user("go"), call("a"), result("a", "x"), assistant("done")}, 1000, 3, 1},
		{"round over keep: all summarised", []model.Message{user("go"), call("a"), result("a", big)}, 1000, 3, 0},
		{"keep 0: all summarised", []model.Message{user("go"), call("a"), result("a", "x")}, 0, 3, 0},
		{"no reply yet", []model.Message{user("go")}, 1000, 1, 0},
		{"round is everything", []model.Message{assistant("hi"), user("go")}, 1000, 2, 0},
		{"prompt after the reply stays with it", []model.Message{user("go"), assistant("hi"), user("next")}, 1000, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			older, kept := SplitLast(tc.history, tc.keep)
			if len(older) != tc.older || len(kept) != tc.kpt {
				t.Fatalf("older %d, kept %d; want %d, %d", len(older), len(kept), tc.older, tc.kpt)
			}
			if o := orphans(kept); len(o) > 0 {
				t.Errorf("kept part has a tool pair cut in two: %v", o)
			}
		})
	}
}

func TestShrink(t *testing.T) {
	big := "huge " + strings.Repeat("y", 200_000)
	msgs := []model.Message{user("go"), call("a"), result("a", big)}
	got := Shrink(msgs, 5_000)
	if n := Estimate(got); n > 5_000 {
		t.Errorf("shrunk to %d tokens, over 5000", n)
	}
	r := got[2].Content[0].Text
	if !strings.HasPrefix(r, "huge y") || !strings.Contains(r, "more characters of this tool result were left out") {
		t.Errorf("shortened result: %.80s … %.200s", r, r[max(0, len(r)-200):])
	}
	if msgs[2].Content[0].Text != big {
		t.Error("Shrink modified its input")
	}
	if o := orphans(got); len(o) > 0 {
		t.Errorf("tool pair cut in two: %v", o)
	}
	if same := Shrink(msgs[:2], 5_000); &same[0] != &msgs[0] {
		t.Error("a history that fits was copied")
	}
}

// A tool result given as content blocks (an MCP tool's) larger than the
// limit is shortened inside its text block.
func TestShrinkBlockResult(t *testing.T) {
	big := "huge " + strings.Repeat("z", 200_000)
	res := model.Message{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "a",
		Blocks: []model.Content{model.TextBlock("head"), model.TextBlock(big)}}}}
	msgs := []model.Message{user("go"), call("a"), res}
	got := Shrink(msgs, 5_000)
	if n := Estimate(got); n > 5_000 {
		t.Errorf("shrunk to %d tokens, over 5000", n)
	}
	inner := got[2].Content[0].Blocks
	if len(inner) != 2 || inner[0].Text != "head" || !strings.HasPrefix(inner[1].Text, "huge z") ||
		!strings.Contains(inner[1].Text, "more characters of this tool result were left out") {
		t.Errorf("shortened blocks: %.200v", inner)
	}
	if msgs[2].Content[0].Blocks[1].Text != big {
		t.Error("Shrink modified its input")
	}
}

func readCall(id, tool, path string) model.Message {
	in, _ := json.Marshal(map[string]string{"file_path": path})
	return model.Message{Role: "assistant", Content: []model.Content{{Type: model.TypeToolUse, ID: id, Name: tool, Input: in}}}
}

func TestFilesSeen(t *testing.T) {
	yes := true
	failed := model.Message{Role: "user", Content: []model.Content{{Type: model.TypeToolResult, ToolUseID: "e", Text: "no such file", IsError: &yes}}}
	summarised := []model.Message{
		user("go"),
		readCall("a", "Read", "/w/a.txt"), result("a", "…"),
		readCall("b", "Read", "/w/b.txt"), result("b", "…"),
		readCall("c", "Write", "/w/c.txt"), result("c", "ok"),
		readCall("a2", "Read", "/w/a.txt"), result("a2", "…"), // a.txt again: now the most recent
		readCall("e", "Read", "/w/missing.txt"), failed,
		readCall("g", "Grep", "/w/g.txt"), result("g", "…"), // not a file tool
		readCall("r", "Read", "relative.txt"), result("r", "…"),
		readCall("k0", "Read", "/w/k.txt"), result("k0", "…"),
	}
	kept := []model.Message{readCall("k", "Edit", "/w/k.txt"), result("k", "ok")}
	want := []string{"/w/a.txt", "/w/c.txt", "/w/b.txt"}
	if diff := cmp.Diff(want, FilesSeen(summarised, kept)); diff != "" {
		t.Errorf("FilesSeen (-want +got):\n%s", diff)
	}
}

func TestReattach(t *testing.T) {
	files := map[string]string{
		"/w/a.txt":   "alpha one\nalpha two\n",
		"/w/big.txt": strings.Repeat("0123456789\n", 4_000), // 44k bytes: over the per-file cap
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, errors.New("gone")
	}
	got := Reattach([]string{"/w/gone.txt", "/w/a.txt", "/w/big.txt"}, read, 50_000)
	if len(got) != 2 {
		t.Fatalf("%d texts, want 2 (the missing file left out): %q", len(got), got)
	}
	if !strings.Contains(got[0], "/w/a.txt") || !strings.HasSuffix(got[0], ":\n1\talpha one\n2\talpha two") {
		t.Errorf("a.txt: %q", got[0])
	}
	if n := len(got[1]); n > ReattachFileTokens*4+400 || !strings.Contains(got[1], "more lines are not shown") {
		t.Errorf("big.txt is %d bytes, not cut to the per-file cap: %.200s", n, got[1])
	}
	if got := Reattach([]string{"/w/big.txt", "/w/a.txt"}, read, 100); len(got) != 1 || !strings.Contains(got[0], "/w/a.txt") {
		t.Errorf("a budget of 100 tokens: %q; want a.txt alone", got)
	}
	var many []string
	for range 8 {
		many = append(many, "/w/a.txt")
	}
	if got := Reattach(many, read, 50_000); len(got) != ReattachFiles {
		t.Errorf("%d files re-attached, want at most %d", len(got), ReattachFiles)
	}
}

func TestSummaryOf(t *testing.T) {
	for in, want := range map[string]string{
		"<analysis>thinking</analysis>\n<summary>\nThe gist.\n</summary>": "The gist.",
		"Plain summary.":                        "Plain summary.",
		"<analysis>a</analysis>\nNo tags here.": "No tags here.",
		"<summary>unclosed":                     "unclosed",
		"<summary></summary>":                   "<summary></summary>",
		"":                                      "",
	} {
		if got := SummaryOf(in); got != want {
			t.Errorf("SummaryOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCommandRecord(t *testing.T) {
	got := CommandRecord("compact", "keep the names")
	if len(got) != 3 || !strings.Contains(got[1].Text, "<command-name>/compact</command-name>") ||
		!strings.Contains(got[1].Text, "<command-args>keep the names</command-args>") || got[2].Text != CommandStdout {
		t.Errorf("CommandRecord: %+v", got)
	}
}
