package session

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/agentloop/agentloop/model"
	"github.com/google/uuid"
)

// Defaults of the envelope fields.
const (
	DefaultEntrypoint = "sdk-go"
	DefaultUserType   = "external"
)

// Envelope holds the context fields the Writer sets on the conversation
// entries it appends when the entry leaves them empty.
type Envelope struct {
	SessionID string
	Cwd       string
	// Version is the writer's version, e.g. "agentloop 0.1.0".
	Version   string
	GitBranch string
	// UserType defaults to "external", Entrypoint to "sdk-go".
	UserType   string
	Entrypoint string
	// AgentID and IsSidechain are set for a subagent's transcript.
	AgentID     string
	IsSidechain bool
}

// Writer appends entries to a transcript file. It is safe for concurrent
// use.
//
// Each Append writes its entries as whole lines in one write to a file
// opened with O_APPEND. The Writer keeps the chain: a conversation entry
// appended without ParentUUID gets the uuid of the previous conversation
// entry (a compact boundary starts a new chain instead).
//
// The file is written only while the Writer holds the session's advisory
// lock (see [ErrSessionBusy]): one session has one writer at a time, in
// this process and across processes, so two processes cannot interleave
// their entries, and only the lock's holder ever repairs the file. A crash
// releases the lock with the process. A Writer from Create or Open holds
// the file and the lock from then until Close or [Writer.Release]; one
// from [Prepare], or after Release, takes them for each write and lets
// them go after it unless [Writer.Lock] took them to keep (writer_hold.go).
type Writer struct {
	mu       sync.Mutex
	f        *os.File // nil while the Writer holds nothing
	lock     *sessionLock
	loaded   *Transcript // what Open read under the lock; nil after Create
	path     string
	env      Envelope
	leaf     string
	toolUses map[string]string // tool_use id → uuid of its assistant entry
	dirty    bool              // a write failed; the file may end in a partial line
	now      func() time.Time
	closed   bool
	hold     holdState // when the file and lock are taken and let go (writer_hold.go)
}

// Create creates a new transcript file (and its directory), failing if the
// file exists, and takes the session's lock until Close or
// [Writer.Release] (an error wrapping [ErrSessionBusy] if another Writer
// holds it). [Prepare] creates nothing until the first write.
func Create(path string, env Envelope) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	lock, err := acquireLock(path, env.SessionID)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		lock.release()
		return nil, fmt.Errorf("session: %w", err)
	}
	w := newWriter(f, path, env)
	w.lock = lock
	w.hold.keep = true
	return w, nil
}

// Open opens a transcript file for appending, creating it (and its
// directory) if needed, and takes the session's lock until Close or
// [Writer.Release]. When another Writer holds the lock, in this process or
// another, Open fails at once with an error wrapping [ErrSessionBusy],
// naming the session and its holder, and leaves the file alone.
//
// Holding the lock, it makes the file end with a complete line (a final
// line cut short by a crash is removed, one that lacks only its newline is
// completed) and reads the transcript as [Load] does to continue its
// chain: the next conversation entry's parent is the transcript's leaf,
// as when a session is resumed. Malformed lines are skipped and reported
// in [Writer.Transcript]'s Warnings; an empty file is not an error here.
func Open(path string, env Envelope) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	lock, err := acquireLock(path, env.SessionID)
	if err != nil {
		return nil, err
	}
	w, err := openLocked(path, env)
	if err != nil {
		lock.release()
		return nil, err
	}
	w.lock = lock
	w.hold.keep = true
	return w, nil
}

// openLocked is Open once the lock is held.
func openLocked(path string, env Envelope) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	// Read before the repair, so that Warnings name a cut final line too;
	// the entries are the same either way.
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("session: %w", err)
	}
	t := parseBytes(data, path)
	t.Path = path
	if err := repair(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("session: %s: %w", path, err)
	}
	w := newWriter(f, path, env)
	w.loaded = t
	w.leaf = t.Leaf
	for _, e := range t.Entries {
		w.track(e)
	}
	return w, nil
}

func newWriter(f *os.File, path string, env Envelope) *Writer {
	if env.UserType == "" {
		env.UserType = DefaultUserType
	}
	if env.Entrypoint == "" {
		env.Entrypoint = DefaultEntrypoint
	}
	return &Writer{f: f, path: path, env: env, now: time.Now}
}

