package conversation

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

// RewindOptions is agentloop.RewindOptions as the session reads it; the fields are
// documented there.
type RewindOptions struct {
	DryRun bool
}

// RewindFilesResult is agentloop.RewindFilesResult as the session reads it; the fields are
// documented there.
type RewindFilesResult struct {
	CanRewind    bool     `json:"canRewind"`
	Error        string   `json:"error,omitempty"`
	FilesChanged []string `json:"filesChanged,omitempty"`
	Insertions   int      `json:"insertions,omitempty"`
	Deletions    int      `json:"deletions,omitempty"`
	SkippedLinks []string `json:"skippedLinks,omitempty"`
}

// fileCheckpoints is a session's checkpoint store.
type fileCheckpoints struct {
	store *checkpoint.Store
	temp  bool // the store's directory is removed at close
}

// setupCheckpoints opens the checkpoint store when checkpointing is on
// and makes the file tools save into it.
func (s *Session) setupCheckpoints() error {
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
func (s *Session) recordAll(m message.Message) {
	if s.ckpt != nil {
		s.beginCheckpoint(m)
	}
	s.record(m)
}

// beginCheckpoint starts the file checkpoint of m when it is a prompt's
// line. Not inlined: recordAll's frame is under the transcript's write,
// deep in a turn's stack (see engine's streamOnce).
//
//go:noinline
func (s *Session) beginCheckpoint(m message.Message) {
	if id, ok := promptLineID(m); ok {
		if err := s.ckpt.store.Begin(id); err != nil {
			s.diag.Add(DiagOption, fmt.Sprintf("file checkpoint for user message %s not started: %v", id, err))
		}
	}
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
func (s *Session) closeCheckpoints() {
	if s.ckpt == nil {
		return
	}
	s.ckpt.store.Close()
	if s.ckpt.temp {
		os.RemoveAll(s.ckpt.store.Dir())
	}
}

// RewindFiles is agentloop's Client.RewindFiles; see its doc there.
func (c *Client) RewindFiles(ctx context.Context, userMessageID string, opts *RewindOptions) (*RewindFilesResult, error) {
	if err := c.checkOpen(); err != nil {
		return nil, err
	}
	return c.sess.Rewind(ctx, userMessageID, opts)
}

// Rewind puts the files the session's tools changed back as they were
// when the user message userMessageID was sent (see Checkpoints); with
// opts.DryRun it only reports what it would change. It fails with
// ErrFileCheckpointingOff when the session keeps no checkpoints. It must
// not run while a turn does.
func (s *Session) Rewind(ctx context.Context, userMessageID string, opts *RewindOptions) (*RewindFilesResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.ckpt == nil {
		return nil, ErrFileCheckpointingOff
	}
	dry := opts != nil && opts.DryRun
	r, err := s.ckpt.store.Rewind(userMessageID, dry)
	if err != nil {
		return nil, fmt.Errorf("agentloop: rewinding files: %w", err)
	}
	return &RewindFilesResult{
		CanRewind: r.CanRewind, Error: r.Error, FilesChanged: r.FilesChanged,
		Insertions: r.Insertions, Deletions: r.Deletions, SkippedLinks: r.SkippedLinks,
	}, nil
}

// FileCheckpoints is agentloop's Client.FileCheckpoints; see its doc there.
func (c *Client) FileCheckpoints() []string { return c.sess.Checkpoints() }

// Checkpoints are the ids of the user messages Rewind can go back to,
// oldest first; nil when the session keeps no checkpoints.
func (s *Session) Checkpoints() []string {
	if s.ckpt == nil {
		return nil
	}
	return s.ckpt.store.Messages()
}
