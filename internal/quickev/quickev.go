// Package quickev reads by hand the stream events of the Messages API
// that come by the hundred in a reply (content_block_delta,
// content_block_stop) or that would otherwise be decoded twice (the type of
// an event, a block start's block). A reader accepts only its exact shape
// and otherwise reports !ok, for the caller to decode the event the general
// way; what it accepts, it reads as encoding/json would (the provider's
// tests and fuzz target compare them on any input). The provider and the
// engine both read events with it.
package quickev

import (
	"bytes"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// Delta is a content_block_delta read by [ReadDelta]: the block's index,
// the delta's type, and its one payload field (text, partial_json,
// thinking or signature) with its value.
type Delta struct {
	Index int
	Type  string
	Field string
	Value string
}

const (
	deltaPrefix = `{"type":"content_block_delta","index":`
	stopPrefix  = `{"type":"content_block_stop","index":`
)

// ReadDelta reads data of exactly the shape
//
//	{"type":"content_block_delta","index":N,"delta":{"type":"T","F":"V"}}
//
// with N a small non-negative integer, T made of lowercase letters and
// underscores, F one of the payload fields, and V a string without \u
// escapes or invalid UTF-8.
func ReadDelta(data []byte) (d Delta, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(deltaPrefix))
	if !ok {
		return d, false
	}
	if d.Index, rest, ok = readIndex(rest); !ok {
		return d, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"delta":{"type":"`)); !ok {
		return d, false
	}
	i := 0
	for i < len(rest) && (rest[i] >= 'a' && rest[i] <= 'z' || rest[i] == '_') {
		i++
	}
	if i == 0 || i >= len(rest) || rest[i] != '"' {
		return d, false
	}
	d.Type, rest = deltaType(rest[:i]), rest[i+1:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"`)); !ok {
		return d, false
	}
	for _, f := range [...]string{"text", "partial_json", "thinking", "signature"} {
		if after, found := bytes.CutPrefix(rest, []byte(f+`":"`)); found {
			d.Field, rest = f, after
			break
		}
	}
	if d.Field == "" {
		return d, false
	}
	if d.Value, rest, ok = readString(rest); !ok {
		return d, false
	}
	return d, string(rest) == "}}"
}

// ReadStop reads data of exactly the shape
// {"type":"content_block_stop","index":N}.
func ReadStop(data []byte) (index int, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(stopPrefix))
	if !ok {
		return 0, false
	}
	if index, rest, ok = readIndex(rest); !ok {
		return 0, false
	}
	return index, string(rest) == "}"
}

// readIndex reads a non-negative integer of at most 6 digits without
// leading zeros.
func readIndex(b []byte) (n int, rest []byte, ok bool) {
	i := 0
	for i < len(b) && i < 7 && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		i++
	}
	if i == 0 || i > 6 || (i > 1 && b[0] == '0') {
		return 0, b, false
	}
	return n, b[i:], true
}

// readString reads the rest of a JSON string whose opening quote has been
// read, up to and including its closing quote. It handles the one-letter
// escapes only; a \u escape, a control character or invalid UTF-8 makes it
// report !ok.
func readString(b []byte) (s string, rest []byte, ok bool) {
	var buf []byte // the value so far, once an escape was met
	start := 0     // b[start:i] is still to be copied to buf
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			seg := b[start:i]
			if !utf8.Valid(seg) {
				return "", b, false
			}
			if buf == nil {
				return string(seg), b[i+1:], true
			}
			return string(append(buf, seg...)), b[i+1:], true
		case c < 0x20:
			return "", b, false
		case c == '\\':
			if i+1 >= len(b) {
				return "", b, false
			}
			var r byte
			switch b[i+1] {
			case '"', '\\', '/':
				r = b[i+1]
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			default:
				return "", b, false // \u and anything invalid
			}
			seg := b[start:i]
			if !utf8.Valid(seg) {
				return "", b, false
			}
			buf = append(append(buf, seg...), r)
			i++
			start = i + 1
		}
	}
	return "", b, false
}

// deltaType returns b as a string, without allocating for the delta types
// the API sends.
func deltaType(b []byte) string {
	for _, t := range [...]string{"text_delta", "input_json_delta", "thinking_delta", "signature_delta", "citations_delta"} {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}

// FirstType reads the type of an object (an event, a content block)
// without decoding it. It accepts data that begins {"type":"T" with T a
// string without escapes, and whose other top-level keys cannot be read as
// "type" by encoding/json (which matches keys regardless of case, escapes
// included): no other key folds to it and none has an escape. It does not
// validate the rest: a caller that needs the object valid decodes it, and
// that fails on invalid JSON.
func FirstType(data []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(data, []byte(`{"type":"`))
	if !ok {
		return "", false
	}
	end := bytes.IndexByte(rest, '"')
	if end <= 0 || bytes.IndexByte(rest[:end], '\\') >= 0 {
		return "", false
	}
	typ := rest[:end]
	b, i := rest, end+1
	for {
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return "", false
		}
		if b[i] == '}' {
			if jsonscan.SkipSpace(b, i+1) != len(b) {
				return "", false
			}
			return internType(typ), true
		}
		if b[i] != ',' {
			return "", false
		}
		i = jsonscan.SkipSpace(b, i+1)
		if i >= len(b) || b[i] != '"' {
			return "", false
		}
		keyEnd, ok := jsonscan.StringEnd(b, i)
		if !ok {
			return "", false
		}
		key := b[i+1 : keyEnd-1]
		if bytes.IndexByte(key, '\\') >= 0 || bytes.EqualFold(key, []byte("type")) {
			return "", false
		}
		i = jsonscan.SkipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return "", false
		}
		if i, ok = jsonscan.ValueEnd(b, jsonscan.SkipSpace(b, i+1)); !ok {
			return "", false
		}
	}
}

// internType returns b as a string, without allocating for the event and
// block types the API sends most.
func internType(b []byte) string {
	for _, t := range [...]string{"message_start", "content_block_start", "message_delta", "text", "tool_use", "thinking"} {
		if string(b) == t {
			return t
		}
	}
	return string(b)
}

const blockStartPrefix = `{"type":"content_block_start","index":`

// ReadBlockStart reads data of exactly the shape
//
//	{"type":"content_block_start","index":N,"content_block":B}
//
// returning N and B's bytes, which it delimits without validating: the
// caller decodes B, and that fails if B is not valid JSON, in which case
// neither is data. So what it accepts, encoding/json reads alike.
func ReadBlockStart(data []byte) (index int, block []byte, ok bool) {
	rest, ok := bytes.CutPrefix(data, []byte(blockStartPrefix))
	if !ok {
		return 0, nil, false
	}
	if index, rest, ok = readIndex(rest); !ok {
		return 0, nil, false
	}
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"content_block":`)); !ok || len(rest) == 0 || rest[0] != '{' {
		return 0, nil, false
	}
	end, ok := jsonscan.ValueEnd(rest, 0)
	if !ok || string(rest[end:]) != "}" {
		return 0, nil, false
	}
	return index, rest[:end], true
}
