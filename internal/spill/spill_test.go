package spill

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

func TestLimit(t *testing.T) {
	for _, tt := range []struct{ in, want int }{
		{0, tool.DefaultMaxResultChars},
		{-1, -1},
		{100, 100},
		{tool.MaxResultCharsCeiling + 1, tool.MaxResultCharsCeiling},
	} {
		if got := Limit(tt.in); got != tt.want {
			t.Errorf("Limit(%d) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	long := strings.Repeat("abcdefghi\n", 1000) // 10,000 characters
	image := model.Content{Type: "image"}
	tests := []struct {
		name    string
		block   model.Content
		limit   int
		noDir   bool
		spilled bool
		file    string // what the file must hold
		kept    int    // blocks of the result when spilled
	}{
		{name: "short text stays", block: model.Content{Type: model.TypeToolResult, ToolUseID: "a", Text: "hi"}, limit: 10},
		{name: "at the limit stays", block: model.Content{Type: model.TypeToolResult, ToolUseID: "a", Text: long}, limit: 10_000},
		{name: "over the limit", block: model.Content{Type: model.TypeToolResult, ToolUseID: "toolu_1", Text: long}, limit: 9_999, spilled: true, file: long},
		{name: "characters, not bytes", block: model.Content{Type: model.TypeToolResult, ToolUseID: "u", Text: strings.Repeat("é", 100)}, limit: 100},
		{name: "negative limit keeps all", block: model.Content{Type: model.TypeToolResult, ToolUseID: "a", Text: long}, limit: -1},
		{name: "no directory keeps all", block: model.Content{Type: model.TypeToolResult, ToolUseID: "a", Text: long}, limit: 10, noDir: true},
		{name: "blocks: text joined, image kept", block: model.Content{Type: model.TypeToolResult, ToolUseID: "b/../x",
			Blocks: []model.Content{model.TextBlock(long), image, model.TextBlock("tail")}}, limit: 100, spilled: true, file: long + "\ntail", kept: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "tool-results")
			if tt.noDir {
				dir = ""
			}
			got, spilled := Apply(tt.block, tt.limit, dir)
			if spilled != tt.spilled {
				t.Fatalf("spilled = %v, want %v", spilled, tt.spilled)
			}
			if !spilled {
				if got.Text != tt.block.Text || len(got.Blocks) != len(tt.block.Blocks) {
					t.Errorf("block changed though not spilled")
				}
				return
			}
			path := filepath.Join(dir, fileName(tt.block.ToolUseID))
			if filepath.Dir(path) != dir {
				t.Fatalf("file %s escapes %s", path, dir)
			}
			b, err := os.ReadFile(path)
			if err != nil || string(b) != tt.file {
				t.Fatalf("file %s: %d bytes, err %v; want the whole text", path, len(b), err)
			}
			text := got.Text
			if tt.kept > 0 {
				if len(got.Blocks) != tt.kept || got.Blocks[1].Type != "image" {
					t.Fatalf("blocks = %+v, want the preview and the image", got.Blocks)
				}
				text = got.Blocks[0].Text
			}
			if !strings.Contains(text, path) || len(text) > HeadBytes+1000 {
				t.Errorf("preview (%d bytes) does not name %s or is too long:\n%s", len(text), path, text)
			}
		})
	}
}

func TestApplyWriteFailure(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", 50_000)
	got, spilled := Apply(model.Content{Type: model.TypeToolResult, ToolUseID: "a", Text: long}, 100, filepath.Join(file, "sub"))
	if !spilled || len(got.Text) > 5000 || !strings.Contains(got.Text, "Saving it to a file failed") {
		t.Errorf("on a write failure got %d bytes: %.300s", len(got.Text), got.Text)
	}
}

// The preview has the reference's form (testdata/conformance/t_spill_large):
// seq 1 30000 is 168893 bytes, its first 2000 bytes end with "527\n".
func TestPreviewForm(t *testing.T) {
	var lines []string
	for i := 1; i <= 30000; i++ {
		lines = append(lines, strconv.Itoa(i))
	}
	text := strings.Join(lines, "\n") + "\n"
	got := Preview(text, "/x/y.txt", nil)
	want := "<persisted-output>\nOutput too large (164.9KB). Full output saved to: /x/y.txt\n\nPreview (first 2KB):\n" +
		strings.Join(lines[:527], "\n") + "\n...\n</persisted-output>"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("preview (-want +got):\n%s", diff)
	}
	if got := size(1000); got != "1000 bytes" {
		t.Errorf("size(1000) = %q", got)
	}
	if got := size(3 << 20); got != "3.0MB" {
		t.Errorf("size(3 MiB) = %q", got)
	}
}

// TestTextBytesBoundsResultText checks that textBytes, which lets Apply
// skip the count, is exactly the byte length of resultText's text and
// never less than its character count: multi-byte text, several text
// blocks, blocks of other kinds, none.
func TestTextBytesBoundsResultText(t *testing.T) {
	for _, b := range []model.Content{
		{Type: model.TypeToolResult, Text: "plain"},
		{Type: model.TypeToolResult, Text: "日本語のテキスト"},
		{Type: model.TypeToolResult, Text: ""},
		{Type: model.TypeToolResult, Blocks: []model.Content{}},
		{Type: model.TypeToolResult, Blocks: []model.Content{model.TextBlock("a"), {Type: model.TypeImage}, model.TextBlock("ü b")}},
		{Type: model.TypeToolResult, Blocks: []model.Content{{Type: model.TypeImage}}},
	} {
		text, n := resultText(b)
		if got := textBytes(b); got != len(text) || got < n {
			t.Errorf("textBytes(%+v) = %d; resultText's text is %d bytes, %d characters", b, got, len(text), n)
		}
	}
}
