package model

import (
	"encoding/json"
	"fmt"
)

// The oracle of the encoding tests: the reflection-based encoder
// Content.MarshalJSON used before the hand-written one, kept verbatim so
// the two can be compared on any input.

// oracleContent is a Content that marshals the old way.
type oracleContent Content

// oracleBlocks converts blocks, nil staying nil.
func oracleBlocks(bs []Content) []oracleContent {
	if bs == nil {
		return nil
	}
	out := make([]oracleContent, len(bs))
	for i, b := range bs {
		out[i] = oracleContent(b)
	}
	return out
}

// oracleMessage is a Message that marshals the old way.
type oracleMessage struct {
	Role    string          `json:"role"`
	Content []oracleContent `json:"content"`
}

// MarshalJSON is the wire format as Content.MarshalJSON wrote it through
// reflection before AppendJSON existed, field by field with json.Marshal.
func (o oracleContent) MarshalJSON() ([]byte, error) {
	c := Content(o)
	if !known(c.Type) && len(c.Raw) > 0 {
		return c.Raw, nil
	}
	m := orderedObject{}
	switch c.Type {
	case TypeText:
		m.add("type", c.Type)
		m.add("text", c.Text)
	case TypeThinking:
		m.add("type", c.Type)
		m.add("thinking", c.Thinking)
		m.add("signature", c.Signature)
	case TypeRedactedThinking:
		m.add("type", c.Type)
		m.add("data", c.Data)
	case TypeToolUse, TypeServerToolUse:
		m.add("type", c.Type)
		m.add("id", c.ID)
		m.add("name", c.Name)
		in := c.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		m.add("input", in)
	case TypeToolResult:
		m.add("tool_use_id", c.ToolUseID)
		m.add("type", c.Type)
		if c.Blocks != nil {
			m.add("content", oracleBlocks(c.Blocks))
		} else {
			m.add("content", c.Text)
		}
		if c.IsError != nil {
			m.add("is_error", *c.IsError)
		}
	case TypeToolReference:
		m.add("type", c.Type)
		m.add("tool_name", c.ToolName)
	case TypeImage, TypeDocument:
		m.add("type", c.Type)
		m.add("source", c.Source)
	default:
		type plain Content
		return json.Marshal(plain(c))
	}
	if c.CacheControl != nil {
		m.add("cache_control", c.CacheControl)
	}
	return m.marshal()
}

// orderedObject marshals keys in insertion order.
type orderedObject struct {
	keys []string
	vals []any
}

func (o *orderedObject) add(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

func (o *orderedObject) marshal() ([]byte, error) {
	buf := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, fmt.Errorf("field %s: %w", k, err)
		}
		buf = append(buf, vb...)
	}
	return append(buf, '}'), nil
}
