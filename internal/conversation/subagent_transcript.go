package conversation

import (
	"fmt"
	"log/slog"

	"github.com/agentloop/agentloop/internal/subagent"
	rec "github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
)

// subagentTranscript is the transcript of one subagent run, in the
// reference's layout: <session>/subagents/agent-<id>.jsonl beside the
// session's transcript, every line a sidechain line with the agent's id
// and the session's id, written by its own recorder (so also copied to
// Options.SessionStore, under the sub-key subagents/agent-<id>), and the
// agent-<id>.meta.json sidecar.
type subagentTranscript struct {
	s    *Session
	r    *rec.Recorder
	path string
	meta sessions.SubagentMeta
}

// openSubagentTranscript opens the transcript of the run of c that t
// describes (subagent.Spawner.Transcript). It returns nil when the session
// keeps no transcript (NoSessionPersistence) or when the file cannot be
// created; the latter is a diagnostic, and the subagent runs without one.
func (s *Session) openSubagentTranscript(c subagent.Child, t subagent.Task) subagent.Transcript {
	main := s.transcript
	if main == nil || main.w == nil {
		return nil
	}
	sid := main.w.SessionID()
	path := sessions.SubagentPath(main.w.Path(), t.ID)
	mdl := c.Model
	if mdl == "" {
		if e := s.engine(); e != nil {
			mdl = e.Model()
		}
	}
	shape := "foreground"
	if t.Background {
		shape = "background"
	}
	st := &subagentTranscript{s: s, path: path, meta: sessions.SubagentMeta{
		AgentType: t.Type, IsBuiltIn: c.BuiltIn, Description: t.Description,
		ToolUseID: t.ToolUseID, ParentAgentID: c.ParentAgentID, SpawnDepth: t.Depth, RequestShape: shape, Model: mdl}}
	failed := func(err error) subagent.Transcript {
		s.diag.Add(DiagTranscript, fmt.Sprintf("the transcript of subagent %s is not kept: %v", t.ID, err))
		return nil
	}
	w, err := sessions.Create(path, sessions.Envelope{SessionID: sid, Cwd: c.Cwd,
		Version: "agentloop " + Version, AgentID: t.ID, IsSidechain: true})
	if err != nil {
		return failed(err)
	}
	if err := sessions.WriteSubagentMeta(path, st.meta); err != nil {
		w.Close()
		return failed(err)
	}
	cfg := rec.Config{Writer: w, Mode: func() string { return string(s.currentMode()) },
		CloseTimeout: mirrorCloseTimeout, Sidechain: true}
	if o := s.opts; o.SessionStore != nil {
		cfg.Store = o.SessionStore
		cfg.Key = sessions.Key{ProjectKey: sessions.ProjectKey(s.env.Cwd), SessionID: sid,
			Subpath: "subagents/agent-" + t.ID}
		cfg.Notify = func(m message.Message) {
			if e := s.engine(); e != nil {
				e.Notify(m)
			}
		}
	}
	if st.r, err = rec.New(cfg); err != nil {
		w.Close()
		return failed(err)
	}
	return st
}

// Record writes one message of the subagent's history. A failed local
// write is reported once in the parent's stream, as the session's own.
func (st *subagentTranscript) Record(m message.Message) {
	notice := st.r.Record(m)
	if notice == nil {
		return
	}
	if l := st.r.WritesLost(); l != nil {
		st.s.diag.Log(DiagWritesLost, writesLostText(l), slog.String("error_code", l.ErrorCode),
			slog.String("path", st.path))
	}
	if e := st.s.engine(); e != nil {
		e.Notify(notice)
	}
}

// Close marks a run that ended by itself as finished in the sidecar, then
// closes the transcript (waiting, bounded, for its store copies).
func (st *subagentTranscript) Close(o subagent.Outcome) {
	if !o.Stopped && o.Err == nil {
		st.meta.Finished = true
		if err := sessions.WriteSubagentMeta(st.path, st.meta); err != nil {
			st.s.diag.Add(DiagTranscript, fmt.Sprintf("the sidecar of subagent transcript %s: %v", st.path, err))
		}
	}
	if err := st.r.Close(); err != nil {
		st.s.diag.Add(DiagSessionStore, err.Error())
	}
}
