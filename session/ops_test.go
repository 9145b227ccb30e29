package session

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestFork(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	const src = "11111111-1111-4111-8111-111111111111"
	p := Path(config, cwd, src)
	copyTestdata(t, "tools.jsonl", p)
	orig, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		upTo  string
		count int // conversation entries copied
	}{
		{"whole session", "", 10},
		{"up to the first tool result", "a0000007-0000-4000-8000-000000000007", 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now().Add(-time.Second)
			id, err := Fork(config, src, tc.upTo)
			if err != nil {
				t.Fatal(err)
			}
			fp, err := Find(config, id)
			if err != nil || filepath.Dir(fp) != filepath.Dir(p) {
				t.Fatalf("fork at %s, %v; want beside %s", fp, err, p)
			}
			fork, err := Load(fp)
			if err != nil {
				t.Fatal(err)
			}
			var conv []Entry
			for _, e := range fork.Entries {
				if IsChainType(e.Type) {
					conv = append(conv, e)
				}
			}
			if len(conv) != tc.count {
				t.Fatalf("%d conversation entries copied, want %d", len(conv), tc.count)
			}
			last := fork.Entries[len(fork.Entries)-1]
			if last.Type != TypeCustomTitle || last.CustomTitle != "List the files and read notes.txt (fork)" || last.SessionID != id {
				t.Errorf("last entry = %+v, want the fork's custom title", last)
			}
			// Every uuid is new; the content and the shape of the chain are kept.
			oldUUIDs := map[string]bool{}
			for _, e := range orig.Entries {
				if e.UUID != "" {
					oldUUIDs[e.UUID] = true
				}
			}
			newOf := map[string]string{}
			for i, e := range conv {
				if oldUUIDs[e.UUID] || e.UUID == "" {
					t.Errorf("entry %d keeps uuid %q", i, e.UUID)
				}
				if e.ForkedFrom == nil || e.ForkedFrom.SessionID != src || !oldUUIDs[e.ForkedFrom.MessageUUID] {
					t.Errorf("entry %d forkedFrom = %+v", i, e.ForkedFrom)
					continue
				}
				newOf[e.ForkedFrom.MessageUUID] = e.UUID
				if e.SessionID != id {
					t.Errorf("entry %d session = %s, want %s", i, e.SessionID, id)
				}
			}
			for i, e := range conv {
				old := findEntry(orig.Entries, e.ForkedFrom.MessageUUID)
				if want := newOf[old.ParentUUID]; e.ParentUUID != want {
					t.Errorf("entry %d parent = %s, want %s", i, e.ParentUUID, want)
				}
				ignore := cmpopts.IgnoreFields(Entry{}, "UUID", "ParentUUID", "SessionID", "ForkedFrom", "SourceToolAssistantUUID", "Raw", "Timestamp")
				if diff := cmp.Diff(old, e, ignore, cmpJSON); diff != "" {
					t.Errorf("entry %d content changed (-original +fork):\n%s", i, diff)
				}
				if e.SourceToolAssistantUUID != "" {
					t.Errorf("entry %d keeps sourceToolAssistantUUID", i)
				}
				if i < len(conv)-1 && e.Timestamp != old.Timestamp {
					t.Errorf("entry %d timestamp changed", i)
				}
			}
			ts, _ := time.Parse(time.RFC3339, conv[len(conv)-1].Timestamp)
			if ts.Before(before) {
				t.Errorf("last entry's timestamp %s is not now", conv[len(conv)-1].Timestamp)
			}
			// The fork's history is the original's, up to the cut.
			at, _ := orig.At(conv[len(conv)-1].ForkedFrom.MessageUUID)
			if diff := cmp.Diff(at.History(), fork.History(), cmpJSON); diff != "" {
				t.Errorf("fork history (-original +fork):\n%s", diff)
			}
		})
	}
	if _, err := Fork(config, src, "no-such-entry"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Fork up to an unknown entry = %v, want ErrNotFound", err)
	}
	if _, err := Fork(config, "22222222-2222-4222-8222-222222222222", ""); !errors.Is(err, ErrNotFound) {
		t.Errorf("Fork of an unknown session = %v, want ErrNotFound", err)
	}
}

