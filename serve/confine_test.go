package serve_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/agentlooptest"
)

// A session's file tools stay inside its tenant's root, whatever its
// permission mode: tenant A's agent, in bypassPermissions, cannot read a
// file of tenant B (by absolute path, by "..", through a link it made),
// nor write outside, while its own files work.
func TestFileToolsConfinedToTenant(t *testing.T) {
	e := newEnv(t, allowBypass)
	idB := e.create(tokenB, map[string]any{})
	_ = idB
	entries, _ := os.ReadDir(e.srvRoot())
	if len(entries) != 1 {
		t.Fatalf("tenant roots %v, want B's alone", entries)
	}
	rootB := filepath.Join(e.srvRoot(), entries[0].Name())
	os.MkdirAll(rootB, 0o755)
	secret := filepath.Join(rootB, "secret.txt")
	if err := os.WriteFile(secret, []byte("B's secret: KIWI"), 0o600); err != nil {
		t.Fatal(err)
	}
	id := e.create(tokenA, map[string]any{"permission_mode": "bypassPermissions"})
	var rootA string
	for _, en := range mustReadDir(t, e.srvRoot()) {
		if p := filepath.Join(e.srvRoot(), en.Name()); p != rootB {
			rootA = p
		}
	}
	if rootA == "" {
		t.Fatal("no root for tenant A")
	}
	cwdA := filepath.Join(rootA, id) // a session's default working directory
	if err := os.MkdirAll(cwdA, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(cwdA, "mine.txt"), []byte("A's own: FIG"), 0o600)
	if err := os.Symlink(rootB, filepath.Join(cwdA, "door")); err != nil {
		t.Fatal(err)
	}
	e.model.Push(
		agentlooptest.ToolUse("t1", "Read", map[string]any{"file_path": secret}),
		agentlooptest.ToolUse("t2", "Read", map[string]any{"file_path": cwdA + "/../../" + filepath.Base(rootB) + "/secret.txt"}),
		agentlooptest.ToolUse("t3", "Read", map[string]any{"file_path": filepath.Join(cwdA, "door", "secret.txt")}),
		agentlooptest.ToolUse("t4", "Grep", map[string]any{"pattern": "KIWI", "path": rootB}),
		agentlooptest.ToolUse("t5", "Write", map[string]any{"file_path": filepath.Join(rootB, "planted.txt"), "content": "x"}),
		agentlooptest.ToolUse("t6", "Read", map[string]any{"file_path": filepath.Join(cwdA, "mine.txt")}),
		agentlooptest.ToolUse("t7", "Glob", map[string]any{"pattern": rootB + "/*"}),
		agentlooptest.ToolUse("t8", "Glob", map[string]any{"pattern": "../../" + filepath.Base(rootB) + "/**"}),
		agentlooptest.ToolUse("t9", "Edit", map[string]any{"file_path": secret, "old_string": "KIWI", "new_string": "PEAR"}),
		agentlooptest.ToolUse("t10", "NotebookEdit", map[string]any{"notebook_path": filepath.Join(rootB, "nb.ipynb"), "new_source": "x", "edit_mode": "insert", "cell_type": "code"}),
		agentlooptest.Text("Done."))
	ev := e.subscribe(id, tokenA, "")
	e.must(http.StatusAccepted, "POST", "/v1/sessions/"+id+"/messages", tokenA, map[string]string{"text": "look around"})
	ev.until(isResult)
	reqs := e.model.Requests()
	for i, tid := range []string{"t1", "t2", "t3", "t4", "t5"} {
		res, ok := reqs[i+1].ToolResult(tid)
		if !ok || res.IsError == nil || !*res.IsError || strings.Contains(res.ResultText(), "KIWI") ||
			!strings.Contains(res.ResultText(), "outside this session's directory") {
			t.Errorf("%s: %+v, want the server's refusal, without B's secret", tid, res)
		}
	}
	if _, err := os.Stat(filepath.Join(rootB, "planted.txt")); err == nil {
		t.Error("A wrote into B's root")
	}
	if res, ok := reqs[6].ToolResult("t6"); !ok || !strings.Contains(res.ResultText(), "FIG") {
		t.Errorf("A's own file: %+v, want its text", res)
	}
	for i, tid := range []string{"t9", "t10"} {
		res, ok := reqs[i+9].ToolResult(tid)
		if !ok || res.IsError == nil || !*res.IsError || !strings.Contains(res.ResultText(), "outside this session's directory") {
			t.Errorf("%s: %+v, want the server's refusal", tid, res)
		}
	}
	if b, _ := os.ReadFile(secret); !strings.Contains(string(b), "KIWI") {
		t.Errorf("A edited B's file: %q", b)
	}
	if _, err := os.Stat(filepath.Join(rootB, "nb.ipynb")); err == nil {
		t.Error("A made a notebook in B's root")
	}
	for i, tid := range []string{"t7", "t8"} { // file names of B are not listed either
		res, ok := reqs[i+7].ToolResult(tid)
		if !ok || strings.Contains(res.ResultText(), "secret.txt") || !strings.Contains(res.ResultText(), "outside this session's directory") &&
			!strings.Contains(res.ResultText(), "climbs out") {
			t.Errorf("%s: %+v, want the server's refusal", tid, res)
		}
	}
}

func mustReadDir(t *testing.T, dir string) []os.DirEntry {
	t.Helper()
	en, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return en
}
