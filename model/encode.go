package model

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// This file writes the wire format without reflection. Every AppendJSON
// method appends exactly the bytes encoding/json's Marshal produces for the
// value (HTML-safe string escaping, compacted raw JSON, the same field order),
// so a request body is the same whichever way it was made; the tests check
// that equivalence.

// AppendJSON appends the block's wire format to dst, the bytes json.Marshal
// would give, and returns the extended slice. It fails, leaving the contents
// of dst past its original length undefined, when a raw JSON field (Input,
// Raw) is not valid JSON.
func (c *Content) AppendJSON(dst []byte) ([]byte, error) {
	if c.Sealed() {
		return appendSealed(dst, c)
	}
	if !known(c.Type) && len(c.Raw) > 0 {
		return AppendRawJSON(dst, c.Raw)
	}
	var err error
	switch c.Type {
	case TypeText:
		dst = append(dst, `{"type":"text","text":`...)
		dst = AppendString(dst, c.Text)
	case TypeThinking:
		dst = append(dst, `{"type":"thinking","thinking":`...)
		dst = AppendString(dst, c.Thinking)
		dst = append(dst, `,"signature":`...)
		dst = AppendString(dst, c.Signature)
	case TypeRedactedThinking:
		dst = append(dst, `{"type":"redacted_thinking","data":`...)
		dst = AppendString(dst, c.Data)
	case TypeToolUse, TypeServerToolUse:
		dst = append(dst, `{"type":`...)
		dst = AppendString(dst, c.Type)
		dst = append(dst, `,"id":`...)
		dst = AppendString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = AppendString(dst, c.Name)
		dst = append(dst, `,"input":`...)
		if len(c.Input) == 0 {
			dst = append(dst, "{}"...)
		} else if dst, err = AppendRawJSON(dst, c.Input); err != nil {
			return dst, fmt.Errorf("field input: %w", err)
		}
	case TypeToolResult:
		dst = append(dst, `{"tool_use_id":`...)
		dst = AppendString(dst, c.ToolUseID)
		dst = append(dst, `,"type":"tool_result","content":`...)
		if c.Blocks != nil {
			if dst, err = appendContents(dst, c.Blocks); err != nil {
				return dst, fmt.Errorf("field content: %w", err)
			}
		} else {
			dst = AppendString(dst, c.Text)
		}
		if c.IsError != nil {
			dst = append(dst, `,"is_error":`...)
			dst = appendBool(dst, *c.IsError)
		}
	case TypeToolReference:
		dst = append(dst, `{"type":"tool_reference","tool_name":`...)
		dst = AppendString(dst, c.ToolName)
	case TypeImage, TypeDocument:
		dst = append(dst, `{"type":`...)
		dst = AppendString(dst, c.Type)
		dst = append(dst, `,"source":`...)
		dst = c.Source.appendJSON(dst)
	default:
		// A type this package does not model and no raw JSON to send:
		// the fields as they are, through reflection (rare).
		type plain Content
		b, err := json.Marshal(plain(*c))
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	if c.CacheControl != nil {
		dst = append(dst, `,"cache_control":`...)
		dst = c.CacheControl.appendJSON(dst)
	}
	return append(dst, '}'), nil
}

// appendContents appends blocks as a JSON array.
func appendContents(dst []byte, blocks []Content) ([]byte, error) {
	return appendContentsShared(dst, blocks, nil)
}

// appendContentsShared is appendContents handing each sealed block without
// a breakpoint to share, when it is set, instead of appending its JSON
// (see [Message.AppendJSONShared]).
func appendContentsShared(dst []byte, blocks []Content, share func(dst, block []byte) []byte) ([]byte, error) {
	dst = append(dst, '[')
	for i := range blocks {
		if i > 0 {
			dst = append(dst, ',')
		}
		c := &blocks[i]
		if share != nil && c.Sealed() && c.CacheControl == nil {
			if err := sealShape(c); err != nil {
				return dst, fmt.Errorf("block %d: %w", i, err)
			}
			dst = share(dst, c.Raw)
			continue
		}
		var err error
		if dst, err = c.AppendJSON(dst); err != nil {
			return dst, fmt.Errorf("block %d: %w", i, err)
		}
	}
	return append(dst, ']'), nil
}

// AppendJSON appends the message's wire format to dst, the bytes
// json.Marshal would give, and returns the extended slice. It fails as
// [Content.AppendJSON] does.
func (m *Message) AppendJSON(dst []byte) ([]byte, error) { return m.AppendJSONShared(dst, nil) }

// appendJSON appends the source object (null for a nil source).
func (s *Source) appendJSON(dst []byte) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"type":`...)
	dst = AppendString(dst, s.Type)
	for _, f := range [...]struct{ key, v string }{{`,"media_type":`, s.MediaType}, {`,"data":`, s.Data}, {`,"url":`, s.URL}} {
		if f.v != "" {
			dst = append(dst, f.key...)
			dst = AppendString(dst, f.v)
		}
	}
	return append(dst, '}')
}

// CacheControlLast reports whether c's JSON, as [Content.AppendJSON]
// writes it, ends with its cache_control field just before the closing
// brace, as it does for every block type this package models. A cache
// breakpoint can then be put on an encoded block, or taken off it, by
// splicing `,"cache_control":…` there, without encoding the block again.
func (c *Content) CacheControlLast() bool { return known(c.Type) }

// AppendJSON appends the cache_control object's wire format to dst, the
// bytes json.Marshal would give.
func (c *CacheControl) AppendJSON(dst []byte) []byte { return c.appendJSON(dst) }

// appendJSON appends the cache_control object.
func (c *CacheControl) appendJSON(dst []byte) []byte {
	dst = append(dst, `{"type":`...)
	dst = AppendString(dst, c.Type)
	if c.TTL != "" {
		dst = append(dst, `,"ttl":`...)
		dst = AppendString(dst, c.TTL)
	}
	return append(dst, '}')
}

func appendBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, "true"...)
	}
	return append(dst, "false"...)
}

const hexDigits = "0123456789abcdef"

// plainASCII[b] is true for the ASCII bytes a JSON string holds as they
// are: 0x20 to 0x7f, but for a quote, a backslash and the HTML-sensitive
// <, > and &. plainASCIIHTML lets <, > and & through as well. They are
// spelled out (a test checks them) so that no code runs to build them
// when the process starts.
var plainASCII = [utf8.RuneSelf]bool{
	' ': true, '!': true, '#': true, '$': true, '%': true, '\'': true, '(': true, ')': true, '*': true, '+': true, ',': true, '-': true,
	'.': true, '/': true, '0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	':': true, ';': true, '=': true, '?': true, '@': true, 'A': true, 'B': true, 'C': true, 'D': true, 'E': true, 'F': true, 'G': true,
	'H': true, 'I': true, 'J': true, 'K': true, 'L': true, 'M': true, 'N': true, 'O': true, 'P': true, 'Q': true, 'R': true, 'S': true,
	'T': true, 'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true, '[': true, ']': true, '^': true, '_': true, '`': true,
	'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true, 'g': true, 'h': true, 'i': true, 'j': true, 'k': true, 'l': true,
	'm': true, 'n': true, 'o': true, 'p': true, 'q': true, 'r': true, 's': true, 't': true, 'u': true, 'v': true, 'w': true, 'x': true,
	'y': true, 'z': true, '{': true, '|': true, '}': true, '~': true, 0x7f: true,
}

var plainASCIIHTML = [utf8.RuneSelf]bool{
	' ': true, '!': true, '#': true, '$': true, '%': true, '&': true, '\'': true, '(': true, ')': true, '*': true, '+': true, ',': true,
	'-': true, '.': true, '/': true, '0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true,
	'9': true, ':': true, ';': true, '<': true, '=': true, '>': true, '?': true, '@': true, 'A': true, 'B': true, 'C': true, 'D': true,
	'E': true, 'F': true, 'G': true, 'H': true, 'I': true, 'J': true, 'K': true, 'L': true, 'M': true, 'N': true, 'O': true, 'P': true,
	'Q': true, 'R': true, 'S': true, 'T': true, 'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true, '[': true, ']': true,
	'^': true, '_': true, '`': true, 'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true, 'g': true, 'h': true, 'i': true,
	'j': true, 'k': true, 'l': true, 'm': true, 'n': true, 'o': true, 'p': true, 'q': true, 'r': true, 's': true, 't': true, 'u': true,
	'v': true, 'w': true, 'x': true, 'y': true, 'z': true, '{': true, '|': true, '}': true, '~': true, 0x7f: true,
}

// AppendString appends s as a JSON string, escaped as json.Marshal escapes
// it: quotes, backslashes and control characters; <, > and & as \u003c,
// \u003e, \u0026; U+2028 and U+2029; invalid UTF-8 as \ufffd.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s, &plainASCII) }

// AppendStringKeepHTML is AppendString leaving <, > and & as they are, as
// a json.Encoder with SetEscapeHTML(false) writes a string.
func AppendStringKeepHTML(dst []byte, s string) []byte { return appendString(dst, s, &plainASCIIHTML) }

// appendString appends s as a JSON string; plain says which ASCII bytes
// are written as they are.
func appendString(dst []byte, s string, plain *[utf8.RuneSelf]bool) []byte {
	dst = append(dst, '"')
	start := 0 // s[start:i] is still to be copied
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if plain[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendRawJSON appends raw as json.Marshal writes a json.RawMessage:
// compacted (no whitespace between tokens), with <, > and & and U+2028 and
// U+2029 in strings escaped. A nil raw is written as null. It fails when raw
// is not valid JSON (an empty raw included).
func AppendRawJSON(dst []byte, raw []byte) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	if !json.Valid(raw) {
		return dst, fmt.Errorf("invalid JSON: %.40q", raw)
	}
	inString, escaped := false, false
	start := 0 // raw[start:i] is still to be copied
	for i := 0; i < len(raw); i++ {
		b := raw[i]
		if !inString {
			switch b {
			case ' ', '\t', '\n', '\r':
				dst = append(dst, raw[start:i]...)
				start = i + 1
			case '"':
				inString = true
			}
			continue
		}
		switch {
		case escaped:
			escaped = false
		case b == '\\':
			escaped = true
		case b == '"':
			inString = false
		case b == '<' || b == '>' || b == '&':
			dst = append(dst, raw[start:i]...)
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xf])
			start = i + 1
		case b == 0xe2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xa8:
			dst = append(dst, raw[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xf])
			i += 2
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), nil
}
