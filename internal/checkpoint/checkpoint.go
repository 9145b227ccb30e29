// Package checkpoint keeps the prior state of the files the file tools
// change, per user message, so that the files can be put back as they
// were before a message (Client.RewindFiles).
//
// A [Store] lives in one directory:
//
//	<dir>/index.jsonl        one JSON line per event, appended
//	<dir>/blobs/<sha256>     file contents, named by their SHA-256
//
// [Store.Begin] marks the start of a user message (a prompt's user line,
// by its uuid); [Store.Snapshot] is called by Write, Edit and NotebookEdit
// with the physical path of a file just before they change it, and saves
// the file's state (content and permission bits, or "did not exist") the
// first time the file is touched under the current message. Later changes
// under the same message save nothing, and equal contents share one blob,
// so the store holds at most one copy of each distinct content.
//
// [Store.Rewind] restores every file touched under a message or any later
// one to its state before that message. It never follows a symbolic link:
// a file, or a directory on its path, that is now a link is left alone and
// reported in [Result.SkippedLinks]; new content goes to a temporary file
// in the file's own directory, renamed over the file.
package checkpoint

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/internal/nofollow"
)

// MaxFileSize is the largest file a snapshot saves. A larger file makes
// Snapshot fail, and the tool refuses the change rather than make one
// that could not be undone.
const MaxFileSize = 256 << 20

// indexName is the name of the store's index file.
const indexName = "index.jsonl"

// event is one line of the index: the start of a user message (Path
// empty) or the saved state of a file under the message.
type event struct {
	Message string      `json:"m"`
	Path    string      `json:"p,omitempty"`
	Exists  bool        `json:"e,omitempty"`
	Mode    fs.FileMode `json:"mode,omitempty"`
	Blob    string      `json:"b,omitempty"`
}

// state is a file's saved state: absent, or content (by blob) and mode.
type state struct {
	exists bool
	mode   fs.FileMode
	blob   string
}

// Store is the checkpoint store of one session. Its methods are safe for
// concurrent use.
type Store struct {
	dir string

	mu      sync.Mutex
	current string                      // the message snapshots go to; "" before the first
	order   []string                    // messages, oldest first
	saved   map[string]map[string]state // message → physical path → state before the message
	index   *os.File                    // opened on the first write
}

// Open returns the store kept in dir, loading what an earlier run of the
// same session saved there (a resumed session can rewind to its earlier
// messages). The directory is created on the first write.
func Open(dir string) (*Store, error) {
	s := &Store{dir: dir, saved: map[string]map[string]state{}}
	data, err := os.ReadFile(filepath.Join(dir, indexName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return s, nil
	case err != nil:
		return nil, fmt.Errorf("checkpoint: reading the index: %w", err)
	}
	for _, e := range parseIndex(data) {
		s.apply(e)
	}
	return s, nil
}

// Dir is the directory the store keeps its files in.
func (s *Store) Dir() string { return s.dir }

// parseIndex reads the index's lines. A line that does not decode, or
// holds an impossible event, is skipped: a torn last line after a crash
// costs that one snapshot only.
func parseIndex(data []byte) []event {
	var out []event
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Message == "" {
			continue
		}
		if e.Path != "" && (!filepath.IsAbs(e.Path) || filepath.Clean(e.Path) != e.Path) {
			continue
		}
		if e.Exists && !validBlob(e.Blob) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// validBlob reports whether name is a SHA-256 in lower-case hex, so that
// a blob name from the index can never reach outside the blobs directory.
func validBlob(name string) bool {
	if len(name) != sha256.Size*2 {
		return false
	}
	_, err := hex.DecodeString(name)
	return err == nil && name == hexLower(name)
}

func hexLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// apply adds one event to the in-memory state; the caller holds mu or
// owns s.
func (s *Store) apply(e event) {
	if e.Path == "" {
		if _, ok := s.saved[e.Message]; !ok {
			s.order = append(s.order, e.Message)
			s.saved[e.Message] = map[string]state{}
		}
		s.current = e.Message
		return
	}
	files, ok := s.saved[e.Message]
	if !ok {
		return // a snapshot of a message never begun: not ours
	}
	if _, dup := files[e.Path]; !dup {
		files[e.Path] = state{exists: e.Exists, mode: e.Mode.Perm(), blob: e.Blob}
	}
}

// Begin makes id the current user message: the snapshots that follow
// belong to it. Beginning a message the store already knows makes it
// current again without forgetting what it saved.
func (s *Store) Begin(id string) error {
	if id == "" {
		return errors.New("checkpoint: empty user message id")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.saved[id]; ok {
		s.current = id
		return nil
	}
	if err := s.appendEvent(event{Message: id}); err != nil {
		return err
	}
	s.apply(event{Message: id})
	return nil
}

// Current returns the current user message id, "" before the first.
func (s *Store) Current() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Messages returns the user message ids the store knows, oldest first.
func (s *Store) Messages() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.order)
}

// Snapshot saves the state of the file at path (absolute, clean and
// physical: no symbolic link on it) before a tool changes it, unless the
// current message saved it already. Nothing is saved before the first
// message, for a directory or other non-regular file (the tool refuses to
// write those), or for a path on which a symbolic link now stands (the
// tool's own no-follow open refuses it). An error means the state could
// not be saved; the caller should not change the file.
func (s *Store) Snapshot(path string) error {
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return fmt.Errorf("checkpoint: %q is not an absolute clean path", path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current == "" {
		return nil
	}
	if _, done := s.saved[s.current][path]; done {
		return nil
	}
	cur, err := readState(path)
	if err != nil {
		if errors.Is(err, nofollow.ErrLink) || errors.Is(err, errNotRegular) {
			return nil
		}
		return fmt.Errorf("checkpoint: saving %s: %w", path, err)
	}
	e := event{Message: s.current, Path: path, Exists: cur.exists}
	if cur.exists {
		e.Mode = cur.mode
		e.Blob, err = s.putBlob(cur.data)
		if err != nil {
			return err
		}
	}
	if err := s.appendEvent(e); err != nil {
		return err
	}
	s.apply(e)
	return nil
}

// putBlob stores data under its SHA-256 unless a blob has it already.
func (s *Store) putBlob(data []byte) (string, error) {
	sum := sha256.Sum256(data)
	name := hex.EncodeToString(sum[:])
	dir := filepath.Join(s.dir, "blobs")
	p := filepath.Join(dir, name)
	if _, err := os.Lstat(p); err == nil {
		return name, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("checkpoint: creating the blob directory: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("checkpoint: saving a blob: %w", err)
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("checkpoint: saving a blob: %w", err)
	}
	return name, nil
}

// blob returns a stored content, checked against its name.
func (s *Store) blob(name string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(s.dir, "blobs", name))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: reading a saved content: %w", err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != name {
		return nil, fmt.Errorf("checkpoint: the saved content %s is damaged", name)
	}
	return data, nil
}

// appendEvent writes one index line; the caller holds mu.
func (s *Store) appendEvent(e event) error {
	if s.index == nil {
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return fmt.Errorf("checkpoint: creating the store: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(s.dir, indexName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("checkpoint: opening the index: %w", err)
		}
		s.index = f
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := s.index.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("checkpoint: writing the index: %w", err)
	}
	return nil
}

// Close closes the index file. The store stays readable; a later write
// reopens it.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.index == nil {
		return nil
	}
	err := s.index.Close()
	s.index = nil
	return err
}

