package permission

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// A Checker reports its rules' errors and warnings at New but keeps them
// compiled only from its first use, which decides as an eager one would
// (issue 34: an idle session keeps no compiled rule).
func TestCheckerCompilesAtFirstUse(t *testing.T) {
	cwd, other := t.TempDir(), t.TempDir()
	protected := filepath.Join(cwd, "conf", "settings.json")
	rs := RuleSet{Sources: []SourceRules{{Source: SourceSession,
		Allow: []string{"Read(//" + strings.TrimPrefix(filepath.ToSlash(other), "/") + "/ok/**)"},
		Deny:  []string{"Read(./secret/**)", "Bash(rm:*)"}}}}
	c, err := New(Config{Rules: rs, Dirs: []string{cwd}, Home: cwd, Protected: []string{protected}})
	if err != nil {
		t.Fatal(err)
	}
	if st := c.cur.Load(); st.compiled != nil || st.dirForms != nil || st.protected != nil {
		t.Fatal("New kept the compiled rules, the directories' forms or the protected paths: an idle checker keeps only their text")
	}
	if _, err := New(Config{Rules: RuleSet{Sources: []SourceRules{{Source: SourceSession, Deny: []string{"Read(("}}}},
		Dirs: []string{cwd}}); err == nil {
		t.Error("a malformed rule is no error at New")
	}
	read := func(p string) Call {
		in, _ := json.Marshal(map[string]string{"file_path": p})
		return Call{Tool: "Read", Input: in}
	}
	edit := func(p string) Call {
		in, _ := json.Marshal(map[string]string{"file_path": p, "old_string": "a", "new_string": "b"})
		return Call{Tool: "Edit", Input: in}
	}
	ctx := context.Background()
	// The first uses come from many goroutines at once (under -race: the
	// compilation is once, and readers of the mode meanwhile are apart).
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			_ = c.Mode()
			_ = c.Decide(ctx, read(filepath.Join(cwd, "x")))
		})
	}
	wg.Wait()
	for _, tt := range []struct {
		call Call
		want Behavior
	}{
		{read(filepath.Join(other, "ok", "a.txt")), Allow},
		{read(filepath.Join(other, "a.txt")), Ask},
		{read(filepath.Join(cwd, "secret", "k")), Deny},
		{edit(protected), Ask},
	} {
		if d := c.Decide(ctx, tt.call); d.Behavior != tt.want {
			t.Errorf("%s %s: %s, want %s", tt.call.Tool, tt.call.Input, d.Behavior, tt.want)
		}
	}
	if err := c.SetMode(ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	if d := c.Decide(ctx, edit(protected)); d.Behavior == Allow {
		t.Error("a protected path is allowed in acceptEdits mode after a change")
	}
}