// repair makes f end with a complete line: a final line without its
// newline is completed when it is a valid entry and cut off otherwise.
// Only the holder of the file's lock may call it: the final line of a file
// that a live Writer holds may be a write still under way.
func repair(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	if size == 0 {
		return nil
	}
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return err
	}
	if last[0] == '\n' {
		return nil
	}
	// Find the start of the final line.
	start := int64(0)
	buf := make([]byte, 64*1024)
	for end := size; end > 0 && start == 0; {
		off := max(end-int64(len(buf)), 0)
		n, err := f.ReadAt(buf[:end-off], off)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			start = off + int64(i) + 1
			break
		}
		end = off
	}
	tail := make([]byte, size-start)
	if _, err := f.ReadAt(tail, start); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	if _, err := ParseEntry(tail); err == nil {
		_, err := f.Write([]byte{'\n'})
		return err
	}
	return f.Truncate(start)
}

// Path returns the file's path.
func (w *Writer) Path() string { return w.path }

// Transcript returns the transcript Open read while holding the lock,
// before any repair (its Warnings name the lines it skipped), or nil for a
// Writer from Create. It is not updated by Append. Resume from it rather
// than from an earlier [Load]: another writer may have appended between
// the two.
func (w *Writer) Transcript() *Transcript { return w.loaded }

// SessionID returns the envelope's session id.
func (w *Writer) SessionID() string { return w.env.SessionID }

// Leaf returns the uuid of the last conversation entry: the parent of the
// next one.
func (w *Writer) Leaf() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.leaf
}

// SetLeaf makes uuid the parent of the next conversation entry, to
// continue from an earlier point (resumeSessionAt) or start a new root ("").
func (w *Writer) SetLeaf(uuid string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.leaf = uuid
}

// Append writes entries as lines, in one write. Before writing it fills in,
// on copies, what the entries leave empty: on conversation entries the
// envelope, uuid, timestamp and parentUuid (the chain), and on tool-result
// user entries sourceToolAssistantUUID; on last-prompt, cost-state,
// custom-title, ai-title and tag entries the session id; on last-prompt
// entries leafUuid. Entries with Raw set are written verbatim.
func (w *Writer) Append(entries ...Entry) error {
	_, err := w.appendEntries(entries)
	return err
}

// appendEntries is Append returning the entries as written.
func (w *Writer) appendEntries(entries []Entry) ([]Entry, error) {
	if len(entries) == 0 {
		return nil, nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, errors.New("session: writer is closed")
	}
	if err := w.take(); err != nil {
		return nil, err
	}
	out, err := w.writeLocked(entries)
	if derr := w.done(); err == nil && derr != nil {
		return nil, derr
	}
	return out, err
}

// writeLocked is appendEntries once the file is open: it writes the
// deferred entries (writer_hold.go) and then entries, and returns the
// latter as written.
func (w *Writer) writeLocked(entries []Entry) ([]Entry, error) {
	if w.dirty {
		if err := repair(w.f); err != nil {
			return nil, fmt.Errorf("session: %s: %w", w.path, err)
		}
		w.dirty = false
	}
	leaf := w.leaf
	var pending map[string]string
	deferred := w.hold.deferred
	all := entries
	if len(deferred) > 0 {
		all = append(slices.Clip(deferred), entries...)
	}
	out := make([]Entry, len(all))
	var buf bytes.Buffer
	for i := range all {
		var err error
		if leaf, pending, err = w.writeOne(&all[i], &out[i], leaf, pending, &buf); err != nil {
			return nil, fmt.Errorf("session: entry %d (%s): %w", i, all[i].Type, err)
		}
	}
	if _, err := w.f.Write(buf.Bytes()); err != nil {
		w.dirty = true
		return nil, fmt.Errorf("session: %w", err)
	}
	w.leaf = leaf
	for k, v := range pending {
		w.noteToolUse(k, v)
	}
	w.hold.deferred = nil
	return out[len(deferred):], nil
}

