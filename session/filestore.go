package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// FileStore is a [Store] that keeps transcripts as JSONL files in the
// local layout: <configDir>/projects/<ProjectKey>/<SessionID>.jsonl, and
// sub-transcripts at <SessionID>/<Subpath>.jsonl. Point it at a directory
// other than the one the session's own Writer uses (a shared mount, say),
// or mirrored entries are written twice.
//
// It is safe for concurrent use. Several FileStores on one directory (in
// this process or in others, on a shared mount say) serialise their
// appends and reads through an advisory lock on each file (flock, on
// Unix), so idempotency by uuid holds across them and a Load never sees
// another's append half done. Where there is no flock, only the calls of
// one FileStore are serialised.
type FileStore struct {
	root  string
	mu    sync.Mutex
	known map[Key]*fileIndex
}

// fileIndex is what a FileStore knows of a file: the uuids in its first
// size bytes.
type fileIndex struct {
	file  os.FileInfo // the file indexed, to notice it was replaced
	size  int64
	uuids map[string]bool
}

// NewFileStore returns a FileStore keeping transcripts under
// <configDir>/projects.
func NewFileStore(configDir string) *FileStore {
	return &FileStore{root: ProjectsDir(configDir), known: map[Key]*fileIndex{}}
}

// path returns the file of key.
func (s *FileStore) path(k Key) string {
	if k.Subpath == "" {
		return filepath.Join(s.root, k.ProjectKey, k.SessionID+".jsonl")
	}
	return filepath.Join(s.root, k.ProjectKey, k.SessionID, filepath.FromSlash(k.Subpath)+".jsonl")
}

// Append implements Store.
func (s *FileStore) Append(ctx context.Context, key Key, entries []Entry) error {
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
	p := s.path(key)
	f, err := s.openLocked(ctx, p)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := repair(f); err != nil {
		return fmt.Errorf("session: %s: %w", p, err)
	}
	idx, err := s.index(key, f)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	added := map[string]bool{}
	for _, e := range entries {
		if e.UUID != "" {
			if idx.uuids[e.UUID] || added[e.UUID] {
				continue
			}
			added[e.UUID] = true
		}
		b, err := e.MarshalJSON()
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if buf.Len() == 0 {
		return nil
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		delete(s.known, key)
		return fmt.Errorf("session: %w", err)
	}
	for u := range added {
		idx.uuids[u] = true
	}
	idx.size += int64(buf.Len())
	return nil
}

// openLocked opens the transcript at p for appending, creating it, under
// an exclusive lock: another FileStore on the same directory (another
// process, say) waits until the file is closed, or until ctx is done. A file that a Delete
// removed while this one waited for the lock is not written to: the new
// one at p is opened instead.
func (s *FileStore) openLocked(ctx context.Context, p string) (*os.File, error) {
	for range 100 {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the directory was removed meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("session: %w", err)
		}
		if err := lockFile(ctx, f, true); err != nil {
			f.Close()
			return nil, fmt.Errorf("session: locking %s: %w", p, err)
		}
		held, err1 := f.Stat()
		named, err2 := os.Stat(p)
		if err1 == nil && err2 == nil && os.SameFile(held, named) {
			return f, nil
		}
		f.Close()
		if err1 != nil {
			return nil, fmt.Errorf("session: %w", err1)
		}
	}
	return nil, fmt.Errorf("session: %s keeps being removed while appending", p)
}

// index brings the index of key up to date with the file.
func (s *FileStore) index(key Key, f *os.File) (*fileIndex, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	idx := s.known[key]
	if idx == nil || idx.file == nil || !os.SameFile(idx.file, fi) || fi.Size() < idx.size {
		// New, or replaced or cut by someone else: read it all.
		idx = &fileIndex{uuids: map[string]bool{}, file: fi}
		s.known[key] = idx
	}
	if fi.Size() == idx.size {
		return idx, nil
	}
	b := make([]byte, fi.Size()-idx.size)
	if _, err := f.ReadAt(b, idx.size); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("session: %w", err)
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		var head struct {
			UUID string `json:"uuid"`
		}
		if json.Unmarshal(line, &head) == nil && head.UUID != "" {
			idx.uuids[head.UUID] = true
		}
	}
	idx.size = fi.Size()
	return idx, nil
}

// Load implements Store.
func (s *FileStore) Load(ctx context.Context, key Key) ([]Entry, error) {
	if err := key.Validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.path(key)
	data, err := readLocked(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	entries, _, err := parseLines(data, p)
	if err != nil {
		return nil, err
	}
	if entries == nil {
		entries = []Entry{}
	}
	return entries, nil
}

// List implements Store. Sessions are sorted most recent first.
func (s *FileStore) List(ctx context.Context, projectKey string) ([]StoreSession, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !pathElement(projectKey) {
		return nil, fmt.Errorf("session: invalid project key %q", projectKey)
	}
	des, err := os.ReadDir(filepath.Join(s.root, projectKey))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var out []StoreSession
	for _, de := range des {
		n := de.Name()
		id := strings.TrimSuffix(n, ".jsonl")
		if de.IsDir() || id == n || !validID(id) {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue
		}
		out = append(out, StoreSession{SessionID: id, ModTime: fi.ModTime()})
	}
	sortSessions(out)
	return out, nil
}

// Delete implements Store.
func (s *FileStore) Delete(ctx context.Context, key Key) error {
	if err := key.Validate(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.known {
		if k == key || key.Subpath == "" && k.ProjectKey == key.ProjectKey && k.SessionID == key.SessionID {
			delete(s.known, k)
		}
	}
	p := s.path(key)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session: %w", err)
	}
	if key.Subpath == "" {
		err := os.RemoveAll(filepath.Join(s.root, key.ProjectKey, key.SessionID))
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		return nil
	}
	if err := os.Remove(metaPath(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// readLocked reads the file at p under a shared lock, so that it sees no
// append of another FileStore half done.
func readLocked(ctx context.Context, p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := lockFile(ctx, f, false); err != nil {
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	return io.ReadAll(f)
}

// ListSubkeys implements Store. Subpaths are sorted.
func (s *FileStore) ListSubkeys(ctx context.Context, projectKey, sessionID string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := (Key{ProjectKey: projectKey, SessionID: sessionID}).Validate(); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.root, projectKey, sessionID)
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		out = append(out, filepath.ToSlash(strings.TrimSuffix(rel, ".jsonl")))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	slices.Sort(out)
	return out, nil
}
