package permission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRuleCache: a rule compiled twice from the same input is shared;
// a path rule is compiled afresh each time, so a link made after the
// first compile is seen by the next.
func TestRuleCache(t *testing.T) {
	dir := t.TempDir()
	bases := pathBases{cwd: dir, home: dir}
	a, err := compileCached("Bash(npm test:*)", Allow, "projectSettings", bases, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := compileCached("Bash(npm test:*)", Allow, "projectSettings", bases, false)
	if a != b {
		t.Error("the same Bash rule was compiled twice")
	}
	if c, _ := compileCached("Bash(npm test:*)", Deny, "projectSettings", bases, false); c == a {
		t.Error("a rule of another behaviour shares the compiled rule")
	}
	p1, err := compileCached("Read(./secret/**)", Deny, "projectSettings", bases, false)
	if err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	if err := os.Symlink(target, filepath.Join(dir, "secret")); err != nil {
		t.Fatal(err)
	}
	p2, _ := compileCached("Read(./secret/**)", Deny, "projectSettings", bases, false)
	if p1 == p2 {
		t.Fatal("a path rule was served from the cache")
	}
	if len(p2.path.globs) <= len(p1.path.globs) {
		t.Errorf("the recompiled path rule has %d patterns, the first %d: the new link is not covered", len(p2.path.globs), len(p1.path.globs))
	}
}
