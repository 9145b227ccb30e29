package model

import (
	"errors"
	"fmt"
	"slices"
	"sync"
)

// SealMin is the smallest text [Seal] seals: below it the text costs less
// than what sealing saves.
const SealMin = 1 << 10

// SealedSender is implemented by providers that send sealed tool results
// ([Seal]) from their JSON as it is. Callers check with a type assertion;
// a provider without it gets every block unsealed.
type SealedSender interface {
	SendsSealed() bool
}

// Sealed reports whether c is a sealed tool_result ([Seal]): one with Raw
// set, and neither Text nor Blocks (a tool_result with those is encoded
// from them, Raw ignored, as before sealing existed).
func (c *Content) Sealed() bool {
	return c.Type == TypeToolResult && c.Raw != nil && c.Text == "" && c.Blocks == nil
}

// Seal returns c sealed, and true, when c is a tool_result of text alone
// of at least SealMin bytes; otherwise c unchanged and false.
//
// A sealed block is a tool_result kept as the JSON it is sent as, and not
// also as text: a session's history holds a large result once, as bytes a
// provider sends as they are, instead of both the text and its encoding.
// It has Type [TypeToolResult], its ToolUseID, IsError and CacheControl as
// before, an empty Text, no Blocks, and in Raw the block's whole JSON as
// [Content.AppendJSON] wrote it without cache_control. Raw is never
// modified once sealed, so copies of the block may share it.
// [Content.AppendJSON] (and so MarshalJSON) writes a sealed block exactly
// as it wrote the block before sealing, its breakpoint spliced in; reading
// JSON never makes one. Code that reads a result's text must [Unseal] it
// first: only a session's history and the requests it sends to a provider
// that says it takes them ([SealedSender]) hold sealed blocks.
func Seal(c Content) (Content, bool) {
	if c.Type != TypeToolResult || c.Blocks != nil || c.Raw != nil || len(c.Text) < SealMin {
		return c, false
	}
	plain := c
	plain.CacheControl = nil
	sp := sealScratch.Get().(*[]byte)
	defer func() {
		if cap(*sp) <= maxSealScratch {
			sealScratch.Put(sp)
		}
	}()
	enc, err := plain.AppendJSON((*sp)[:0])
	*sp = enc
	if err != nil { // a text result has nothing that can fail
		return c, false
	}
	// The JSON is encoded in a reused buffer and copied out at its size:
	// one copy, and nothing cleared or left spare.
	raw := append([]byte(nil), enc...)
	return Content{Type: TypeToolResult, ToolUseID: c.ToolUseID, IsError: c.IsError, CacheControl: c.CacheControl, Raw: slices.Clip(raw)}, true
}

// sealScratch holds the buffers Seal encodes in, each up to
// maxSealScratch bytes.
var sealScratch = sync.Pool{New: func() any { return new([]byte) }}

const maxSealScratch = 64 << 10

// Unseal returns c with its text read back from its JSON when it is
// sealed; otherwise c. Its Raw is not shared with the result.
func Unseal(c Content) (Content, error) {
	if !c.Sealed() {
		return c, nil
	}
	var out Content
	if err := out.UnmarshalJSON(c.Raw); err != nil {
		return c, fmt.Errorf("sealed tool_result %s: %w", c.ToolUseID, err)
	}
	if out.Type != TypeToolResult || out.Blocks != nil {
		return c, fmt.Errorf("sealed tool_result %s: %w", c.ToolUseID, errSealShape)
	}
	out.CacheControl = c.CacheControl
	return out, nil
}

var errSealShape = errors.New("the JSON is not a tool_result of text")

// HasSealed reports whether any block of msgs is sealed.
func HasSealed(msgs []Message) bool {
	for i := range msgs {
		for j := range msgs[i].Content {
			if msgs[i].Content[j].Sealed() {
				return true
			}
		}
	}
	return false
}

// UnsealMessages returns msgs with every sealed block unsealed: msgs itself
// when none is, otherwise a copy sharing the messages that have none. msgs
// is not modified.
func UnsealMessages(msgs []Message) ([]Message, error) {
	var out []Message
	for i := range msgs {
		blocks := msgs[i].Content
		var copied []Content
		for j := range blocks {
			if !blocks[j].Sealed() {
				continue
			}
			if copied == nil {
				copied = append([]Content(nil), blocks...)
			}
			c, err := Unseal(blocks[j])
			if err != nil {
				return msgs, fmt.Errorf("message %d: %w", i, err)
			}
			copied[j] = c
		}
		if copied == nil {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		out[i] = Message{Role: msgs[i].Role, Content: copied}
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}

// appendSealed appends a sealed block's JSON, its breakpoint spliced in
// before the closing brace.
func appendSealed(dst []byte, c *Content) ([]byte, error) {
	if err := sealShape(c); err != nil {
		return dst, err
	}
	n := len(c.Raw)
	if c.CacheControl == nil {
		return append(dst, c.Raw...), nil
	}
	dst = append(dst, c.Raw[:n-1]...)
	dst = append(dst, `,"cache_control":`...)
	dst = c.CacheControl.appendJSON(dst)
	return append(dst, '}'), nil
}

// sealShape checks that a sealed block's JSON is an object, so that a
// breakpoint can be spliced before its closing brace.
func sealShape(c *Content) error {
	if n := len(c.Raw); n < 2 || c.Raw[0] != '{' || c.Raw[n-1] != '}' {
		return fmt.Errorf("sealed tool_result %s: %w", c.ToolUseID, errSealShape)
	}
	return nil
}

// AppendJSONShared is [Message.AppendJSON] for an encoder that keeps
// sealed blocks' JSON by reference rather than copy: at each sealed block
// without a breakpoint it calls share with what it has appended so far
// (dst) and the block's JSON, and goes on appending to the slice share
// returns. A nil share copies, as AppendJSON does.
func (m *Message) AppendJSONShared(dst []byte, share func(dst, block []byte) []byte) ([]byte, error) {
	dst = append(dst, `{"role":`...)
	dst = AppendString(dst, m.Role)
	dst = append(dst, `,"content":`...)
	if m.Content == nil {
		return append(dst, "null}"...), nil
	}
	dst, err := appendContentsShared(dst, m.Content, share)
	if err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}
