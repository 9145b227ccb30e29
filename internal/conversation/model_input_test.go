package conversation_test

import (
	"errors"
	"testing"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/settings"
)

// TestBlankModelRefused: a blank model is bad input wherever a model is
// given: Options.Model of spaces and Client.SetModel("") fail with
// ErrInvalidOption, and the model in use stays.
func TestBlankModelRefused(t *testing.T) {
	srv := agentlooptest.NewTB(t)
	opts := func(model string) *agentloop.Options {
		return &agentloop.Options{Provider: srv.Provider(), Model: model, Cwd: t.TempDir(),
			SettingSources: []settings.SettingSource{}, NoSessionPersistence: true}
	}
	if _, err := agentloop.NewClient(opts("  ")); !errors.Is(err, agentloop.ErrInvalidOption) {
		t.Errorf("NewClient with Model \"  \": %v, want ErrInvalidOption", err)
	}
	c, err := agentloop.NewClient(opts("sonnet"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before := c.Model()
	for _, name := range []string{"", " \t"} {
		if err := c.SetModel(name); !errors.Is(err, agentloop.ErrInvalidOption) {
			t.Errorf("SetModel(%q): %v, want ErrInvalidOption", name, err)
		}
	}
	if c.Model() != before {
		t.Errorf("model %q after refused SetModel calls, want %q", c.Model(), before)
	}
}
