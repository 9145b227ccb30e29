package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/tool"
)

// BenchmarkReadTool is one Read call of a 4 KB source file five
// directories deep, as the loop makes it (input already validated): the
// path's resolution, the no-follow walk, the stat and the read, the
// numbered lines. Most of its cost is system calls.
func BenchmarkReadTool(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "a", "b", "c", "file.go")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	src := strings.Repeat("var value = compute(42, \"the quick brown fox\")\n", 90)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		b.Fatal(err)
	}
	rd := Read()
	env := &tool.Env{Cwd: dir, Home: dir, SessionID: "bench", State: &tool.State{}}
	input, _ := json.Marshal(map[string]string{"file_path": p})
	b.ReportAllocs()
	for b.Loop() {
		r, err := rd.Run(context.Background(), &tool.Call{ID: "t", Input: input, Env: env})
		if err != nil || r.IsError {
			b.Fatalf("%v %+v", err, r)
		}
	}
}
