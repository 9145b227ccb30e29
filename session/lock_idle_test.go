package session

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// A Writer that released its lock (an idle session) lets another Writer
// open the session; it cannot take the lock back, nor append, while that
// one holds it; once it can, Hold reports that the file grew, and its
// next entry continues its own chain (the file branches there).
func TestReleaseAndHold(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	path := filepath.Join(t.TempDir(), "s.jsonl")
	a, err := Create(path, Envelope{SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Append(PromptEntry("", "from A", "default")); err != nil {
		t.Fatal(err)
	}
	aLeaf := a.Leaf()
	if _, err := Open(path, Envelope{SessionID: "s"}); !errors.Is(err, ErrSessionBusy) {
		t.Fatalf("Open while A holds the lock: %v, want ErrSessionBusy", err)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	b, err := Open(path, Envelope{SessionID: "s"})
	if err != nil {
		t.Fatalf("Open while A is idle: %v", err)
	}
	if b.Transcript().Leaf != aLeaf {
		t.Errorf("B resumes from %q, want A's leaf %q", b.Transcript().Leaf, aLeaf)
	}
	if err := b.Append(PromptEntry("", "from B", "default")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Hold(); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("Hold while B holds the lock: %v, want ErrSessionBusy", err)
	}
	before, _ := os.ReadFile(path)
	if err := a.Append(PromptEntry("", "A while B holds", "default")); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("Append while B holds the lock: %v, want ErrSessionBusy", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("a refused Append wrote")
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	appended, err := a.Hold()
	if err != nil || !appended {
		t.Fatalf("Hold after B: appended %v, %v; want true, nil", appended, err)
	}
	if appended, _ := a.Hold(); appended {
		t.Error("a second Hold reports growth again")
	}
	if err := a.Append(PromptEntry("", "A again", "default")); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	last := tr.Entries[len(tr.Entries)-1]
	if last.ParentUUID != aLeaf {
		t.Errorf("A's entry after B has parent %q, want A's own leaf %q", last.ParentUUID, aLeaf)
	}
	// Released again, an Append takes the lock for that write alone.
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(PromptEntry("", "A idle write", "default")); err != nil {
		t.Fatalf("Append while released and free: %v", err)
	}
	c, err := Open(path, Envelope{SessionID: "s"})
	if err != nil {
		t.Fatalf("the lock stayed taken after a released Append: %v", err)
	}
	c.Close()
}
