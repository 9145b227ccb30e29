package conversation_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// TestResumeAfterKill: a process killed in the middle of a tool round
// leaves a transcript whose last reply has calls and no results. Resuming
// it tells the model the calls were interrupted (an is_error result, in the
// request and in the transcript) instead of silently dropping them, and
// the calls are not run again.
func TestResumeAfterKill(t *testing.T) {
	cwd, cfg := t.TempDir(), t.TempDir()
	marker := filepath.Join(cwd, "ran")
	srv := agentlooptest.NewTB(t,
		agentlooptest.ToolUse("toolu_k1", "Bash", map[string]any{"command": "echo x >> " + marker}),
		agentlooptest.Text("done"))
	res, err := agentloop.Query(context.Background(), "go", &agentloop.Options{
		Provider: provider(t, srv, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{"Bash"},
		PermissionMode: agentloop.PermissionBypass}).Result()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(cfg, "projects", "*", res.SessionID+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("transcript files %v", files)
	}
	// Cut the transcript just after the assistant's tool_use, as a
	// SIGKILL during the command would leave it.
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var kept bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		kept.Write(sc.Bytes())
		kept.WriteByte('\n')
		if strings.Contains(sc.Text(), `"type":"assistant"`) && strings.Contains(sc.Text(), "toolu_k1") {
			break
		}
	}
	if err := os.WriteFile(files[0], kept.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(marker); err != nil {
		t.Fatal(err)
	}

	srv2 := agentlooptest.NewTB(t, agentlooptest.Text("resumed"))
	if _, err := agentloop.Query(context.Background(), "carry on", &agentloop.Options{
		Provider: provider(t, srv2, nil), Cwd: cwd, ConfigDir: cfg, Tools: []string{"Bash"},
		PermissionMode: agentloop.PermissionBypass, Resume: res.SessionID}).Result(); err != nil {
		t.Fatal(err)
	}
	req := srv2.Requests()[0]
	r, ok := req.ToolResult("toolu_k1")
	if !ok || r.IsError == nil || !*r.IsError || !strings.Contains(r.ResultText(), "interrupted") {
		t.Errorf("resumed request's result for the cut-off call = %+v (found %v), want an is_error 'interrupted' result", r, ok)
	}
	if got := req.LastUserText(); !strings.Contains(got, "carry on") {
		t.Errorf("last user text = %q, want the new prompt", got)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the cut-off command ran again on resume")
	}
	after, _ := os.ReadFile(files[0])
	var found bool
	for _, line := range bytes.Split(after, []byte("\n")) {
		var e struct {
			Type    string `json:"type"`
			Message struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(line, &e) == nil && e.Type == "user" && bytes.Contains(e.Message.Content, []byte("toolu_k1")) &&
			bytes.Contains(e.Message.Content, []byte("interrupted")) {
			found = true
		}
	}
	if !found {
		t.Errorf("the transcript has no interrupted result for the cut-off call")
	}
}
