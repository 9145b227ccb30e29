package permission

import "fmt"

// Mode is a permission mode of the session.
type Mode string

// The permission modes of the reference.
const (
	ModeDefault     Mode = "default"
	ModeAcceptEdits Mode = "acceptEdits"
	ModePlan        Mode = "plan"
	ModeDontAsk     Mode = "dontAsk"
	ModeBypass      Mode = "bypassPermissions"
	ModeAuto        Mode = "auto"
)

// ParseMode checks a mode name. The empty string and "manual" (the settings
// alias) mean ModeDefault.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "", "manual", ModeDefault:
		return ModeDefault, nil
	case ModeAcceptEdits, ModePlan, ModeDontAsk, ModeBypass, ModeAuto:
		return Mode(s), nil
	}
	return "", fmt.Errorf("permission: unknown permission mode %q (want default, acceptEdits, plan, dontAsk, bypassPermissions or auto)", s)
}

// acceptsEdits reports whether the mode approves file edits inside the
// working directories without asking.
func (m Mode) acceptsEdits() bool { return m == ModeAcceptEdits }
