// Package wire holds the lines of the stream-json protocol that the
// official Agent SDKs speak with their engine over its standard input and
// output (wire-protocol.md in the spec): user messages, control requests
// and responses, cancellations and keep-alives, one JSON object a line.
//
// Decode reads a line strictly: bad JSON, an unknown type, a missing or
// mistyped member are errors (*DecodeError) that say which member is at
// fault, and no input makes it panic. Members this package does not model
// are kept, in the Extra map of each type, so that the engine can report
// them rather than drop them in silence, and so that a line decoded and
// encoded again loses nothing. Encode writes any of the types back, which
// is how the engine writes its side (control requests to the host,
// responses, cancellations).
package wire

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/agentloop/agentloop/model"
)

// The line types of the protocol.
const (
	TypeUser            = "user"
	TypeControlRequest  = "control_request"
	TypeControlResponse = "control_response"
	TypeControlCancel   = "control_cancel_request"
	TypeKeepAlive       = "keep_alive"
)

// Message is one line: *User, *ControlRequest, *ControlResponse,
// *ControlCancel or *KeepAlive.
type Message interface {
	// Type is the line's "type" member.
	Type() string
	json.Marshaler
}

// Priority is when a queued user message runs.
type Priority string

// The priorities of a user message.
const (
	PriorityNow   Priority = "now"   // interrupt the current turn
	PriorityNext  Priority = "next"  // run before other queued messages
	PriorityLater Priority = "later" // run after the queue (the default)
)

// User is a user message from the host: a prompt, in text or blocks.
type User struct {
	Message UserContent `json:"message" wire:"required"`
	// SessionID is the host's idea of the session; the SDKs send "".
	SessionID string `json:"session_id,omitzero"`
	// ParentToolUseID is nil on the main thread.
	ParentToolUseID *string  `json:"parent_tool_use_id,omitzero"`
	UUID            string   `json:"uuid,omitzero"`
	Priority        Priority `json:"priority,omitzero"`
	// ShouldQuery false adds the message to the history without asking
	// the model; nil is true.
	ShouldQuery    *bool `json:"shouldQuery,omitzero"`
	IsSynthetic    bool  `json:"isSynthetic,omitzero"`
	ClientComposed bool  `json:"client_composed,omitzero"`
	// Extra holds the members not modelled here (origin, timestamp,
	// tool_use_result, …), as given.
	Extra map[string]json.RawMessage `json:"-"`
}

// UserContent is the API message of a User line.
type UserContent struct {
	Role string `json:"role" wire:"required"`
	// Content is the message's blocks; a string content is one text
	// block, with Text set.
	Content []model.Content `json:"-"`
	// Text is true when the content came as a string (and is then
	// written back as one).
	Text  bool                       `json:"-"`
	Extra map[string]json.RawMessage `json:"-"`
}

// UnmarshalJSON reads the message strictly: role "user", content a
// string or an array of blocks that each have a type.
func (c *UserContent) UnmarshalJSON(b []byte) error {
	m, err := objectOf(b)
	if err != nil {
		return err
	}
	type plain UserContent
	var p plain
	extra, err := decodeObject(m, &p, "content")
	if err != nil {
		return err
	}
	if p.Role != "user" {
		return &fieldError{path: "role", reason: fmt.Sprintf("want \"user\", got %s", quote(p.Role))}
	}
	p.Extra = extra
	raw, ok := m["content"]
	if !ok {
		return &fieldError{path: "content", reason: "is missing"}
	}
	switch jsonKind(raw) {
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return &fieldError{path: "content", reason: err.Error()}
		}
		p.Content, p.Text = []model.Content{model.TextBlock(s)}, true
	case "array":
		var blocks []json.RawMessage
		if err := json.Unmarshal(raw, &blocks); err != nil {
			return &fieldError{path: "content", reason: err.Error()}
		}
		p.Content = make([]model.Content, 0, len(blocks))
		for i, rb := range blocks {
			path := fmt.Sprintf("content[%d]", i)
			bm, err := objectOf(rb)
			if err != nil {
				return asField(err).under(path)
			}
			rawType, ok := bm["type"]
			if !ok {
				return &fieldError{path: path + ".type", reason: "is missing"}
			}
			var typ string
			if err := json.Unmarshal(rawType, &typ); err != nil || typ == "" {
				return &fieldError{path: path + ".type", reason: "want a block type, got " + jsonKind(rawType)}
			}
			var blk model.Content
			if err := json.Unmarshal(rb, &blk); err != nil {
				return &fieldError{path: path, reason: err.Error()}
			}
			p.Content = append(p.Content, blk)
		}
	default:
		return &fieldError{path: "content", reason: "want a string or an array of blocks, got " + jsonKind(raw)}
	}
	*c = UserContent(p)
	return nil
}

