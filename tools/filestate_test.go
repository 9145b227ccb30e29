package tools

import (
	"fmt"
	"testing"
)

// TestFileStateManyFiles checks that records past the first maxFewFiles
// (kept in a map rather than the slice) are stored, found and replaced
// like the first ones, and that a key is never kept twice.
func TestFileStateManyFiles(t *testing.T) {
	s := &fileState{}
	const n = 3 * maxFewFiles
	key := func(i int) string { return fmt.Sprintf("/project/f%02d", i) }
	for i := range n {
		s.record(key(i), nil, []byte(key(i)), false)
	}
	for i := range n { // replace each: the newest record wins
		s.record(key(i), nil, []byte(key(i)+" changed"), i%2 == 0)
	}
	for i := range n {
		r, ok := s.get(key(i))
		if !ok {
			t.Fatalf("get(%s): no record", key(i))
		}
		if r.Size != int64(len(key(i)+" changed")) || r.Partial != (i%2 == 0) {
			t.Errorf("get(%s) = size %d, partial %v; want the second record", key(i), r.Size, r.Partial)
		}
		if known, stale := s.staleness(key(i), nil, []byte(key(i)+" changed")); !known || stale {
			t.Errorf("staleness(%s) = %v, %v; want known and fresh", key(i), known, stale)
		}
	}
	if _, ok := s.get("/project/none"); ok {
		t.Error("get of a path never recorded found a record")
	}
	if len(s.few) != maxFewFiles || len(s.few)+len(s.many) != n {
		t.Errorf("%d records in the slice and %d in the map; want %d and %d", len(s.few), len(s.many), maxFewFiles, n-maxFewFiles)
	}
}
