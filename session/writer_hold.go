package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// When a Writer holds its file and the session's lock.
//
// A Writer takes the file and the lock for a write and, unless asked to
// keep them, lets them go once the write is done, so that a session
// nobody writes to costs no descriptor and no lock: a process may keep
// many such sessions, and another process may resume one of them between
// its writes. [Writer.Lock] takes them and keeps them until
// [Writer.Release] (a run of several writes pays for the lock once).
// Create and Open take them at once and keep them; [Prepare] creates
// nothing until the first write.
//
// The lock still excludes two writers at once. When another writer
// appended to the file while this one held nothing, this one repairs the
// file's end (that writer may have died mid-line) and goes on with its
// own chain: its next entry's parent is its own last entry, so the file
// then holds two branches of the conversation, each whole; a later
// resume follows the one written last.

// holdState is the Writer's part of that policy, guarded by its mu.
type holdState struct {
	keep     bool        // keep the file and lock after a write (Lock, Create, Open)
	create   bool        // the file is yet to be created, exclusively (Prepare)
	mark     os.FileInfo // the file as this Writer left it, to see another writer's appends
	deferred []Entry     // entries to write ahead of the next write's (Defer)
	others   bool        // another writer changed the file since this one let it go (Branched)
}

// Prepare returns a Writer of a new transcript at path that creates
// nothing yet: its first write creates the file (and its directory),
// failing if the file exists, under the session's lock. Until then it
// holds no descriptor, and a transcript never written is never created.
func Prepare(path string, env Envelope) *Writer {
	w := newWriter(nil, path, env)
	w.hold.create = true
	return w
}

// Lock takes the file and the session's lock now, unless the Writer holds
// them, and keeps them until Release, instead of letting them go after
// each write: a run of writes that must not start while another process
// writes the session calls it first. It fails with an error wrapping
// [ErrSessionBusy] while another writer holds the lock; after Prepare it
// creates the file.
func (w *Writer) Lock() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return errors.New("session: writer is closed")
	}
	if err := w.take(); err != nil {
		return err
	}
	w.hold.keep = true
	return nil
}

// Release closes the file and releases the session's lock, if held, and
// ends a Lock: each later write takes them again and lets them go after
// it. The Writer stays usable; the file is not repaired or re-read
// unless another writer changed it meanwhile.
func (w *Writer) Release() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.hold.keep = false
	return w.let()
}

// Defer queues entries to be written, in the same write, ahead of the
// next Append's: an entry that belongs in the transcript but should not
// create it (a session's custom title, say). Close writes them when the
// file exists already.
func (w *Writer) Defer(entries ...Entry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range entries {
		w.hold.deferred = append(w.hold.deferred, e.Clone())
	}
}

// take opens the file and takes the session's lock for a write, unless
// the Writer holds them already: every write and Lock come here, and
// nothing else takes the lock after Create and Open. an error wraps [ErrSessionBusy] while another writer
// writes. A file another writer appended to meanwhile is repaired, as
// Open does; a new transcript (Prepare) is created.
func (w *Writer) take() error {
	if w.f != nil {
		return nil
	}
	if w.hold.create {
		if err := os.MkdirAll(filepath.Dir(w.path), 0o700); err != nil {
			return fmt.Errorf("session: %w", err)
		}
	}
	lock, err := acquireLock(w.path, w.env.SessionID)
	if err != nil {
		return err
	}
	flag := os.O_RDWR | os.O_CREATE | os.O_APPEND
	if w.hold.create {
		flag |= os.O_EXCL
	}
	f, err := os.OpenFile(w.path, flag, 0o600)
	if err != nil {
		lock.release()
		return fmt.Errorf("session: %w", err)
	}
	if !w.hold.create && w.changed(f) {
		w.dirty = true // repaired by the write that follows
		w.hold.others = w.hold.others || w.hold.mark != nil
	}
	w.f, w.lock, w.hold.create = f, lock, false
	return nil
}

// Branched reports, once, whether another writer changed the file while
// this one held nothing (since the last call): this Writer's entries then
// go on with its own chain, so the transcript branches there, and a
// caller may want to say so.
func (w *Writer) Branched() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	b := w.hold.others
	w.hold.others = false
	return b
}

// changed reports whether the file f is not as this Writer left it:
// another writer appended to, replaced or cut it meanwhile.
func (w *Writer) changed(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || w.hold.mark == nil {
		return true
	}
	return !os.SameFile(fi, w.hold.mark) || fi.Size() != w.hold.mark.Size()
}

// done ends a write: the file and the lock are let go unless kept.
func (w *Writer) done() error {
	if w.hold.keep {
		return nil
	}
	return w.let()
}

// let closes the file and releases the lock, noting the file's state for
// the next take.
func (w *Writer) let() error {
	if w.f == nil {
		return nil
	}
	w.hold.mark = nil
	if fi, err := w.f.Stat(); err == nil {
		w.hold.mark = fi
	}
	err := w.f.Close()
	w.f = nil
	if lerr := w.lock.release(); lerr != nil {
		err = errors.Join(err, fmt.Errorf("session: releasing the lock: %w", lerr))
	}
	w.lock = nil
	if err != nil {
		return fmt.Errorf("session: closing %s: %w", w.path, err)
	}
	return nil
}