// MarshalJSON writes the content back in the form it came in.
func (c UserContent) MarshalJSON() ([]byte, error) {
	var content any = c.Content
	if c.Text && len(c.Content) == 1 && c.Content[0].Type == model.TypeText {
		content = c.Content[0].Text
	} else if c.Content == nil {
		content = []model.Content{}
	}
	return encodeObject(struct {
		Role string `json:"role"`
	}{c.Role}, c.Extra, map[string]any{"content": content})
}

// Type is "user".
func (*User) Type() string { return TypeUser }

// MarshalJSON writes the line, with its type.
func (u *User) MarshalJSON() ([]byte, error) {
	type plain User
	return encodeObject((*plain)(u), u.Extra, map[string]any{"type": TypeUser, "message": u.Message, "parent_tool_use_id": u.ParentToolUseID})
}

// ControlCancel withdraws a request its sender made; it has no answer.
type ControlCancel struct {
	RequestID string                     `json:"request_id" wire:"required"`
	Extra     map[string]json.RawMessage `json:"-"`
}

// Type is "control_cancel_request".
func (*ControlCancel) Type() string { return TypeControlCancel }

// MarshalJSON writes the line, with its type.
func (c *ControlCancel) MarshalJSON() ([]byte, error) {
	type plain ControlCancel
	return encodeObject((*plain)(c), c.Extra, map[string]any{"type": TypeControlCancel})
}

// KeepAlive is a line that only shows the other side is there.
type KeepAlive struct {
	// StartupMark is set by prewarmed engines; kept as given.
	StartupMark json.RawMessage            `json:"startup_mark,omitzero"`
	Extra       map[string]json.RawMessage `json:"-"`
}

// Type is "keep_alive".
func (*KeepAlive) Type() string { return TypeKeepAlive }

// MarshalJSON writes the line, with its type.
func (k *KeepAlive) MarshalJSON() ([]byte, error) {
	type plain KeepAlive
	return encodeObject((*plain)(k), k.Extra, map[string]any{"type": TypeKeepAlive})
}

// Decode reads one line (without or with its newline). Errors are
// *DecodeError. A control_request of a subtype this package does not
// know is not an error: its Request is *OtherRequest, for the engine to
// answer with an unsupported_request error.
func Decode(line []byte) (Message, error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil, &DecodeError{Reason: "empty line"}
	}
	if !json.Valid(line) {
		return nil, &DecodeError{Reason: syntaxReason(line)}
	}
	m, err := objectOf(line)
	if err != nil {
		return nil, &DecodeError{Reason: "want a JSON object, got " + jsonKind(line)}
	}
	rawType, ok := m["type"]
	if !ok {
		return nil, &DecodeError{Field: "type", Reason: "is missing"}
	}
	var typ string
	if err := json.Unmarshal(rawType, &typ); err != nil {
		return nil, &DecodeError{Field: "type", Reason: "want a string, got " + jsonKind(rawType)}
	}
	fail := func(err error, de *DecodeError) (Message, error) {
		fe := asField(err)
		de.Type, de.Field, de.Reason = typ, fe.path, fe.reason
		return nil, de
	}
	switch typ {
	case TypeUser:
		var u User
		type plain User
		extra, err := decodeObject(m, (*plain)(&u), "type")
		if err != nil {
			return fail(err, &DecodeError{})
		}
		switch u.Priority {
		case "", PriorityNow, PriorityNext, PriorityLater:
		default:
			return fail(&fieldError{path: "priority", reason: fmt.Sprintf("want now, next or later, got %s", quote(string(u.Priority)))}, &DecodeError{})
		}
		u.Extra = extra
		return &u, nil
	case TypeControlRequest:
		return decodeRequest(m, fail)
	case TypeControlResponse:
		return decodeResponse(m, fail)
	case TypeControlCancel:
		var c ControlCancel
		type plain ControlCancel
		extra, err := decodeObject(m, (*plain)(&c), "type")
		if err != nil {
			return fail(err, &DecodeError{})
		}
		c.Extra = extra
		return &c, nil
	case TypeKeepAlive:
		var k KeepAlive
		type plain KeepAlive
		extra, err := decodeObject(m, (*plain)(&k), "type")
		if err != nil {
			return fail(err, &DecodeError{})
		}
		k.Extra = extra
		return &k, nil
	}
	return nil, &DecodeError{Field: "type", Reason: fmt.Sprintf("unknown line type %s (want user, control_request, control_response, control_cancel_request or keep_alive)", quote(typ))}
}

// syntaxReason describes why line is not JSON, with the column.
func syntaxReason(line []byte) string {
	var v any
	err := json.Unmarshal(line, &v)
	if se, ok := err.(*json.SyntaxError); ok {
		return fmt.Sprintf("invalid JSON at column %d: %v", se.Offset, se)
	}
	if err != nil {
		return "invalid JSON: " + err.Error()
	}
	return "invalid JSON"
}

// Encode writes m as one line, ending in a newline.
func Encode(m Message) ([]byte, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("wire: encoding a %s line: %w", m.Type(), err)
	}
	return append(b, '\n'), nil
}
