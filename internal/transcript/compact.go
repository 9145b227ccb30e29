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
	}
	_ = json.Unmarshal(m.Data["compact_metadata"], &md) // a malformed one still marks the boundary
	return session.CompactBoundaryEntry(md.Trigger, md.PreTokens, leaf)
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
