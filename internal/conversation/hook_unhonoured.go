package conversation

import (
	"github.com/agentloop/agentloop/hooks"
)

// noteSessionStart reports the outputs of SessionStart hooks (run for
// source) that agentloop does not act on: initialUserMessage (a host
// sends its own prompts) and sessionTitle (transcripts carry no
// hook-given title yet). It returns st.
func (s *Session) noteSessionStart(source string, st hooks.SessionStartResult) hooks.SessionStartResult {
	if st.InitialUserMessage != "" {
		s.diag.Add(DiagHook, "SessionStart (source "+source+"): initialUserMessage is not honoured; send the prompt yourself")
	}
	if st.SessionTitle != "" {
		s.diag.Add(DiagHook, "SessionStart (source "+source+"): sessionTitle is not honoured; the session keeps its title")
	}
	return st
}

// promptTitle reports a UserPromptSubmit sessionTitle, which agentloop
// does not act on.
func (s *Session) promptTitle(r hooks.UserPromptSubmitResult) {
	if r.SessionTitle != "" {
		s.diag.Add(DiagHook, "UserPromptSubmit: sessionTitle is not honoured; the session keeps its title")
	}
}
