package session

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"
)

// Key names a transcript in a [Store]: a session's main transcript
// (Subpath "") or one of its sub-transcripts, such as a subagent's
// ("subagents/agent-<id>").
type Key struct {
	// ProjectKey is the project directory name, see [ProjectKey].
	ProjectKey string
	SessionID  string
	// Subpath is a slash-separated relative path without extension.
	Subpath string
}

// Validate reports whether k can name a transcript: ProjectKey and
// SessionID are single path elements, Subpath a clean relative path.
func (k Key) Validate() error {
	if !pathElement(k.ProjectKey) {
		return fmt.Errorf("session: invalid project key %q", k.ProjectKey)
	}
	if !validID(k.SessionID) {
		return fmt.Errorf("session: invalid session id %q", k.SessionID)
	}
	if k.Subpath != "" {
		if path.IsAbs(k.Subpath) || path.Clean(k.Subpath) != k.Subpath || strings.Contains(k.Subpath, "\\") {
			return fmt.Errorf("session: invalid subpath %q", k.Subpath)
		}
		for _, el := range strings.Split(k.Subpath, "/") {
			if !pathElement(el) {
				return fmt.Errorf("session: invalid subpath %q", k.Subpath)
			}
		}
	}
	return nil
}

// pathElement reports whether s is a safe file name.
func pathElement(s string) bool {
	return s != "" && s != "." && s != ".." && !strings.ContainsAny(s, "/\\\x00") && len(s) <= 255
}

// StoreSession is a session a [Store] holds.
type StoreSession struct {
	SessionID string
	// ModTime is when the session's main transcript was last written.
	ModTime time.Time
}

// Store keeps transcripts somewhere other than the local disk, so that a
// session can be resumed on another host (see [Mirror] and [Restore]).
//
// Implementations must be safe for concurrent use. Run the conformance
// suite in package storetest against an implementation.
type Store interface {
	// Append adds entries to the transcript of key, in order. Entries
	// whose uuid the transcript already holds are skipped (uuid is an
	// idempotency key); entries without uuid are always added.
	Append(ctx context.Context, key Key, entries []Entry) error
	// Load returns the transcript's entries, deep-equal to those appended.
	// It returns nil, nil for a key never written.
	Load(ctx context.Context, key Key) ([]Entry, error)
	// List returns the sessions of a project that have a main transcript.
	List(ctx context.Context, projectKey string) ([]StoreSession, error)
	// Delete removes a transcript; deleting a main transcript (Subpath "")
	// removes its sub-transcripts too. Deleting what does not exist is
	// not an error.
	Delete(ctx context.Context, key Key) error
	// ListSubkeys returns the subpaths of a session's sub-transcripts.
	ListSubkeys(ctx context.Context, projectKey, sessionID string) ([]string, error)
}

// MemoryStore is a [Store] in memory. The zero value is ready to use; it
// is safe for concurrent use.
type MemoryStore struct {
	mu    sync.Mutex
	data  map[Key]*memTranscript
	now   func() time.Time
	watch memWatchers // watch.go
}

type memTranscript struct {
	entries []Entry
	uuids   map[string]bool
	mtime   time.Time
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

// Append implements Store.
func (s *MemoryStore) Append(ctx context.Context, key Key, entries []Entry) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.data == nil {
		s.data = map[Key]*memTranscript{}
	}
	t := s.data[key]
	if t == nil {
		t = &memTranscript{uuids: map[string]bool{}}
		s.data[key] = t
	}
	for _, e := range entries {
		if e.UUID != "" {
			if t.uuids[e.UUID] {
				continue
			}
			t.uuids[e.UUID] = true
		}
		t.entries = append(t.entries, e.Clone())
	}
	if s.now != nil {
		t.mtime = s.now()
	} else {
		t.mtime = time.Now()
	}
	s.watch.notify(key)
	return nil
}

// Load implements Store.
func (s *MemoryStore) Load(ctx context.Context, key Key) ([]Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.data[key]
	if t == nil {
		return nil, nil
	}
	out := make([]Entry, len(t.entries))
	for i, e := range t.entries {
		out[i] = e.Clone()
	}
	return out, nil
}

// List implements Store. Sessions are sorted most recent first.
func (s *MemoryStore) List(ctx context.Context, projectKey string) ([]StoreSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []StoreSession
	for k, t := range s.data {
		if k.ProjectKey == projectKey && k.Subpath == "" {
			out = append(out, StoreSession{SessionID: k.SessionID, ModTime: t.mtime})
		}
	}
	sortSessions(out)
	return out, nil
}

func sortSessions(s []StoreSession) {
	slices.SortFunc(s, func(a, b StoreSession) int {
		if c := b.ModTime.Compare(a.ModTime); c != 0 {
			return c
		}
		return strings.Compare(a.SessionID, b.SessionID)
	})
}

// Delete implements Store.
func (s *MemoryStore) Delete(ctx context.Context, key Key) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.data {
		if k == key || key.Subpath == "" && k.ProjectKey == key.ProjectKey && k.SessionID == key.SessionID {
			delete(s.data, k)
		}
	}
	return nil
}

// ListSubkeys implements Store. Subpaths are sorted.
func (s *MemoryStore) ListSubkeys(ctx context.Context, projectKey, sessionID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for k := range s.data {
		if k.ProjectKey == projectKey && k.SessionID == sessionID && k.Subpath != "" {
			out = append(out, k.Subpath)
		}
	}
	slices.Sort(out)
	return out, nil
}
