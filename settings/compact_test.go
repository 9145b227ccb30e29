package settings

import (
	"strings"
	"testing"
)

func TestAutoCompactKeys(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(UserSettings), `{"autoCompactEnabled": true, "autoCompactWindow": 500000}`)
	write(t, e.path(ProjectSettings), `{"autoCompactEnabled": false}`)
	st, err := Load(e.opts())
	if err != nil {
		t.Fatal(err)
	}
	if st.AutoCompactEnabled == nil || *st.AutoCompactEnabled || st.AutoCompactWindow != 500_000 {
		t.Errorf("autoCompactEnabled %v, autoCompactWindow %d", st.AutoCompactEnabled, st.AutoCompactWindow)
	}
	if _, ok := st.Extra["autoCompactWindow"]; ok {
		t.Error("autoCompactWindow is also left in Extra")
	}
	for _, bad := range []string{`{"autoCompactWindow": -1}`, `{"autoCompactWindow": 1.5}`, `{"autoCompactWindow": "big"}`, `{"autoCompactEnabled": "yes"}`} {
		e := newEnv(t)
		write(t, e.path(ProjectSettings), bad)
		_, err := Load(e.opts())
		if err == nil || !strings.Contains(err.Error(), "autoCompact") {
			t.Errorf("%s: error %v", bad, err)
		}
	}
	e = newEnv(t)
	st, err = Load(e.opts())
	if err != nil || st.AutoCompactEnabled != nil || st.AutoCompactWindow != 0 {
		t.Errorf("no files: %v %v %d", err, st.AutoCompactEnabled, st.AutoCompactWindow)
	}
}
