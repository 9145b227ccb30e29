package permission

import (
	"fmt"

	"github.com/agentloop/agentloop/internal/vocab"
)

// Mode is a permission mode of the session; the vocabulary is
// vocab.PermissionModes.
type Mode = vocab.PermissionMode

// The permission modes of the reference.
const (
	ModeDefault     = vocab.PermissionDefault
	ModeAcceptEdits = vocab.PermissionAcceptEdits
	ModePlan        = vocab.PermissionPlan
	ModeDontAsk     = vocab.PermissionDontAsk
	ModeBypass      = vocab.PermissionBypass
	ModeAuto        = vocab.PermissionAuto
)

// ParseMode checks a mode name. The empty string means ModeDefault, as
// does "manual" (the settings alias); an unknown name is an error wrapping
// vocab.ErrUnknownValue.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return ModeDefault, nil
	}
	m, err := vocab.ParsePermissionMode(s)
	if err != nil {
		return "", fmt.Errorf("permission: %w", err)
	}
	return m, nil
}
