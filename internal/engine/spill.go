package engine

import "github.com/agentloop/agentloop/internal/spill"

// bound keeps an oversized result out of the context: when the session
// has a results directory (Env.ResultsDir), a result of a call that ran
// whose text is over its tool's limit (tool.Info.MaxResultChars) is saved
// there and replaced by a preview with the file's path (package spill).
// It runs after the tool's hooks, before the result enters the history,
// so the stream, the transcript and the model all see the preview; the
// structured tool_use_result for the host is left whole.
func (r *run) bound(o *outcome) {
	if o.call == nil {
		return
	}
	e, ok := r.s.lookup(o.call.Name)
	if !ok {
		return
	}
	o.block, _ = spill.Apply(o.block, spill.Limit(e.info().MaxResultChars), r.s.cfg.Env.ResultsDir)
}
