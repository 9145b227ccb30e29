package conversation_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
)

type noInput struct{}

// bigOutput is 200 KB of numbered lines.
func bigOutput() string {
	var sb strings.Builder
	for i := 1; sb.Len() < 200_000; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	return sb.String()
}

func bigTool(limit int) agentloop.Tool {
	return agentloop.NewTool("big", "Print a lot.", func(context.Context, noInput, *agentloop.ToolCall) (agentloop.ToolResult, error) {
		return agentloop.ToolResult{Content: []model.Content{model.TextBlock(bigOutput())}}, nil
	}, &agentloop.ToolOptions{ReadOnly: true, MaxResultChars: limit})
}

// runQuery runs one query and fails the test on an error.
func runQuery(t *testing.T, opts *agentloop.Options) {
	t.Helper()
	for _, err := range agentloop.Query(context.Background(), "go", opts) {
		if err != nil {
			t.Fatal(err)
		}
	}
}

func resultText(t *testing.T, req *agentlooptest.Request, id string) model.Content {
	t.Helper()
	b, ok := req.ToolResult(id)
	if !ok {
		t.Fatalf("request has no tool_result for %s", id)
	}
	if b.Blocks != nil {
		var parts []string
		for _, c := range b.Blocks {
			parts = append(parts, c.Text)
		}
		b.Text = strings.Join(parts, "\n")
	}
	return b
}

// TestLargeToolResultSpilled: a custom tool's 200 KB result reaches the
// model as a preview with the path of a file in the session's directory
// that holds it all; the Read tool can read that file under the default
// permissions; the transcript has the preview, not the whole output.
func TestLargeToolResultSpilled(t *testing.T) {
	cwd, config := t.TempDir(), t.TempDir()
	const id = "6f1c2a5e-0d4b-4c1e-9a57-1b2c3d4e5f60"
	transcriptPath := sessions.Path(config, cwd, id)
	saved := filepath.Join(strings.TrimSuffix(transcriptPath, ".jsonl"), "tool-results", "toolu_big.txt")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_big", "big", map[string]any{}),
		agentlooptest.ToolUse("toolu_read", "Read", map[string]any{"file_path": saved, "offset": 5000, "limit": 3}),
		agentlooptest.Text("done"))
	runQuery(t, &agentloop.Options{Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: config, SessionID: id,
		Tools: []string{"Read"}, CustomTools: []agentloop.Tool{bigTool(0)}})

	full := bigOutput()
	got := resultText(t, srv.Requests()[1], "toolu_big")
	if len(got.Text) > 5000 || !strings.Contains(got.Text, saved) || !strings.Contains(got.Text, "Preview (first 2KB):\nline 1\nline 2\n") {
		t.Errorf("tool_result the model got (%d bytes) is not a preview naming %s:\n%.600s", len(got.Text), saved, got.Text)
	}
	if !strings.HasSuffix(got.Text, "\n...\n</persisted-output>") {
		t.Errorf("preview does not end as the reference's does: %q", got.Text[len(got.Text)-40:])
	}
	if b, err := os.ReadFile(saved); err != nil || string(b) != full {
		t.Errorf("saved file: %d bytes, err %v; want the %d bytes of the output", len(b), err, len(full))
	}
	read := resultText(t, srv.Requests()[2], "toolu_read")
	if (read.IsError != nil && *read.IsError) || !strings.Contains(read.Text, "line 5000") {
		t.Errorf("Read of the saved file = %+v, want its line 5000", read)
	}
	tr, err := os.ReadFile(transcriptPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(tr), "tool-results/toolu_big.txt") || strings.Contains(string(tr), `"line 3000\nline 3001`) {
		t.Errorf("transcript does not hold the preview (or holds the whole output)")
	}
}

// TestToolResultLimitPerTool: a tool that raises its limit above its
// output's size keeps the output inline.
func TestToolResultLimitPerTool(t *testing.T) {
	srv := agentlooptest.NewTB(t, agentlooptest.ToolUse("toolu_big", "big", map[string]any{}), agentlooptest.Text("done"))
	runQuery(t, &agentloop.Options{Provider: provider(t, srv, nil), Cwd: t.TempDir(), ConfigDir: t.TempDir(),
		Tools: []string{}, CustomTools: []agentloop.Tool{bigTool(300_000)}})
	if got := resultText(t, srv.Requests()[1], "toolu_big"); got.Text != bigOutput() {
		t.Errorf("tool_result is %d bytes, want the whole output inline (%d)", len(got.Text), len(bigOutput()))
	}
}

// TestBashLargeOutputSpilled: Bash output beyond its 30,000 characters is
// saved whole, and without session persistence the file lives in a
// temporary directory removed when the session ends.
func TestBashLargeOutputSpilled(t *testing.T) {
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_seq", "Bash", map[string]any{"command": "seq 1 100000"}),
		agentlooptest.Text("done"))
	var saved string
	for m, err := range agentloop.Query(context.Background(), "go", &agentloop.Options{Provider: provider(t, srv, nil),
		Cwd: t.TempDir(), NoSessionPersistence: true, Tools: []string{"Bash"}}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := m.(*agentloop.ResultMessage); ok {
			// The session is still open: the file must be there.
			got := resultText(t, srv.Requests()[1], "toolu_seq").Text
			const marker = "Full output saved to: "
			i := strings.Index(got, marker)
			if i < 0 || len(got) > 5000 {
				t.Fatalf("Bash result (%d bytes) is not a preview:\n%.500s", len(got), got)
			}
			saved = strings.Fields(got[i+len(marker):])[0]
			b, err := os.ReadFile(saved)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(b), "1\n2\n3\n") || !strings.HasSuffix(string(b), "99999\n100000") {
				t.Errorf("saved file (%d bytes) does not hold the whole output", len(b))
			}
		}
	}
	if saved == "" {
		t.Fatal("no result")
	}
	if _, err := os.Stat(filepath.Dir(saved)); !os.IsNotExist(err) {
		t.Errorf("temporary results directory %s still there after the session ended (err %v)", filepath.Dir(saved), err)
	}
}