// Result is what a rewind did, or would do on a dry run.
type Result struct {
	// CanRewind is false when the message is unknown (Error says why).
	CanRewind bool
	// Error explains a refusal, or lists the files that could not be
	// restored.
	Error string
	// FilesChanged are the files restored (or, on a dry run, that would
	// be), physical paths, sorted.
	FilesChanged []string
	// Insertions and Deletions count the lines the rewind adds to and
	// removes from those files.
	Insertions, Deletions int
	// SkippedLinks are the files left alone because a symbolic link now
	// stands on their path, sorted.
	SkippedLinks []string
}

// Rewind puts every file touched under message id or a later one back in
// its state before id: a file that did not exist is removed, any other
// gets its saved content and permission bits. With dryRun nothing is
// changed and the result says what would be. An unknown id gives a result
// with CanRewind false; the error is for failures of the store itself.
func (s *Store) Rewind(id string, dryRun bool) (Result, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := slices.Index(s.order, id)
	if at < 0 {
		return Result{Error: fmt.Sprintf("no file checkpoint for user message %q", id)}, nil
	}
	targets := map[string]state{}
	for _, m := range s.order[at:] {
		for p, st := range s.saved[m] {
			if _, seen := targets[p]; !seen {
				targets[p] = st
			}
		}
	}
	paths := make([]string, 0, len(targets))
	for p := range targets {
		paths = append(paths, p)
	}
	slices.Sort(paths)

	res := Result{CanRewind: true}
	var failed []string
	for _, p := range paths {
		want := targets[p]
		var data []byte
		if want.exists {
			var err error
			if data, err = s.blob(want.blob); err != nil {
				failed = append(failed, fmt.Sprintf("%s: %v", p, err))
				continue
			}
		}
		cur, err := readState(p)
		switch {
		case errors.Is(err, nofollow.ErrLink):
			res.SkippedLinks = append(res.SkippedLinks, p)
			continue
		case err != nil:
			failed = append(failed, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		if cur.exists == want.exists && (!want.exists || cur.mode == want.mode && bytes.Equal(cur.data, data)) {
			continue // already as it was
		}
		if !dryRun {
			if err := restore(p, want.exists, data, want.mode); err != nil {
				if errors.Is(err, nofollow.ErrLink) {
					res.SkippedLinks = append(res.SkippedLinks, p)
				} else {
					failed = append(failed, fmt.Sprintf("%s: %v", p, err))
				}
				continue
			}
		}
		ins, del := lineDiff(cur.data, data)
		res.Insertions += ins
		res.Deletions += del
		res.FilesChanged = append(res.FilesChanged, p)
	}
	if len(failed) > 0 {
		res.Error = "some files were not restored: " + joinLines(failed)
	}
	return res, nil
}

func joinLines(s []string) string {
	var b bytes.Buffer
	for i, x := range s {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(x)
	}
	return b.String()
}

// current is a file's state on disk.
type current struct {
	exists bool
	mode   fs.FileMode
	data   []byte
}

// errNotRegular: the path names a directory or another non-regular file.
// (nofollow.ErrLink: a symbolic link stands on the path, the file
// included.)
var errNotRegular = errors.New("not a regular file")
