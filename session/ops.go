package session

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
)

// forkDropped are the fields a fork clears.
var forkDropped = []string{"teamName", "agentName", "slug"}

// Fork copies a session into a new one in the same project directory and
// returns the new session id. It copies the non-sidechain conversation
// entries in file order, up to and including the entry upTo ("" for all),
// leaving out progress entries; gives every entry a new uuid and remaps
// parentUuid and logicalParentUuid to match; sets sessionId to the new id
// and forkedFrom to the original session and entry; clears teamName,
// agentName, slug and sourceToolAssistantUUID; sets the last entry's
// timestamp to now; copies content-replacement entries; and ends with a
// custom-title entry: the original's title (or summary) with " (fork)"
// appended. Cost state, file history and subagent transcripts are not
// copied.
func Fork(configDir, sessionID, upTo string) (string, error) {
	src, err := Find(configDir, sessionID)
	if err != nil {
		return "", err
	}
	t, err := Load(src)
	if err != nil {
		return "", err
	}
	newID := uuid.NewString()
	entries, err := forkBridged(t.Entries, t.bridge, sessionID, newID, upTo, time.Now())
	if err != nil {
		return "", err
	}
	title := "Forked session"
	if info, ok, err := ReadInfo(src); err == nil && ok {
		title = info.Summary
		if info.CustomTitle != "" {
			title = info.CustomTitle
		}
	}
	entries = append(entries, CustomTitleEntry(newID, title+" (fork)"))
	dst := filepath.Join(filepath.Dir(src), newID+".jsonl")
	if err := writeEntries(dst, entries, true); err != nil {
		return "", err
	}
	return newID, nil
}

// forkEntries returns the entries of a fork of a session.
func forkEntries(all []Entry, oldID, newID, upTo string, now time.Time) ([]Entry, error) {
	return forkBridged(all, nil, oldID, newID, upTo, now)
}

// forkBridged is forkEntries over a transcript read with skipped lines:
// bridge (see lines.bridge) links the entries after a skipped one to the
// chain before it.
func forkBridged(all []Entry, bridge map[string]string, oldID, newID, upTo string, now time.Time) ([]Entry, error) {
	src := all
	if upTo != "" {
		cut := -1
		for i, e := range all {
			if e.UUID == upTo && IsChainType(e.Type) {
				cut = i
				break
			}
		}
		if cut < 0 {
			return nil, fmt.Errorf("session: fork: no entry %s: %w", upTo, ErrNotFound)
		}
		src = all[:cut+1]
	}
	// New uuids; a dropped entry maps to its parent's new uuid.
	remap := map[string]string{}
	parentOf := map[string]string{}
	for from, to := range bridge {
		parentOf[from] = to
	}
	keep := map[string]bool{}
	for _, e := range src {
		if e.UUID == "" || !IsChainType(e.Type) {
			continue
		}
		parentOf[e.UUID] = e.ParentUUID
		if !e.IsSidechain && e.Type != TypeProgress {
			keep[e.UUID] = true
			remap[e.UUID] = uuid.NewString()
		}
	}
	var resolve func(id string, depth int) string
	resolve = func(id string, depth int) string {
		if id == "" || depth > len(parentOf) {
			return ""
		}
		if n, ok := remap[id]; ok {
			return n
		}
		if p, ok := parentOf[id]; ok {
			return resolve(p, depth+1)
		}
		return ""
	}
	var out []Entry
	for _, e := range src {
		switch {
		case IsChainType(e.Type) && e.UUID != "" && keep[e.UUID]:
			c := e.Clone()
			c.Raw = nil
			c.UUID = remap[e.UUID]
			c.ParentUUID = resolve(e.ParentUUID, 0)
			c.LogicalParentUUID = resolve(e.LogicalParentUUID, 0)
			c.SessionID = newID
			c.ForkedFrom = &ForkedFrom{SessionID: oldID, MessageUUID: e.UUID}
			c.SourceToolAssistantUUID = ""
			for _, k := range forkDropped {
				delete(c.Extra, k)
			}
			if len(c.Extra) == 0 {
				c.Extra = nil
			}
			out = append(out, c)
		case e.Type == "content-replacement":
			c := e.Clone()
			c.Raw = nil
			c.SessionID = newID
			out = append(out, c)
		}
	}
	for i := len(out) - 1; i >= 0; i-- {
		if IsChainType(out[i].Type) {
			out[i].Timestamp = Timestamp(now)
			break
		}
	}
	return out, nil
}

// writeEntries writes entries as a new file (excl) or appends them.
func writeEntries(path string, entries []Entry, excl bool) error {
	var buf bytes.Buffer
	for _, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	flag := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if excl {
		flag |= os.O_EXCL
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	f, err := os.OpenFile(path, flag, 0o600)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	_, err = f.Write(buf.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}

// appendTo appends entries to an existing transcript file. When no Writer
// holds the session, it takes the lock for the while and first removes a
// final line cut short by a crash. When a Writer holds it (the session is
// live), it appends without repairing anything: the final line may be that
// Writer's write still under way, and an O_APPEND write of whole lines
// lands after it.
func appendTo(path string, entries ...Entry) error {
	lock, err := tryLock(path)
	if err != nil {
		return err
	}
	defer lock.release()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	if lock != nil {
		if err := repair(f); err != nil {
			return fmt.Errorf("session: %s: %w", path, err)
		}
	}
	var buf bytes.Buffer
	for _, e := range entries {
		b, err := e.MarshalJSON()
		if err != nil {
			return fmt.Errorf("session: %w", err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	if _, err := f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	return f.Close()
}

// Rename gives a session a custom title by appending a custom-title entry.
func Rename(configDir, sessionID, title string) error {
	title = strings.TrimSpace(title)
	if title == "" {
		return errors.New("session: empty title")
	}
	p, err := Find(configDir, sessionID)
	if err != nil {
		return err
	}
	return appendTo(p, CustomTitleEntry(sessionID, title))
}

// Tag tags a session by appending a tag entry; "" clears the tag.
func Tag(configDir, sessionID, tag string) error {
	p, err := Find(configDir, sessionID)
	if err != nil {
		return err
	}
	return appendTo(p, TagEntry(sessionID, strings.TrimSpace(tag)))
}

// Delete removes a session's transcript and its directory (subagent
// transcripts). It returns an error wrapping [ErrNotFound] when the session
// does not exist.
func Delete(configDir, sessionID string) error {
	p, err := Find(configDir, sessionID)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("session: %w", err)
	}
	// A lock file left by a crash goes too; a live Writer's stays, and
	// that Writer removes it when it closes.
	if l, err := tryLock(p); err == nil && l != nil {
		l.release()
	}
	if err := os.RemoveAll(strings.TrimSuffix(p, ".jsonl")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("session: %w", err)
	}
	return nil
}
