package toolsearch

import (
	"fmt"
	"testing"

	"github.com/agentloop/agentloop/tool"
)

// TestFoldedTextShared: the folded text of a tool is made once per
// process and shared by the catalogs of later sessions; the cache stops
// growing at its bound and still folds what it does not keep.
func TestFoldedTextShared(t *testing.T) {
	in := tool.Info{Name: "mcp__Db__Query", Description: "Runs A Query.", SearchHint: "SQL"}
	a, b := foldedOf(in), foldedOf(in)
	if a != b {
		t.Error("the same tool was folded twice")
	}
	if a.name != "mcp__db__query" || a.desc != "runs a query." || a.hint != "sql" {
		t.Errorf("folded %+v", *a)
	}
	for i := range maxFolded + 10 {
		foldedOf(tool.Info{Name: fmt.Sprintf("t%d", i), Description: "X"})
	}
	foldedCache.RLock()
	n := len(foldedCache.m)
	foldedCache.RUnlock()
	if n > maxFolded {
		t.Errorf("cache holds %d entries, bound %d", n, maxFolded)
	}
	if f := foldedOf(tool.Info{Name: "Late", Description: "Past The Bound"}); f.desc != "past the bound" {
		t.Errorf("past the bound: %+v", *f)
	}
}
