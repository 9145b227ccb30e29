package diag

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/message"
	"github.com/google/go-cmp/cmp"
)

// TestSinkOrder: diagnostics found before the stream is read are yielded
// by Take, after the announced messages; later ones go through notify at
// once. Each is logged, with the session id current then, and Of reads
// back what Informational wrote.
func TestSinkOrder(t *testing.T) {
	var logged bytes.Buffer
	g := New(slog.New(slog.NewTextHandler(&logged, nil)), "s1")
	g.Add("settings_ignored", "early")
	g.Add("settings_ignored", "") // nothing to say: dropped
	g.Announce(func(id string) message.Message { return &message.System{Subtype: "notification", SessionID: id} })
	var mu sync.Mutex
	var later []message.Message
	out := g.Take(func(m message.Message) { mu.Lock(); later = append(later, m); mu.Unlock() })
	g.SetSessionID("s2")
	g.Add("hook_failed", "late")

	var got []string
	for _, m := range append(out, later...) {
		s := m.(*message.System)
		d, ok := Of(m)
		got = append(got, s.Subtype+" "+s.SessionID+" "+d.Tag+" "+d.Text+" "+map[bool]string{true: "diag", false: "-"}[ok])
	}
	want := []string{"notification s1   -", "informational s1 settings_ignored early diag", "informational s2 hook_failed late diag"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]Diagnostic{{"settings_ignored", "early"}, {"hook_failed", "late"}}, g.List()); diff != "" {
		t.Errorf("List (-want +got):\n%s", diff)
	}
	for _, w := range []string{"session_id=s1", "session_id=s2", "early", "late"} {
		if !strings.Contains(logged.String(), w) {
			t.Errorf("log lacks %q:\n%s", w, logged.String())
		}
	}
	var nilSink *Sink
	nilSink.Add("x", "y") // a nil sink records nothing, and does not panic
	nilSink.SetSessionID("z")
}
