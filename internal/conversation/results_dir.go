package conversation

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentloop/agentloop/internal/permission"
	"github.com/google/uuid"
)

// Oversized tool results (internal/spill) are saved in the session's
// results directory, next to its transcript:
//
//	<config>/projects/<project>/<session>/tool-results/<tool_use_id>.txt
//
// beside <session>.jsonl and the <session>/subagents directory of the
// reference's layout. Without persistence the directory is a fresh
// temporary one, removed when the session closes. The session lets the
// Read tool (and Grep, Glob) read it without asking, so the model can follow
// the path a preview gives; deny rules still apply.

// resultsDirName is the directory's name inside the session's directory.
const resultsDirName = "tool-results"

// setupResultsDir sets env.ResultsDir. It runs after openTranscript and
// before the permission checker is built. It cannot fail today; the error
// is for a directory that must exist up front.
func (s *Session) setupResultsDir() error {
	if s.transcript != nil {
		base := strings.TrimSuffix(s.transcript.path, ".jsonl")
		s.env.ResultsDir = filepath.Join(base, resultsDirName)
		return nil
	}
	// Created by the first result saved (0700), under a random name no
	// other user can guess; nothing is left behind by a session that
	// saves nothing or fails to start.
	s.env.ResultsDir = filepath.Join(os.TempDir(), "agentloop-tool-results-"+uuid.NewString())
	s.tempResults = true
	return nil
}

// resultsReadRule is the session rule that lets the read tools read the
// results directory.
func (s *Session) resultsReadRule() (permission.SourceRules, bool) {
	if s.env.ResultsDir == "" {
		return permission.SourceRules{}, false
	}
	dir := filepath.ToSlash(s.env.ResultsDir)
	return permission.SourceRules{Source: permission.SourceSession,
		Allow: []string{"Read(/" + dir + "/**)"}}, true
}

// removeResultsDir removes a temporary results directory at close.
func (s *Session) removeResultsDir() {
	if !s.tempResults || s.env.ResultsDir == "" {
		return
	}
	// Most sessions save no oversized result and never made it: one
	// lstat tells, where RemoveAll would spend an unlink and an rmdir.
	if _, err := os.Lstat(s.env.ResultsDir); errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err := os.RemoveAll(s.env.ResultsDir); err != nil {
		s.diag.Add(DiagOption, "removing the temporary tool-results directory: "+err.Error())
	}
}
