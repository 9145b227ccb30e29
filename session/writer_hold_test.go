package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
)

// heldFiles returns the open descriptors of this process on path or its
// lock file; nil where /proc/self/fd is not there.
func heldFiles(path string) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range ents {
		t, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name()))
		if err == nil && (t == path || t == lockPath(path)) {
			out = append(out, t)
		}
	}
	return out
}

func reply(tag string) Entry {
	return AssistantEntry(&message.Assistant{Message: message.APIMessage{ID: "msg_" + tag, Type: "message",
		Role: "assistant", Model: "claude-x", Content: []model.Content{model.TextBlock(tag)}}})
}

// exists reports whether path is there.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// A prepared Writer creates nothing, not even its directory, until its
// first write; a deferred entry does not create the file either, and
// goes out ahead of the first write. Each write lets the file and the
// lock go again.
func TestPrepareCreatesNothingUntilWritten(t *testing.T) {
	const id = "55555555-5555-4555-8555-555555555555"
	path := filepath.Join(t.TempDir(), "projects", "-w", id+".jsonl")
	w := Prepare(path, Envelope{SessionID: id, Cwd: "/w"})
	w.Defer(CustomTitleEntry(id, "Named"))
	if exists(filepath.Dir(path)) {
		t.Fatal("Prepare created the directory")
	}
	if err := w.Sync(); err != nil || exists(path) {
		t.Fatalf("Sync of an unwritten transcript: %v, created: %v", err, exists(path))
	}
	if err := w.Append(PromptEntry("", "hi", "default"), reply("hello")); err != nil {
		t.Fatal(err)
	}
	if got := heldFiles(path); len(got) != 0 {
		t.Errorf("after a write the Writer still holds %v", got)
	}
	if exists(lockPath(path)) {
		t.Error("after a write the lock file is still there")
	}
	if err := w.Append(PromptEntry("", "again", "default")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range tr.Entries {
		got = append(got, e.Type)
	}
	want := []string{TypeCustomTitle, TypeUser, TypeAssistant, TypeUser}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	if tr.Leaf != tr.Entries[3].UUID || tr.Entries[3].ParentUUID != tr.Entries[2].UUID {
		t.Errorf("the chain is broken across writes: %+v", tr.Entries)
	}
	if err := w.Append(reply("late")); err == nil {
		t.Error("Append after Close succeeded")
	}

	// Closed unwritten, with a deferred entry: nothing is created.
	other := filepath.Join(t.TempDir(), "x", id+".jsonl")
	w = Prepare(other, Envelope{SessionID: id})
	w.Defer(CustomTitleEntry(id, "Named"))
	if err := w.Close(); err != nil || exists(filepath.Dir(other)) {
		t.Errorf("Close of an unwritten transcript: %v, created: %v", err, exists(filepath.Dir(other)))
	}
}

// Lock holds the file and the lock across writes until Release; while
// held, a second writer is refused; after Release it is not, and the
// first goes on with its own chain after repairing what the second left
// half written.
func TestLockReleaseAndAnotherWriter(t *testing.T) {
	const id = "66666666-6666-4666-8666-666666666666"
	path := filepath.Join(t.TempDir(), id+".jsonl")
	env := Envelope{SessionID: id, Cwd: "/w"}
	a := Prepare(path, env)
	if err := a.Lock(); err != nil {
		t.Fatal(err)
	}
	if !exists(path) || !exists(lockPath(path)) {
		t.Fatal("Lock did not create the transcript and take its lock")
	}
	if err := a.Append(PromptEntry("", "a1", "default"), reply("a1")); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && len(heldFiles(path)) != 2 {
		t.Errorf("a locked Writer holds %v, want the file and its lock", heldFiles(path))
	}
	if b, err := Open(path, env); !errors.Is(err, ErrSessionBusy) {
		if err == nil {
			b.Close()
		}
		t.Fatalf("Open while locked: %v, want ErrSessionBusy", err)
	}
	if err := a.Release(); err != nil {
		t.Fatal(err)
	}
	if got := heldFiles(path); len(got) != 0 {
		t.Errorf("after Release the Writer holds %v", got)
	}
	aLeaf := a.Leaf()

	// Another writer takes the idle session, appends, and dies in the
	// middle of a line.
	b, err := Open(path, env)
	if err != nil {
		t.Fatalf("Open of a released session: %v", err)
	}
	if err := b.Append(PromptEntry("", "b1", "default")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	fmt.Fprint(f, `{"type":"assistant","uuid":"cut`)
	f.Close()

	if a.Branched() {
		t.Error("Branched before a took the file again")
	}
	if err := a.Append(PromptEntry("", "a2", "default")); err != nil {
		t.Fatal(err)
	}
	if !a.Branched() || a.Branched() {
		t.Error("Branched does not report, once, that another writer wrote meanwhile")
	}
	a.Close()
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), `"cut`) {
		t.Error("the half-written line was not repaired")
	}
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Warnings) != 0 {
		t.Errorf("warnings: %v", tr.Warnings)
	}
	last := tr.Entries[len(tr.Entries)-1]
	if last.Message.Content[0].Text != "a2" || last.ParentUUID != aLeaf || tr.Leaf != last.UUID {
		t.Errorf("the first writer's entry after the second's: %+v (parent %s, want its own leaf %s)", last, last.ParentUUID, aLeaf)
	}
}

// A Writer that took the session while another process holds it is
// refused with ErrSessionBusy naming that process; once that process has
// let go, the write goes through.
func TestTakeWhileAnotherProcessHolds(t *testing.T) {
	if !locksWork {
		t.Skip("no advisory locks on this platform")
	}
	const id = "77777777-7777-4777-8777-777777777777"
	path := filepath.Join(t.TempDir(), "projects", "-w", id+".jsonl")
	w := Prepare(path, Envelope{SessionID: id, Cwd: "/w"})
	if err := w.Append(PromptEntry("", "first", "default")); err != nil {
		t.Fatal(err)
	}
	h := startHelper(t, path, "wait", "H", 1)
	if got := h.line(t); got != "locked" {
		t.Fatalf("helper: %q", got)
	}
	err := w.Append(reply("while held"))
	if !errors.Is(err, ErrSessionBusy) || !strings.Contains(err.Error(), fmt.Sprint(h.cmd.Process.Pid)) {
		t.Errorf("Append while another process holds the session: %v, want ErrSessionBusy naming it", err)
	}
	if err := w.Lock(); !errors.Is(err, ErrSessionBusy) {
		t.Errorf("Lock while another process holds the session: %v, want ErrSessionBusy", err)
	}
	fmt.Fprintln(h.stdin, "go")
	if code, out := h.wait(t); code != 0 {
		t.Fatalf("helper exited %d: %s", code, out)
	}
	if err := w.Append(reply("after")); err != nil {
		t.Fatalf("Append after the other process ended: %v", err)
	}
	w.Close()
	tr, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr.Entries); n != 4 || len(tr.Warnings) != 0 {
		t.Errorf("%d entries (warnings %v), want first, H's round and after", n, tr.Warnings)
	}
}
