package conversation_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
)

// TestCompactionPreservedSegment: a compaction that keeps recent messages
// names them in compact_metadata's preserved_segment, and the uuids are
// the transcript's: the boundary entry carries the same segment, the head
// entry follows the anchor, and the parentUuid chain runs from the tail
// back to the head.
func TestCompactionPreservedSegment(t *testing.T) {
	cwd, configDir := compactSetup(t)
	srv := agentlooptest.NewTB(t)
	scriptedSession(srv, 30)
	msgs, err := agentloop.Query(context.Background(), "Work.", compactOptions(t, srv, cwd, configDir, 20_000)).Collect()
	if err != nil {
		t.Fatal(err)
	}
	var segs []map[string]any
	for _, b := range boundaries(t, msgs) {
		if s, ok := b["preserved_segment"].(map[string]any); ok {
			segs = append(segs, s)
		}
	}
	if len(segs) == 0 {
		t.Fatal("no compaction reported a preserved_segment")
	}
	// preserved_messages names the same messages, in order.
	for i, b := range boundaries(t, msgs) {
		seg, ok := b["preserved_segment"].(map[string]any)
		if !ok {
			continue
		}
		pm, _ := b["preserved_messages"].(map[string]any)
		ids, _ := pm["uuids"].([]any)
		if len(ids) == 0 || pm["anchor_uuid"] != seg["anchor_uuid"] || ids[0] != seg["head_uuid"] ||
			ids[len(ids)-1] != seg["tail_uuid"] || len(pm["all_uuids"].([]any)) != len(ids) {
			t.Errorf("boundary %d: preserved_messages %v does not match preserved_segment %v", i, pm, seg)
		}
	}
	paths, _ := filepath.Glob(filepath.Join(configDir, "projects", "*", lastResult(t, msgs).SessionID+".jsonl"))
	if len(paths) != 1 {
		t.Fatalf("transcripts %v", paths)
	}
	f, err := os.Open(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parent := map[string]string{}
	var entrySegs []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var e struct {
			UUID, ParentUUID, Subtype string
			CompactMetadata           map[string]any
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		parent[e.UUID] = e.ParentUUID
		if e.Subtype == "compact_boundary" {
			if s, ok := e.CompactMetadata["preservedSegment"].(map[string]any); ok {
				entrySegs = append(entrySegs, s)
			}
		}
	}
	if len(entrySegs) != len(segs) {
		t.Fatalf("%d segments in the transcript, %d in the stream", len(entrySegs), len(segs))
	}
	for i, s := range segs {
		head, anchor, tail := s["head_uuid"].(string), s["anchor_uuid"].(string), s["tail_uuid"].(string)
		if es := entrySegs[i]; es["headUuid"] != head || es["anchorUuid"] != anchor || es["tailUuid"] != tail {
			t.Errorf("segment %d: transcript %v, stream %v", i, es, s)
		}
		if parent[head] != anchor {
			t.Errorf("segment %d: head %s follows %q, not the anchor %s", i, head, parent[head], anchor)
		}
		steps, u := 0, tail
		for ; u != head && u != "" && steps < 1000; steps++ {
			u = parent[u]
		}
		if u != head {
			t.Errorf("segment %d: the chain from the tail does not reach the head", i)
		}
	}
}
