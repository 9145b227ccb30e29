package transcript

import (
	"encoding/json"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/session"
)

// compactBoundary is the transcript entry of a system/compact_boundary
// message: a new chain root whose logicalParentUuid is leaf, the entry
// before the compaction. The user line recorded next is written as the
// compaction's summary (isCompactSummary).
func compactBoundary(m *message.System, leaf string) session.Entry {
	var md struct {
		Trigger   string `json:"trigger"`
		PreTokens int64  `json:"pre_tokens"`
		Segment   *struct {
			Head   string `json:"head_uuid"`
			Anchor string `json:"anchor_uuid"`
			Tail   string `json:"tail_uuid"`
		} `json:"preserved_segment"`
	}
	_ = json.Unmarshal(m.Data["compact_metadata"], &md) // a malformed one still marks the boundary
	e := session.CompactBoundaryEntry(md.Trigger, md.PreTokens, leaf)
	if sg := md.Segment; sg != nil {
		// The entries it names are the kept copies recorded right after
		// the summary (internal/engine/compaction.go), in camelCase as the
		// transcript writes its metadata.
		b, err := json.Marshal(map[string]any{"trigger": md.Trigger, "preTokens": md.PreTokens,
			"preservedSegment": map[string]string{"headUuid": sg.Head, "anchorUuid": sg.Anchor, "tailUuid": sg.Tail}})
		if err == nil {
			e.Extra["compactMetadata"] = b
		}
	}
	return e
}

// NewChain makes the next entry the root of a new chain, as after /clear:
// a transcript read back then starts from there.
func (r *Recorder) NewChain() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.summaryNext = false
	r.w.SetLeaf("")
}
