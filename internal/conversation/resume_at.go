package conversation

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
	"github.com/google/uuid"
)

// Truncating resume (Options.ResumeSessionAt, ResumeDropsTurn).
//
// The loaded chain is cut after the named entry: the history sent to the
// model ends there, and the transcript writer's leaf is set to it, so the
// next entries branch off it. The file is not rewritten; the dropped
// entries stay in it, on a branch no longer followed.
//
// ResumeDropsTurn guards a retry: the host names the prompt whose turn it
// means to discard, and the resume is refused when the cut would discard
// anything else — an earlier entry of the conversation, or a later
// prompt. The refusal is not a start-up error but the run's result
// (error_during_execution, its error starting with
// resumeRejectedPrefix), as the reference reports it in print mode.

// resumeRejectedPrefix starts the error of a refused truncating resume.
const resumeRejectedPrefix = "Resume rejected by --resume-drops-turn: "

// cutAt applies Options.ResumeSessionAt to the loaded transcript tr: the
// copy it returns ends at that entry. An entry tr does not have is an
// ErrInvalidOption. With ResumeDropsTurn, a cut that would drop more than
// that turn leaves s.refusal set (the run then ends at once).
func (s *Session) cutAt(tr *sessions.Transcript) (*sessions.Transcript, error) {
	at := s.opts.ResumeSessionAt
	if tr == nil || at == "" {
		return tr, nil
	}
	if s.forkedAt { // the fork's entries have new uuids
		at = forkedUUID(tr, at)
	}
	cut, err := tr.At(at)
	if err != nil {
		if errors.Is(err, sessions.ErrNotFound) {
			return nil, fmt.Errorf("%w: ResumeSessionAt: session %s has no entry %s", ErrInvalidOption, s.env.SessionID, at)
		}
		return nil, fmt.Errorf("agentloop: resuming session %s at %s: %w", s.env.SessionID, at, err)
	}
	if turn := s.opts.ResumeDropsTurn; turn != "" && !s.forkedAt {
		s.refusal = checkDropsTurn(tr.Chain, cut.Chain, turn)
	}
	return cut, nil
}

// checkDropsTurn returns why dropping from full what kept leaves out is
// more than the turn of the prompt with uuid turn, or "" when it is not.
// The turn runs from that prompt to the next prompt of full (tool
// results and meta lines are no prompts); every message dropped must lie
// in it. Dropping nothing is fine.
func checkDropsTurn(full, kept []sessions.Entry, turn string) string {
	keep := make(map[string]bool, len(kept))
	for _, e := range kept {
		keep[e.UUID] = true
	}
	isPrompt := func(e sessions.Entry) bool {
		return e.Message != nil && !e.IsMeta && !e.IsSidechain && e.Type == "user" && !onlyToolResults(e.Message.Content)
	}
	exists := slices.ContainsFunc(full, func(e sessions.Entry) bool { return e.UUID == turn && isPrompt(e) })
	in := false  // inside the turn
	met := false // the turn's prompt was met
	for _, e := range full {
		if e.Message == nil || e.IsMeta || e.IsSidechain {
			continue
		}
		if isPrompt(e) {
			in = e.UUID == turn
			met = met || in
		}
		if !keep[e.UUID] && !in {
			if !exists {
				return fmt.Sprintf("it would discard %s entry %s, and the conversation has no prompt %s", e.Type, e.UUID, turn)
			}
			if !met {
				return fmt.Sprintf("it would discard %s entry %s, before the turn of prompt %s", e.Type, e.UUID, turn)
			}
			return fmt.Sprintf("it would discard %s entry %s, after the turn of prompt %s", e.Type, e.UUID, turn)
		}
	}
	return ""
}

// onlyToolResults reports whether a user message carries tool results
// (and nothing that makes it a prompt of its own).
func onlyToolResults(cs []model.Content) bool {
	if len(cs) == 0 {
		return false
	}
	for _, c := range cs {
		if c.Type != model.TypeToolResult {
			return false
		}
	}
	return true
}

// resumeRejection is the result of a run whose truncating resume was
// refused (see checkDropsTurn), nil when it was not.
func (s *Session) resumeRejection() *message.Result {
	if s.refusal == "" {
		return nil
	}
	return &message.Result{
		Subtype:           message.ResultErrorDuringExecution,
		IsError:           true,
		SessionID:         s.env.SessionID,
		Usage:             message.ResultUsage{Iterations: []json.RawMessage{}},
		ModelUsage:        map[string]message.ModelUsage{},
		PermissionDenials: []message.PermissionDenial{},
		Errors:            []string{resumeRejectedPrefix + s.refusal},
		UUID:              uuid.NewString(),
	}
}

// checkForkPoint checks ResumeSessionAt and ResumeDropsTurn against
// session id before it is forked: the fork gives its entries new uuids
// (each remembers the original's in ForkedFrom), so the fork is cut at
// the copy of the entry (forkedUUID) and not checked again.
func (s *Session) checkForkPoint(dir, id string) error {
	if s.opts.ResumeSessionAt == "" {
		return nil
	}
	path, err := sessions.Find(dir, id)
	if err != nil {
		return nil // Fork reports it
	}
	tr, err := sessions.Load(path)
	if err != nil {
		return fmt.Errorf("agentloop: reading session %s: %w", id, err)
	}
	saved := s.env.SessionID
	s.env.SessionID = id
	_, err = s.cutAt(tr)
	s.env.SessionID = saved
	if err != nil {
		return err
	}
	s.forkedAt = true
	return nil
}

// forkedUUID is the uuid, in the fork tr, of the original's entry at; at
// itself when no entry of tr was copied from it.
func forkedUUID(tr *sessions.Transcript, at string) string {
	for _, e := range tr.Entries {
		if e.ForkedFrom != nil && e.ForkedFrom.MessageUUID == at {
			return e.UUID
		}
	}
	return at
}
