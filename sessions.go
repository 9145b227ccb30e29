package agentloop

import (
	"context"
	"fmt"

	"github.com/agentloop/agentloop/message"
	sessions "github.com/agentloop/agentloop/session"
)

// SessionInfo summarises a stored session: its id, what a list shows
// (Summary), its title, first prompt, working directory, git branch, tag
// and times. See package session's Info.
type SessionInfo = sessions.Info

// ListSessionsOptions select what [ListSessions] returns.
type ListSessionsOptions struct {
	// ConfigDir is where transcripts live, as Options.ConfigDir; empty
	// means $CLAUDE_CONFIG_DIR or ~/.claude.
	ConfigDir string
	// Limit is the most sessions returned, 0 for all; Offset skips that
	// many of the sorted list (for paging).
	Limit, Offset int
}

// ListSessions returns the sessions whose transcripts are stored for the
// working directory dir ("" for every directory), most recently modified
// first. Subagents' transcripts and sessions with nothing to show (no
// prompt, title or summary) are left out. It reads transcript files
// (Options.ConfigDir); sessions kept only in an Options.SessionStore are
// listed by the store's List. A negative Limit or Offset is an error.
func ListSessions(ctx context.Context, dir string, opts *ListSessionsOptions) ([]SessionInfo, error) {
	var o ListSessionsOptions
	if opts != nil {
		o = *opts
	}
	if o.Limit < 0 || o.Offset < 0 {
		return nil, fmt.Errorf("agentloop: ListSessions: Limit (%d) and Offset (%d) must not be negative: %w", o.Limit, o.Offset, ErrInvalidOption)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l, err := sessions.List(o.ConfigDir, dir, sessions.ListOptions{Limit: o.Limit, Offset: o.Offset})
	if err != nil {
		return nil, fmt.Errorf("agentloop: listing the sessions of %q: %w", dir, err)
	}
	return l, nil
}

// SessionMessagesOptions configure [SessionMessages].
type SessionMessagesOptions struct {
	// ConfigDir is where transcripts live; empty means the default, as in
	// ListSessionsOptions.
	ConfigDir string
}

// SessionMessages returns the conversation of a stored session, as a
// resume would see it: the user and assistant messages of its chain, in
// order, as UserMessage and AssistantMessage values (one per transcript
// line: an assistant reply written block by block comes back block by
// block; a user message carries prompts or tool results, with the tool's
// structured output in ToolUseResult). Meta and subagent entries are left
// out. An unknown id is an error wrapping session.ErrNotFound.
func SessionMessages(ctx context.Context, sessionID string, opts *SessionMessagesOptions) ([]Message, error) {
	var o SessionMessagesOptions
	if opts != nil {
		o = *opts
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := sessions.Find(o.ConfigDir, sessionID)
	if err != nil {
		return nil, fmt.Errorf("agentloop: reading session %q: %w", sessionID, err)
	}
	t, err := sessions.Load(p)
	if err != nil {
		return nil, fmt.Errorf("agentloop: reading session %q: %w", sessionID, err)
	}
	var out []Message
	for _, e := range t.Messages() {
		if e.Message == nil {
			continue
		}
		switch e.Type {
		case sessions.TypeAssistant:
			out = append(out, &message.Assistant{
				Message: message.APIMessage{ID: e.Message.ID, Type: e.Message.Type, Role: e.Message.Role,
					Model: e.Message.Model, Content: e.Message.Content,
					StopReason: e.Message.StopReason, StopSequence: e.Message.StopSequence},
				SessionID: e.SessionID, UUID: e.UUID, Timestamp: e.Timestamp, RequestID: e.RequestID,
			})
		case sessions.TypeUser:
			u := &message.User{
				Message:   message.UserContent{Role: e.Message.Role, Content: e.Message.Content},
				SessionID: e.SessionID, UUID: e.UUID, Timestamp: e.Timestamp,
			}
			if len(e.ToolUseResult) > 0 {
				u.ToolUseResult = e.ToolUseResult
			}
			out = append(out, u)
		}
	}
	return out, nil
}