// writeOne encodes a copy of src, its empty fields filled after leaf,
// into buf and into *dst, noting its tool calls in pending (made when
// nil); it returns the new leaf and pending. Entries go by pointer, and
// this is a function of its own (not inlined): a transcript is written
// deep in a turn's stack, where each Entry copied in writeLocked's frame
// would add to the stack every session's goroutine grows to.
//
//go:noinline
func (w *Writer) writeOne(src, dst *Entry, leaf string, pending map[string]string, buf *bytes.Buffer) (string, map[string]string, error) {
	src.cloneTo(dst)
	e := dst
	if len(e.Raw) == 0 {
		leaf = w.fill(e, leaf, pending)
	} else if IsChainType(e.Type) && e.UUID != "" {
		leaf = e.UUID
	}
	if e.Type == TypeAssistant && e.Message != nil {
		for _, c := range e.Message.Content {
			if c.Type == model.TypeToolUse && e.UUID != "" {
				if pending == nil {
					pending = map[string]string{}
				}
				pending[c.ID] = e.UUID
			}
		}
	}
	b, err := e.marshal()
	if err != nil {
		return leaf, pending, err
	}
	buf.Write(b)
	buf.WriteByte('\n')
	return leaf, pending, nil
}

// fill sets the empty fields of e and returns the new leaf.
func (w *Writer) fill(e *Entry, leaf string, pending map[string]string) string {
	switch e.Type {
	case TypeLastPrompt:
		if e.LeafUUID == "" {
			e.LeafUUID = leaf
		}
		fallthrough
	case TypeCostState, TypeCustomTitle, TypeAITitle, TypeTag:
		if e.SessionID == "" {
			e.SessionID = w.env.SessionID
		}
	}
	if !IsChainType(e.Type) {
		return leaf
	}
	env := w.env
	set := func(dst *string, v string) {
		if *dst == "" {
			*dst = v
		}
	}
	set(&e.SessionID, env.SessionID)
	set(&e.Cwd, env.Cwd)
	set(&e.Version, env.Version)
	set(&e.GitBranch, env.GitBranch)
	set(&e.UserType, env.UserType)
	set(&e.Entrypoint, env.Entrypoint)
	set(&e.AgentID, env.AgentID)
	e.IsSidechain = e.IsSidechain || env.IsSidechain
	set(&e.UUID, uuid.NewString())
	set(&e.Timestamp, Timestamp(w.now()))
	if e.ParentUUID == "" && !(e.Type == TypeSystem && e.Subtype == SubtypeCompactBoundary) {
		e.ParentUUID = leaf
	}
	if e.Type == TypeUser && e.Message != nil && e.SourceToolAssistantUUID == "" {
		for _, c := range e.Message.Content {
			if c.Type != model.TypeToolResult {
				continue
			}
			if u, ok := pending[c.ToolUseID]; ok {
				e.SourceToolAssistantUUID = u
			} else if u, ok := w.toolUses[c.ToolUseID]; ok {
				e.SourceToolAssistantUUID = u
			}
			break
		}
	}
	return e.UUID
}

// noteToolUse records the uuid of the assistant entry of tool use id; the
// map is made by the first (a session that calls no tool keeps none).
func (w *Writer) noteToolUse(id, uuid string) {
	if w.toolUses == nil {
		w.toolUses = map[string]string{}
	}
	w.toolUses[id] = uuid
}

// track records the tool uses of an entry read from the file.
func (w *Writer) track(e Entry) {
	if e.Type != TypeAssistant || e.Message == nil || e.UUID == "" {
		return
	}
	for _, c := range e.Message.Content {
		if c.Type == model.TypeToolUse {
			w.noteToolUse(c.ID, e.UUID)
		}
	}
}

// Sync commits what was written to stable storage. A Writer that holds
// nothing opens the file for it (nothing to do when it was never created).
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.hold.create {
		return nil
	}
	if w.f != nil {
		return w.f.Sync()
	}
	f, err := os.Open(w.path)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	return f.Sync()
}

// Close closes the file and releases the session's lock. Appending
// afterwards fails. Entries still deferred (writer_hold.go) are written
// first when the file exists; a transcript never written is not created.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	var err error
	if len(w.hold.deferred) > 0 && !w.hold.create {
		if err = w.take(); err == nil {
			_, err = w.writeLocked(nil)
		}
	}
	w.closed = true
	if rerr := w.let(); err == nil {
		err = rerr
	}
	return err
}
