package agentloop

import "github.com/agentloop/agentloop/internal/vocab"

// ErrUnknownValue is wrapped by the errors of the Parse functions
// ([ParsePermissionMode], [ParseEffort], [ParseThinkingType],
// [ParseThinkingDisplay]), and so by the ErrInvalidOption error of an
// option, CLI flag or settings field whose value is outside its
// vocabulary.
var ErrUnknownValue = vocab.ErrUnknownValue

// UnknownValueError is the error of a Parse function: Value is not one of
// Allowed. errors.As reaches it through an ErrInvalidOption error.
type UnknownValueError = vocab.UnknownValueError

// ParsePermissionMode returns the permission mode named s: one of
// [PermissionModes], or "manual", which settings files and the SDKs accept
// for PermissionDefault. Anything else is an error wrapping
// ErrUnknownValue that lists the modes.
func ParsePermissionMode(s string) (PermissionMode, error) {
	m, err := vocab.ParsePermissionMode(s)
	return PermissionMode(m), err
}

// PermissionModes returns every permission mode, in the reference's order.
func PermissionModes() []PermissionMode {
	var out []PermissionMode
	for _, m := range vocab.PermissionModes.Values() {
		out = append(out, PermissionMode(m))
	}
	return out
}

// The effort levels of Options.Effort, lowest first.
const (
	EffortLow    = string(vocab.EffortLow)
	EffortMedium = string(vocab.EffortMedium)
	EffortHigh   = string(vocab.EffortHigh)
	EffortXHigh  = string(vocab.EffortXHigh)
	EffortMax    = string(vocab.EffortMax)
)

// ParseEffort returns s if it is an effort level, else an error wrapping
// ErrUnknownValue that lists them. The empty string (the API's default
// effort) is not a level: callers that allow it check for it first.
func ParseEffort(s string) (string, error) {
	e, err := vocab.ParseEffort(s)
	return string(e), err
}

// Efforts returns the effort levels, lowest first.
func Efforts() []string { return vocab.Efforts.Strings() }

// The thinking types of ThinkingConfig.Type.
const (
	// ThinkingAdaptive lets the model decide how much to think.
	ThinkingAdaptive = string(vocab.ThinkingAdaptive)
	// ThinkingEnabled thinks within ThinkingConfig.BudgetTokens.
	ThinkingEnabled = string(vocab.ThinkingEnabled)
	// ThinkingDisabled turns thinking off.
	ThinkingDisabled = string(vocab.ThinkingDisabled)
)

// ParseThinkingType returns s if it is a thinking type, else an error
// wrapping ErrUnknownValue that lists them.
func ParseThinkingType(s string) (string, error) {
	t, err := vocab.ParseThinkingType(s)
	return string(t), err
}

// The thinking displays of ThinkingConfig.Display.
const (
	// ThinkingSummarized returns a summary of the thinking in the stream.
	ThinkingSummarized = string(vocab.ThinkingSummarized)
	// ThinkingOmitted leaves the thinking text out of the stream.
	ThinkingOmitted = string(vocab.ThinkingOmitted)
)

// ParseThinkingDisplay returns s if it is a thinking display, else an
// error wrapping ErrUnknownValue that lists them.
func ParseThinkingDisplay(s string) (string, error) {
	d, err := vocab.ParseThinkingDisplay(s)
	return string(d), err
}
