package message

// WritesLost describes session data that was not written (a full disk, a
// file that became unwritable): the fields of the system/session_writes_lost
// message. A Result carries it when the run's transcript lost writes, so a
// caller that reads only the result sees the loss; a later resume of the
// session gets a truncated history.
type WritesLost struct {
	// ErrorCode is "ENOSPC" or "EDQUOT" when the failure was one of
	// those, "" otherwise.
	ErrorCode string `json:"error_code,omitempty"`
	// Lost names what was lost: "transcript".
	Lost []string `json:"lost"`
	// TranscriptSessionIDs are the sessions whose transcripts lost writes.
	TranscriptSessionIDs []string `json:"transcript_session_ids,omitempty"`
	// Error is the failure's text.
	Error string `json:"error"`
}
