package sysprompt

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEnvironment(t *testing.T) {
	got := Environment(Env{Cwd: "/w", AdditionalDirs: []string{"/x"}, GitRepo: true, Platform: "linux/amd64",
		Date: "2026-01-02", Model: "m"})
	want := "Environment:\n- working directory: /w\n- additional directory: /x\n- git repository: yes\n- platform: linux/amd64\n" +
		"- shell: unknown\n- OS version: unknown\n- date: 2026-01-02\n- model: m"
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if r := Reminder("E"); !strings.HasPrefix(r, "<system-reminder>\n") || !strings.HasSuffix(r, "\n\nE\n</system-reminder>") {
		t.Errorf("Reminder = %q", r)
	}
	if strings.Contains(Base, "/") && strings.Contains(Base, "working directory:") {
		t.Error("the fixed part must hold nothing of the session")
	}
}
