package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// writeSession writes a session of cwd with entries and sets its mtime.
func writeSession(t *testing.T, config, cwd, id string, mtime time.Time, env Envelope, entries ...Entry) string {
	t.Helper()
	p := Path(config, cwd, id)
	env.SessionID, env.Cwd = id, cwd
	w, err := Create(p, env)
	if err != nil {
		t.Fatal(err)
	}
	w.now = func() time.Time { return time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC) }
	if err := w.Append(entries...); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestListAndLatest(t *testing.T) {
	config, cwd, other := t.TempDir(), t.TempDir(), t.TempDir()
	base := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	id := func(n string) string { return "00000000-0000-4000-8000-0000000000" + n }
	long := strings.Repeat("é", 250)
	toolResult := &message.User{Message: message.UserContent{Role: "user", Content: []model.Content{
		{Type: model.TypeToolResult, ToolUseID: "t1", Text: "out"}}}}

	writeSession(t, config, cwd, id("01"), base.Add(1*time.Minute), Envelope{GitBranch: "main"},
		PromptEntry("", "First question", "default"),
		AssistantEntry(assistantMsg("m1", "", model.TextBlock("Answer"), "end_turn")),
		LastPromptEntry("First question", ""))
	writeSession(t, config, cwd, id("02"), base.Add(3*time.Minute), Envelope{GitBranch: "main"},
		PromptEntry("", "<command-name>/clear</command-name>", "default"),
		UserEntry(toolResult, ""),
		PromptEntry("", long, "default"),
		CustomTitleEntry("", "Old title"),
		CustomTitleEntry("", "Named session"),
		TagEntry("", "important"))
	// Branch changes over the session: the last one counts.
	p3 := writeSession(t, config, cwd, id("03"), base.Add(2*time.Minute), Envelope{GitBranch: "dev"},
		PromptEntry("", "Tagged then untagged", "default"),
		TagEntry("", "x"), TagEntry("", ""))
	w, _ := Open(p3, Envelope{SessionID: id("03"), Cwd: cwd, GitBranch: "feature"})
	w.Append(PromptEntry("", "more", "default"), SummaryEntry("A summary", ""))
	w.Close()
	os.Chtimes(p3, base.Add(2*time.Minute), base.Add(2*time.Minute))
	// Nothing to show: left out.
	writeSession(t, config, cwd, id("04"), base.Add(4*time.Minute), Envelope{},
		UserEntry(toolResult, ""))
	// A sidechain transcript: left out.
	writeSession(t, config, cwd, id("05"), base.Add(5*time.Minute), Envelope{IsSidechain: true},
		PromptEntry("", "side", "default"))
	// Another project.
	writeSession(t, config, other, id("06"), base.Add(6*time.Minute), Envelope{},
		PromptEntry("", "elsewhere", "default"))

	got, err := List(config, cwd, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	want := []Info{{
		SessionID: id("02"), Summary: "Named session", CustomTitle: "Named session",
		FirstPrompt: strings.Repeat("é", 200) + "…", GitBranch: "main", Cwd: cwd, Tag: "important",
		LastModified: base.Add(3 * time.Minute), CreatedAt: created,
	}, {
		SessionID: id("03"), Summary: "A summary", FirstPrompt: "Tagged then untagged",
		GitBranch: "feature", Cwd: cwd, LastModified: base.Add(2 * time.Minute), CreatedAt: created,
	}, {
		SessionID: id("01"), Summary: "First question", FirstPrompt: "First question",
		GitBranch: "main", Cwd: cwd, LastModified: base.Add(1 * time.Minute), CreatedAt: created,
	}}
	opts := cmp.Options{cmpopts.IgnoreFields(Info{}, "FileSize", "Path"), cmpopts.EquateApproxTime(time.Millisecond)}
	if diff := cmp.Diff(want, got, opts); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	for _, i := range got {
		if i.FileSize == 0 || i.Path != Path(config, cwd, i.SessionID) {
			t.Errorf("%s: size %d path %s", i.SessionID, i.FileSize, i.Path)
		}
	}

	page, _ := List(config, cwd, ListOptions{Offset: 1, Limit: 1})
	if len(page) != 1 || page[0].SessionID != id("03") {
		t.Errorf("List offset 1 limit 1 = %v", page)
	}
	all, _ := List(config, "", ListOptions{})
	if len(all) != 4 || all[0].SessionID != id("06") {
		t.Errorf("List of every project = %d sessions, first %v", len(all), all)
	}

	latest, err := Latest(config, cwd)
	if err != nil || latest.SessionID != id("02") {
		t.Errorf("Latest = %v, %v; want %s", latest.SessionID, err, id("02"))
	}
	if _, err := Latest(config, filepath.Join(cwd, "nowhere")); !errors.Is(err, ErrNotFound) {
		t.Errorf("Latest of a directory without sessions = %v, want ErrNotFound", err)
	}
}

func TestListLargeTranscript(t *testing.T) {
	config, cwd := t.TempDir(), t.TempDir()
	id := "00000000-0000-4000-8000-000000000099"
	entries := []Entry{PromptEntry("", "The very first prompt", "default")}
	for i := 0; i < 400; i++ {
		entries = append(entries, AssistantEntry(assistantMsg("m", "", model.TextBlock(strings.Repeat("y", 500)), "end_turn")))
	}
	entries = append(entries, LastPromptEntry("Latest prompt", ""), TagEntry("", "big"))
	writeSession(t, config, cwd, id, time.Now(), Envelope{GitBranch: "main"}, entries...)
	l, err := List(config, cwd, ListOptions{})
	if err != nil || len(l) != 1 {
		t.Fatalf("List = %v, %v", l, err)
	}
	if l[0].FileSize <= 2*summaryWindow {
		t.Fatalf("transcript of %d bytes does not exercise the head/tail read", l[0].FileSize)
	}
	if l[0].Summary != "Latest prompt" || l[0].FirstPrompt != "The very first prompt" || l[0].Tag != "big" || l[0].GitBranch != "main" {
		t.Errorf("info = %+v", l[0])
	}
}
