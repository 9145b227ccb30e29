package settings

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/vocab"
	"github.com/google/go-cmp/cmp"
)

// TestVocabularies checks that the settings accept exactly the permission
// modes and behaviours of package vocab and list the same values in their
// errors, so the two cannot drift apart.
func TestVocabularies(t *testing.T) {
	if diff := cmp.Diff(vocab.PermissionModes.Strings(), Modes); diff != "" {
		t.Errorf("Modes (-vocab +settings):\n%s", diff)
	}
	for _, mode := range append(vocab.PermissionModes.Strings(), "manual") {
		e := newEnv(t)
		write(t, e.path(UserSettings), `{"permissions":{"defaultMode":"`+mode+`"}}`)
		s, err := Load(e.opts())
		if err != nil {
			t.Errorf("defaultMode %q: %v", mode, err)
			continue
		}
		want, _ := vocab.ParsePermissionMode(mode)
		if s.Permissions.DefaultMode != string(want) {
			t.Errorf("defaultMode %q read as %q, want %q", mode, s.Permissions.DefaultMode, want)
		}
	}

	e := newEnv(t)
	write(t, e.path(ProjectSettings), `{"permissions":{"defaultMode":"yolo"}}`) // a bad user file is only a warning
	_, err := Load(e.opts())
	if err == nil || !strings.Contains(err.Error(), "(want "+vocab.PermissionModes.Want()+")") {
		t.Errorf("bad defaultMode: error %v does not list %s", err, vocab.PermissionModes.Want())
	}
	if !errors.Is(err, ErrUnknownValue) {
		t.Errorf("bad defaultMode: errors.Is(%v, ErrUnknownValue) is false", err)
	}
	var uv *vocab.UnknownValueError
	var se *Error
	if !errors.As(err, &uv) || uv.Value != "yolo" || !errors.As(err, &se) || se.Field != "permissions.defaultMode" {
		t.Errorf("bad defaultMode: error %#v does not carry the field and the value", err)
	}

	for _, b := range vocab.Behaviors.Values() {
		u := PermissionUpdate{Type: AddRules, Behavior: Behavior(b), Destination: Session, Rules: []RuleValue{{ToolName: "Read"}}}
		if err := u.check(); err != nil {
			t.Errorf("behavior %q refused: %v", b, err)
		}
	}
	u := PermissionUpdate{Type: AddRules, Behavior: "maybe", Destination: Session}
	if err := u.check(); !errors.Is(err, ErrUnknownValue) || !strings.Contains(err.Error(), vocab.Behaviors.Want()) {
		t.Errorf("bad behavior: error %v does not wrap ErrUnknownValue listing %s", err, vocab.Behaviors.Want())
	}
}

// TestSyntaxErrorCause checks that a settings file that is not JSON gives
// an *Error whose cause is the *json.SyntaxError.
func TestSyntaxErrorCause(t *testing.T) {
	e := newEnv(t)
	write(t, e.path(ProjectSettings), `{"model": "x",}`)
	_, err := Load(e.opts())
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		t.Fatalf("errors.As(%v, *json.SyntaxError) is false", err)
	}
}
