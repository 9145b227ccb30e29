package permission

import (
	"errors"
	"testing"
)

// TestDisabledModes: a Checker neither starts in nor switches to a mode of
// Config.Disabled, returning that mode's error, and changes nothing on the
// refusal; the other modes are unaffected.
func TestDisabledModes(t *testing.T) {
	errBypass, errAuto := errors.New("bypass off"), errors.New("auto off")
	disabled := map[Mode]error{ModeBypass: errBypass, ModeAuto: errAuto}
	dir := t.TempDir()
	for _, m := range []Mode{ModeBypass, ModeAuto} {
		if _, err := New(Config{Mode: m, Dirs: []string{dir}, Disabled: disabled}); !errors.Is(err, disabled[m]) {
			t.Errorf("New in %s: %v, want %v", m, err, disabled[m])
		}
	}
	c, err := New(Config{Mode: ModeDefault, Dirs: []string{dir}, AllowBypass: true, Disabled: disabled})
	if err != nil {
		t.Fatal(err)
	}
	delete(disabled, ModeAuto) // the checker keeps its own copy
	for _, m := range []Mode{ModeBypass, ModeAuto} {
		if err := c.SetMode(m); !errors.Is(err, map[Mode]error{ModeBypass: errBypass, ModeAuto: errAuto}[m]) {
			t.Errorf("SetMode(%s): %v", m, err)
		}
		if err := c.Apply(Update{Type: UpdateSetMode, Mode: m, Destination: SourceSession}); err == nil {
			t.Errorf("Apply(setMode %s) accepted", m)
		}
		if c.Mode() != ModeDefault {
			t.Errorf("mode %s after a refused switch to %s", c.Mode(), m)
		}
	}
	if err := c.SetMode(ModeAcceptEdits); err != nil || c.Mode() != ModeAcceptEdits {
		t.Errorf("SetMode(acceptEdits): %v, mode %s", err, c.Mode())
	}
}
