// Package vocab is the single definition of the closed vocabularies that
// users type: permission modes, effort levels, thinking types and
// displays, and permission rule behaviours.
//
// Each vocabulary is a [Set]: its values in a fixed order (for help texts
// and error messages), a Parse method that accepts exactly those values
// (plus documented aliases) and a JSON-schema enum fragment for tool
// schemas. Options validation, the CLI flags, settings files and the
// permission checker all parse through these sets, so a value added here
// is accepted, listed and documented everywhere at once.
package vocab

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ErrUnknownValue is wrapped by every error a Parse function returns for a
// value outside its vocabulary.
var ErrUnknownValue = errors.New("unknown value")

// UnknownValueError is the error of a Parse function: Value is not one of
// Allowed. It matches ErrUnknownValue with errors.Is.
type UnknownValueError struct {
	Kind    string   // "permission mode", "effort", …
	Value   string   // what was given
	Allowed []string // the vocabulary, in its order
}

// Error reads `unknown <kind> "<value>" (want a, b or c)`.
func (e *UnknownValueError) Error() string {
	return fmt.Sprintf("unknown %s %q (want %s)", e.Kind, e.Value, e.Want())
}

// Want is the allowed values as an English list: "a, b or c".
func (e *UnknownValueError) Want() string { return orList(e.Allowed) }

// Unwrap returns ErrUnknownValue.
func (e *UnknownValueError) Unwrap() error { return ErrUnknownValue }

// Set is one vocabulary of string values of type T. The zero Set is empty;
// the sets are composite literals, laid out by the compiler (no code runs
// to build them when the process starts), and never change.
type Set[T ~string] struct {
	kind    string
	values  []T
	aliases []alias[T]
}

// alias is another spelling of a value.
type alias[T ~string] struct {
	name string
	v    T
}

// Kind names the vocabulary in messages: "permission mode".
func (s Set[T]) Kind() string { return s.kind }

// Values returns the values in their order; the caller owns the slice.
func (s Set[T]) Values() []T { return slices.Clone(s.values) }

// Strings returns the values as strings, in their order.
func (s Set[T]) Strings() []string {
	out := make([]string, len(s.values))
	for i, v := range s.values {
		out[i] = string(v)
	}
	return out
}

// Want is the values as an English list, "a, b or c", for help texts.
func (s Set[T]) Want() string { return orList(s.Strings()) }

// Contains reports whether v is one of the values (aliases excluded).
func (s Set[T]) Contains(v string) bool { return slices.Contains(s.values, T(v)) }

// Parse returns the value spelled str, resolving aliases. Anything else,
// the empty string included, is an *UnknownValueError.
func (s Set[T]) Parse(str string) (T, error) {
	if s.Contains(str) {
		return T(str), nil
	}
	for _, a := range s.aliases {
		if a.name == str {
			return a.v, nil
		}
	}
	return "", &UnknownValueError{Kind: s.kind, Value: str, Allowed: s.Strings()}
}

// Enum is the JSON-schema fragment {"type":"string","enum":[…]} listing
// the values, for tool input schemas.
func (s Set[T]) Enum() json.RawMessage {
	list, _ := json.Marshal(s.Strings()) // a []string always marshals
	return json.RawMessage(`{"type":"string","enum":` + string(list) + `}`)
}

// orList joins values as "a, b or c".
func orList(values []string) string {
	switch len(values) {
	case 0:
		return "nothing"
	case 1:
		return values[0]
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}
