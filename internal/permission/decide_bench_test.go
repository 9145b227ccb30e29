package permission

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDecideRead is the check of one Read call of a file five
// directories deep in default mode with an allow rule: mostly the lstat
// of each component of the path while resolving its links.
func BenchmarkDecideRead(b *testing.B) {
	dir, err := filepath.EvalSymlinks(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "a", "b", "c", "file.go")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("package c\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	rs := RuleSet{Sources: []SourceRules{{Source: SourceCLI, Allow: []string{"Read"}}}}
	c, err := New(Config{Mode: ModeDefault, Rules: rs, Dirs: []string{dir}})
	if err != nil {
		b.Fatal(err)
	}
	in, _ := json.Marshal(map[string]string{"file_path": p})
	b.ReportAllocs()
	for b.Loop() {
		if d := c.Decide(context.Background(), Call{Tool: "Read", Input: in}); d.Behavior != Allow {
			b.Fatalf("%+v", d)
		}
	}
}
