package taskline

import (
	"regexp"
	"testing"
)

func TestNew(t *testing.T) {
	m := New("s1", "task_updated", map[string]any{"task_id": "bash_1", "patch": map[string]any{"status": "completed"}})
	if m.Subtype != "task_updated" || m.SessionID != "s1" || m.UUID == "" {
		t.Fatalf("line %+v", m)
	}
	if got := string(m.Data["patch"]); got != `{"status":"completed"}` {
		t.Errorf("patch %s", got)
	}
	if got := string(m.Data["task_id"]); got != `"bash_1"` {
		t.Errorf("task_id %s", got)
	}
}

func TestNewRunID(t *testing.T) {
	a, b := NewRunID(), NewRunID()
	if !regexp.MustCompile(`^0[0-9a-z]+-[0-9a-f]{8}$`).MatchString(a) || a == b {
		t.Errorf("run ids %q, %q: want 0<base-36 time>-<8 hex>, each new", a, b)
	}
}
