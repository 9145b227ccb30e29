package transcript_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/transcript"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/session"
	"github.com/agentloop/agentloop/session/storetest"
	"github.com/google/go-cmp/cmp"
)

const sid = "3f1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f"

var key = session.Key{ProjectKey: "-w", SessionID: sid}

func newWriter(t *testing.T) *session.Writer {
	t.Helper()
	w, err := session.Create(filepath.Join(t.TempDir(), "projects", "-w", sid+".jsonl"), session.Envelope{SessionID: sid, Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func prompt(text string) *message.User {
	return &message.User{Message: message.UserContent{Role: "user", Content: []model.Content{model.TextBlock(text)}}, SessionID: sid}
}

func toolResult(id string) *message.User {
	return &message.User{Message: message.UserContent{Role: "user", Content: []model.Content{
		{Type: model.TypeToolResult, ToolUseID: id, Blocks: []model.Content{model.TextBlock("ok")}}}}, SessionID: sid}
}

func assistant(id string, c ...model.Content) *message.Assistant {
	return &message.Assistant{Message: message.APIMessage{ID: id, Type: "message", Role: "assistant", Model: "claude-x", Content: c}, SessionID: sid}
}

func conversation() []message.Message {
	sub := "toolu_1"
	subAsst := assistant("msg_sub", model.TextBlock("inside the subagent"))
	subAsst.ParentToolUseID = &sub
	return []message.Message{
		prompt("Read x"),
		assistant("msg_1", model.Content{Type: model.TypeToolUse, ID: "toolu_1", Name: "Read", Input: []byte(`{}`)}),
		subAsst, // a subagent's line: not in this transcript
		toolResult("toolu_1"),
		&message.System{Subtype: "informational", SessionID: sid}, // not recorded
		assistant("msg_2", model.TextBlock("done")),
		&message.Result{Subtype: "success", SessionID: sid, TotalCostUSD: 0.5},
	}
}

func entryTypes(es []session.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

// Record writes the lines of the main conversation, in order, and Close
// leaves the same entries in the store as in the file.
func TestRecord(t *testing.T) {
	for _, withStore := range []bool{false, true} {
		t.Run(map[bool]string{false: "local", true: "store"}[withStore], func(t *testing.T) {
			w := newWriter(t)
			cfg := transcript.Config{Writer: w, Mode: func() string { return "plan" }}
			mem := session.NewMemoryStore()
			if withStore {
				cfg.Store, cfg.Key = mem, key
			}
			r, err := transcript.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r.Begin(time.Now())
			for _, m := range conversation() {
				if n := r.Record(m); n != nil {
					t.Fatalf("Record(%T) = notice %+v", m, n)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			tr, err := session.Load(w.Path())
			if err != nil {
				t.Fatal(err)
			}
			want := []string{session.TypeUser, session.TypeLastPrompt, session.TypeAssistant, session.TypeUser,
				session.TypeAssistant, session.TypeCostState}
			if diff := cmp.Diff(want, entryTypes(tr.Entries)); diff != "" {
				t.Errorf("entry types (-want +got):\n%s", diff)
			}
			if tr.Entries[0].PermissionMode != "plan" {
				t.Errorf("prompt's permission mode = %q, want plan", tr.Entries[0].PermissionMode)
			}
			if tr.Cost == nil || tr.Cost.TotalCostUSD != 0.5 {
				t.Errorf("cost-state = %+v, want total 0.5", tr.Cost)
			}
			stored, _ := mem.Load(context.Background(), key)
			if !withStore {
				if stored != nil {
					t.Errorf("store written without being configured: %d entries", len(stored))
				}
				return
			}
			if diff := cmp.Diff(tr.Entries, stored, storetest.Equal); diff != "" {
				t.Errorf("store after Close (-file +store):\n%s", diff)
			}
			if r.Record(prompt("late")) != nil || r.Close() != nil {
				t.Error("Record or Close after Close did something")
			}
		})
	}
}

// A failed local write is reported once; nothing is written after it.
func TestRecordLocalFailure(t *testing.T) {
	w := newWriter(t)
	r, err := transcript.New(transcript.Config{Writer: w})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	n := r.Record(prompt("hi"))
	sys, ok := n.(*message.System)
	if !ok || sys.Subtype != "session_writes_lost" {
		t.Fatalf("notice after a failed write = %#v, want system/session_writes_lost", n)
	}
	if n := r.Record(prompt("again")); n != nil {
		t.Errorf("second notice %#v, want none", n)
	}
	var nilRec *transcript.Recorder
	if nilRec.Record(prompt("x")) != nil || nilRec.Close() != nil {
		t.Error("nil Recorder did something")
	}
	if _, err := transcript.New(transcript.Config{}); err == nil {
		t.Error("New without a writer succeeded")
	}
}

// blockingStore's Append blocks until release is closed, whatever its
// context says: the worst store there is.
type blockingStore struct {
	session.Store
	release chan struct{}
}

func (b *blockingStore) Append(ctx context.Context, k session.Key, es []session.Entry) error {
	<-b.release
	return errors.New("released")
}

// A store that never answers holds neither Record (on the loop's
// goroutine, a result included) nor Close past CloseTimeout; what it did
// not take is reported as system/mirror_error.
func TestBlockingStore(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var mu sync.Mutex
	var notes []message.Message
	r, err := transcript.New(transcript.Config{Writer: newWriter(t), Store: &blockingStore{release: release}, Key: key,
		CloseTimeout: 50 * time.Millisecond,
		Notify: func(m message.Message) {
			mu.Lock()
			notes = append(notes, m)
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 3 {
			for _, m := range conversation() {
				r.Record(m)
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Record waited for the store")
	}
	start := time.Now()
	err = r.Close()
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v, want about the 50ms bound", d)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close = %v, want an error wrapping DeadlineExceeded", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(notes) == 0 {
		t.Fatal("no mirror_error reported for the batches the store did not take")
	}
	for _, n := range notes {
		if s, ok := n.(*message.System); !ok || s.Subtype != "mirror_error" || s.SessionID != sid {
			t.Errorf("notice %#v, want system/mirror_error of %s", n, sid)
		}
	}
}
