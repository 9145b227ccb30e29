package agentloop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentloop/agentloop/internal/checkpoint"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	sessions "github.com/agentloop/agentloop/session"
)

// File checkpointing (Options.EnableFileCheckpointing): before Write, Edit
// or NotebookEdit change a file, the session saves the file's prior state
// once per user message, and Client.RewindFiles puts the files back as they
// were before a message. The store is internal/checkpoint, kept in
// <ConfigDir>/file-history/<session id>/ (a temporary directory, removed
// at the end, with NoSessionPersistence).
//
// A user message is a prompt's user line: its uuid (message.User.UUID in
// the transcript, the uuid Client.Send returns or was given) names the
// checkpoint. Subagents share the session's hook, so their edits are saved
// under the user message that is current when they happen.

// envFileCheckpointing turns file checkpointing on, as the TypeScript SDK
// sets it for enableFileCheckpointing.
const envFileCheckpointing = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"

// ErrFileCheckpointingOff is returned by Client.RewindFiles when the
// session saves no file checkpoints (Options.EnableFileCheckpointing).
var ErrFileCheckpointingOff = errors.New("agentloop: file checkpointing is not enabled")

// RewindOptions are Client.RewindFiles's options; nil means none.
type RewindOptions struct {
	// DryRun reports what a rewind would change without changing it.
	DryRun bool
}

// RewindFilesResult is what Client.RewindFiles did (or, on a dry run,
// would do): the reference's RewindFilesResult.
type RewindFilesResult struct {
	// CanRewind is false when the user message has no checkpoint (an
	// unknown id, or one from before checkpointing was on); Error says so.
	CanRewind bool `json:"canRewind"`
	// Error says why nothing could be rewound, or which files could not
	// be restored.
	Error string `json:"error,omitempty"`
	// FilesChanged are the files restored or removed (on a dry run: that
	// would be), as physical paths, sorted.
	FilesChanged []string `json:"filesChanged,omitempty"`
	// Insertions and Deletions count the lines the rewind adds to and
	// removes from those files.
	Insertions int `json:"insertions,omitempty"`
	Deletions  int `json:"deletions,omitempty"`
	// SkippedLinks are files left alone because a symbolic link now
	// stands on their path (the file, or a directory above it): a rewind
	// never follows a link.
	SkippedLinks []string `json:"skippedLinks,omitempty"`
}

// fileCheckpoints is a session's checkpoint store.
type fileCheckpoints struct {
	store *checkpoint.Store
	temp  bool // the store's directory is removed at close
}

// setupCheckpoints opens the checkpoint store when checkpointing is on
// and makes the file tools save into it.
func (s *session) setupCheckpoints() error {
	on := s.opts.EnableFileCheckpointing
	if !on && os.Getenv(envFileCheckpointing) == "true" {
		if s.opts.SessionStore != nil {
			s.diag.Add(DiagOption, envFileCheckpointing+" is ignored: file checkpointing cannot be combined with Options.SessionStore")
			return nil
		}
		on = true
	}
	if !on {
		return nil
	}
	if !checkpoint.Supported {
		s.diag.Add(DiagOption, "file checkpointing is ignored: it needs a Unix system, so no file is saved and RewindFiles has nothing to rewind")
		return nil
	}
	ck := &fileCheckpoints{}
	var dir string
	if s.opts.NoSessionPersistence {
		d, err := os.MkdirTemp("", "agentloop-file-history-")
		if err != nil {
			return fmt.Errorf("agentloop: file checkpoints: %w", err)
		}
		dir, ck.temp = d, true
	} else {
		base := s.configDir
		if base == "" {
			if base = s.opts.ConfigDir; base == "" {
				base = sessions.DefaultConfigDir()
			}
		}
		dir = filepath.Join(base, "file-history", s.env.SessionID)
	}
	st, err := checkpoint.Open(dir)
	if err != nil {
		if ck.temp {
			os.RemoveAll(dir)
		}
		return fmt.Errorf("agentloop: file checkpoints: %w", err)
	}
	ck.store = st
	s.ckpt = ck
	s.env.BeforeFileChange = st.Snapshot
	return nil
}

// recordAll is the engine's recorder: each user message that opens a
// turn starts a checkpoint, then the transcript records the message.
func (s *session) recordAll(m message.Message) {
	if s.ckpt != nil {
		if id, ok := promptLineID(m); ok {
			if err := s.ckpt.store.Begin(id); err != nil {
				s.diag.Add(DiagOption, fmt.Sprintf("file checkpoint for user message %s not started: %v", id, err))
			}
		}
	}
	s.record(m)
}

// promptLineID returns the uuid of a prompt's user line: a user message of
// the main conversation that is neither synthetic (hook context, a
// summary) nor a tool result.
func promptLineID(m message.Message) (string, bool) {
	u, ok := m.(*message.User)
	if !ok || u.IsSynthetic || u.ParentToolUseID != nil || u.UUID == "" {
		return "", false
	}
	for _, b := range u.Message.Content {
		if b.Type == model.TypeToolResult {
			return "", false
		}
	}
	return u.UUID, true
}

// closeCheckpoints releases the store, removing a temporary one.
func (s *session) closeCheckpoints() {
	if s.ckpt == nil {
		return
	}
	s.ckpt.store.Close()
	if s.ckpt.temp {
		os.RemoveAll(s.ckpt.store.Dir())
	}
}

// RewindFiles puts the files that Write, Edit and NotebookEdit changed
// since the user message userMessageID back as they were before it:
// files created since then are removed, changed ones get their content
// and permission bits back. Files changed by other means (Bash, the user)
// are not touched unless those tools also changed them; the conversation
// is not rewound. A file on whose path a symbolic link now stands is left
// alone and listed in SkippedLinks. With opts.DryRun nothing changes and
// the result says what would.
//
// An id the session has no checkpoint for gives a result with CanRewind
// false. It returns ErrFileCheckpointingOff when checkpointing is off,
// ErrClosed after Close, and ctx's error when ctx is done. It may be
// called while a query runs.
func (c *Client) RewindFiles(ctx context.Context, userMessageID string, opts *RewindOptions) (*RewindFilesResult, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if c.sess.ckpt == nil {
		return nil, ErrFileCheckpointingOff
	}
	dry := opts != nil && opts.DryRun
	r, err := c.sess.ckpt.store.Rewind(userMessageID, dry)
	if err != nil {
		return nil, fmt.Errorf("agentloop: rewinding files: %w", err)
	}
	return &RewindFilesResult{
		CanRewind: r.CanRewind, Error: r.Error, FilesChanged: r.FilesChanged,
		Insertions: r.Insertions, Deletions: r.Deletions, SkippedLinks: r.SkippedLinks,
	}, nil
}

// FileCheckpoints returns the ids of the user messages RewindFiles can
// rewind to, oldest first: the uuids of the prompts' user lines since
// checkpointing began (those of a resumed session's earlier prompts
// included). It is nil when checkpointing is off.
func (c *Client) FileCheckpoints() []string {
	if c.sess.ckpt == nil {
		return nil
	}
	return c.sess.ckpt.store.Messages()
}
