// Package message defines the messages an agent run streams, and their JSON.
//
// A run yields a [System] message with subtype init, then [Assistant]
// messages (one per content block), [User] messages (one per tool result),
// [StreamEvent]s when partial messages are on, further [System] messages
// (retries, permission denials), and finally one [Result].
//
// The JSON of each type is the line format of the reference CLI's
// stream-json output, so the same values serve a Go program, the agentloop
// CLI and the official SDKs that read that format. [Decode] reads such a
// line back; lines of unknown types decode to [Unknown] so newer producers
// do not break older consumers.
//
// The root package agentloop re-exports these types under the names a
// program uses (agentloop.AssistantMessage and so on).
package message

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Message is one item of a run's stream. The concrete types are *System,
// *Assistant, *User, *StreamEvent, *Result, *ConversationReset and
// *Unknown.
type Message interface {
	// Kind returns the line's type field: system, assistant, user,
	// stream_event, result, or the unknown type's name.
	Kind() string
	isMessage()
}

func (*System) Kind() string      { return "system" }
func (*Assistant) Kind() string   { return "assistant" }
func (*User) Kind() string        { return "user" }
func (*StreamEvent) Kind() string { return "stream_event" }
func (*Result) Kind() string      { return "result" }
func (u *Unknown) Kind() string   { return u.Type }

func (*System) isMessage()      {}
func (*Assistant) isMessage()   {}
func (*User) isMessage()        {}
func (*StreamEvent) isMessage() {}
func (*Result) isMessage()      {}
func (*Unknown) isMessage()     {}

// Unknown is a line of a type this package does not model. Raw is the line.
type Unknown struct {
	Type string
	Raw  json.RawMessage
}

// MarshalJSON writes the line as it was read.
func (u *Unknown) MarshalJSON() ([]byte, error) { return u.Raw, nil }

// Decode reads one stream-json line.
func Decode(line []byte) (Message, error) {
	line = bytes.TrimSpace(line)
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return nil, fmt.Errorf("decode message: %w", err)
	}
	var m Message
	switch head.Type {
	case "system":
		m = &System{}
	case "assistant":
		m = &Assistant{}
	case "user":
		m = &User{}
	case "stream_event":
		m = &StreamEvent{}
	case "result":
		m = &Result{}
	case "conversation_reset":
		m = &ConversationReset{}
	case "":
		return nil, fmt.Errorf("decode message: missing type field")
	default:
		return &Unknown{Type: head.Type, Raw: append(json.RawMessage(nil), line...)}, nil
	}
	if err := json.Unmarshal(line, m); err != nil {
		return nil, fmt.Errorf("decode %s message: %w", head.Type, err)
	}
	return m, nil
}