func findEntry(es []Entry, uuid string) Entry {
	for _, e := range es {
		if e.UUID == uuid {
			return e
		}
	}
	return Entry{}
}

func TestForkDropsSidechainAndProgress(t *testing.T) {
	all := []Entry{
		{Type: TypeUser, UUID: "u1", Message: &Message{Role: "user"}},
		{Type: TypeProgress, UUID: "p1", ParentUUID: "u1"},
		{Type: TypeAssistant, UUID: "a1", ParentUUID: "p1", Message: &Message{Role: "assistant"}, Extra: map[string]json.RawMessage{"slug": json.RawMessage(`"s"`)}},
		{Type: TypeUser, UUID: "s1", ParentUUID: "a1", IsSidechain: true},
		{Type: TypeSystem, UUID: "c1", LogicalParentUUID: "a1", Subtype: SubtypeCompactBoundary},
	}
	out, err := forkEntries(all, "old", "new", "", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 3 || out[0].UUID == "u1" {
		t.Fatalf("fork = %+v", out)
	}
	if out[1].ParentUUID != out[0].UUID {
		t.Errorf("the entry after a dropped progress entry has parent %s, want %s", out[1].ParentUUID, out[0].UUID)
	}
	if out[1].Extra != nil {
		t.Errorf("slug kept: %s", out[1].Extra)
	}
	if out[2].ParentUUID != "" || out[2].LogicalParentUUID != out[1].UUID {
		t.Errorf("compact boundary links = %q, %q", out[2].ParentUUID, out[2].LogicalParentUUID)
	}
}

func TestRenameTagDelete(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	const id = "33333333-3333-4333-8333-333333333333"
	p := Path(config, cwd, id)
	copyTestdata(t, "branched.jsonl", p)
	info := func() Info {
		t.Helper()
		l, err := List(config, cwd, ListOptions{})
		if err != nil || len(l) != 1 {
			t.Fatalf("List = %v, %v", l, err)
		}
		return l[0]
	}
	if i := info(); i.CustomTitle != "Colours" || i.Tag != "palette" || i.Summary != "Colours" {
		t.Errorf("before: %+v", i)
	}
	if err := Rename(config, id, "  Warm colours "); err != nil {
		t.Fatal(err)
	}
	if err := Tag(config, id, "art"); err != nil {
		t.Fatal(err)
	}
	if i := info(); i.CustomTitle != "Warm colours" || i.Tag != "art" || i.Summary != "Warm colours" {
		t.Errorf("after rename and tag: %+v", i)
	}
	if err := Tag(config, id, ""); err != nil {
		t.Fatal(err)
	}
	if i := info(); i.Tag != "" {
		t.Errorf("after clearing the tag: %+v", i)
	}
	if err := Rename(config, id, " "); err == nil {
		t.Error("Rename to an empty title succeeded")
	}
	b, _ := os.ReadFile(p)
	if !strings.HasSuffix(string(b), `{"type":"tag","tag":"","sessionId":"`+id+`"}`+"\n") {
		t.Errorf("file ends %q", string(b)[len(b)-80:])
	}
	// The rebuilt history is untouched by metadata entries.
	tr, err := Load(p)
	if err != nil || len(tr.History()) != 4 {
		t.Errorf("history after metadata = %v, %v", tr, err)
	}

	sub := SubagentPath(p, "x1")
	os.MkdirAll(filepath.Dir(sub), 0o700)
	os.WriteFile(sub, nil, 0o600)
	if err := Delete(config, id); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{p, strings.TrimSuffix(p, ".jsonl")} {
		if _, err := os.Stat(q); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still exists", q)
		}
	}
	if err := Delete(config, id); !errors.Is(err, ErrNotFound) {
		t.Errorf("second Delete = %v, want ErrNotFound", err)
	}
	if err := Rename(config, "../../etc/passwd", "x"); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Rename with a path for an id = %v, want an invalid id error", err)
	}
}
