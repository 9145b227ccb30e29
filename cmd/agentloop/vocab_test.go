package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/agentloop/agentloop/settings"
)

// TestFlagVocabularies checks that the vocabulary flags accept every value
// of package vocab, name them all in --help, and list the same values in
// their errors as Options validation and settings files do, so that the
// CLI, the library and the settings cannot drift apart.
func TestFlagVocabularies(t *testing.T) {
	help := usageText()
	for _, tc := range []struct {
		flag   string
		values []string
		want   string // the vocabulary as an English list
		extra  []string
	}{
		{"--permission-mode", vocab.PermissionModes.Strings(), vocab.PermissionModes.Want(), nil},
		{"--effort", vocab.Efforts.Strings(), vocab.Efforts.Want(), nil},
		{"--thinking", vocab.ThinkingTypes.Strings(), vocab.ThinkingTypes.Want(), []string{"--max-thinking-tokens", "2048"}},
	} {
		line := ""
		for _, l := range strings.Split(help, "\n") {
			if strings.HasPrefix(strings.TrimSpace(l), tc.flag+" ") {
				line = l
			}
		}
		if !strings.Contains(line, tc.want) {
			t.Errorf("help for %s is %q, want it to list %s", tc.flag, line, tc.want)
		}
		for _, v := range tc.values {
			if _, err := parseArgs(append([]string{"-p", "hi", tc.flag, v}, tc.extra...)); err != nil {
				t.Errorf("%s %s: %v", tc.flag, v, err)
			}
		}
		_, err := parseArgs([]string{"-p", "hi", tc.flag, "bogus"})
		if !errors.Is(err, vocab.ErrUnknownValue) || !errors.Is(err, errUsage) || !strings.HasSuffix(err.Error(), "(want "+tc.want+")") {
			t.Errorf("%s bogus: error %v, want a usage error wrapping ErrUnknownValue that lists %s", tc.flag, err, tc.want)
		}
	}

	// One bad permission mode, three ways in: the same list each time.
	_, cliErr := parseArgs([]string{"-p", "hi", "--permission-mode", "yolo"})
	_, optErr := agentloop.Query(context.Background(), "hi", &agentloop.Options{PermissionMode: "yolo"}).Result()
	cwd := t.TempDir()
	if err := os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(`{"permissions":{"defaultMode":"yolo"}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, setErr := settings.Load(settings.Options{Cwd: cwd, Home: t.TempDir(), Sources: []settings.SettingSource{settings.Project}})
	tail := func(err error) string {
		if err == nil {
			return "<nil>"
		}
		s := err.Error()
		if i := strings.LastIndex(s, "unknown permission mode"); i >= 0 {
			return s[i:]
		}
		return s
	}
	if tail(cliErr) != tail(optErr) || tail(cliErr) != tail(setErr) {
		t.Errorf("the three errors differ:\n cli      %v\n options  %v\n settings %v", cliErr, optErr, setErr)
	}
}
