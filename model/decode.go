package model

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// The quick content decoder.
//
// Requests, transcripts and replies are mostly content blocks of a few
// plain shapes: an object of known keys with string values.
// decodeQuick reads those in one pass, without encoding/json's validation
// pass and reflection; anything else — an unknown or repeated key, a key
// in another case (encoding/json matches those), invalid UTF-8 or an
// escaped UTF-16 surrogate in a string, a null, a number — makes it give up
// before changing the block, and Content.unmarshalPlain decodes it. Every
// block it does decode is exactly what unmarshalPlain gives
// (FuzzContentDecodeQuick checks it).

// quickKey numbers the keys decodeQuick reads.
type quickKey uint

const (
	qType quickKey = iota
	qText
	qThinking
	qSignature
	qData
	qID
	qName
	qInput
	qToolUseID
	qIsError
	qSource
	qCacheControl
	qContent
)

// quickKeyOf maps a key as written to its number.
func quickKeyOf(k []byte) (quickKey, bool) {
	switch string(k) {
	case "type":
		return qType, true
	case "text":
		return qText, true
	case "thinking":
		return qThinking, true
	case "signature":
		return qSignature, true
	case "data":
		return qData, true
	case "id":
		return qID, true
	case "name":
		return qName, true
	case "input":
		return qInput, true
	case "tool_use_id":
		return qToolUseID, true
	case "is_error":
		return qIsError, true
	case "source":
		return qSource, true
	case "cache_control":
		return qCacheControl, true
	case "content":
		return qContent, true
	}
	return 0, false
}

// decodeQuick decodes b into c if b is a block of a plain shape, and
// reports whether it did; when it reports false, c is unchanged.
func (c *Content) decodeQuick(b []byte) bool {
	var out Content
	var seen uint
	var content []byte
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return false // no type: unmarshalPlain says so
	}
	for {
		key, end, ok := plainKey(b, i)
		if !ok {
			return false
		}
		k, ok := quickKeyOf(key)
		if !ok || seen&(1<<k) != 0 {
			return false
		}
		seen |= 1 << k
		i = jsonscan.SkipSpace(b, end)
		if i >= len(b) || b[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(b, i+1)
		switch k {
		case qInput, qSource, qCacheControl, qContent:
			vend, ok := jsonscan.ValueEnd(b, i)
			if !ok {
				return false
			}
			raw := b[i:vend]
			switch k {
			case qInput:
				if raw[0] == 'n' || !json.Valid(raw) {
					return false
				}
				out.Input = append(json.RawMessage(nil), raw...)
			case qSource:
				if raw[0] != '{' || json.Unmarshal(raw, &out.Source) != nil {
					return false
				}
			case qCacheControl:
				if raw[0] != '{' || json.Unmarshal(raw, &out.CacheControl) != nil {
					return false
				}
			case qContent:
				if !json.Valid(raw) {
					return false
				}
				content = raw
			}
			i = vend
		case qIsError:
			var v bool
			switch {
			case bytes.HasPrefix(b[i:], []byte("true")):
				v, i = true, i+4
			case bytes.HasPrefix(b[i:], []byte("false")):
				i += 5
			default:
				return false
			}
			out.IsError = &v
		default:
			s, end, ok := plainString(b, i)
			if !ok {
				return false
			}
			str := s
			switch k {
			case qType:
				out.Type = str
			case qText:
				out.Text = str
			case qThinking:
				out.Thinking = str
			case qSignature:
				out.Signature = str
			case qData:
				out.Data = str
			case qID:
				out.ID = str
			case qName:
				out.Name = str
			case qToolUseID:
				out.ToolUseID = str
			}
			i = end
		}
		i = jsonscan.SkipSpace(b, i)
		if i >= len(b) {
			return false
		}
		if b[i] == '}' {
			if jsonscan.SkipSpace(b, i+1) != len(b) {
				return false
			}
			break
		}
		if b[i] != ',' {
			return false
		}
		i = jsonscan.SkipSpace(b, i+1)
	}
	if out.Type == "" || !known(out.Type) {
		return false
	}
	if out.Type == TypeToolResult && len(content) > 0 {
		switch content[0] {
		case '"':
			s, end, ok := plainString(content, 0)
			if !ok || end != len(content) {
				return false
			}
			out.Text = s
		case '[':
			if json.Unmarshal(content, &out.Blocks) != nil {
				return false
			}
			if out.Blocks == nil {
				out.Blocks = []Content{}
			}
		case 'n':
		default:
			return false
		}
	}
	*c = out
	return true
}

// plainString returns the value of the JSON string at b[i] and the index
// past it. It gives up (false) on a string that is not valid JSON and on
// the rare forms whose decoding encoding/json defines by replacement:
// invalid UTF-8 and \u escapes of UTF-16 surrogates.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", 0, false
	}
	n := bytes.IndexByte(b[i+1:], '"')
	if n < 0 {
		return "", 0, false
	}
	s := b[i+1 : i+1+n]
	ascii := true
	for _, ch := range s {
		if ch < 0x20 {
			return "", 0, false
		}
		if ch == '\\' {
			return unquoteEscaped(b, i)
		}
		if ch >= 0x80 {
			ascii = false
		}
	}
	if !ascii && !utf8.Valid(s) {
		return "", 0, false
	}
	return string(s), i + n + 2, true
}

// unquoteEscaped is plainString for a string with escapes.
func unquoteEscaped(b []byte, i int) (string, int, bool) {
	out := make([]byte, 0, 64)
	for j := i + 1; j < len(b); {
		ch := b[j]
		switch {
		case ch == '"':
			if !utf8.Valid(out) {
				return "", 0, false
			}
			return string(out), j + 1, true
		case ch < 0x20:
			return "", 0, false
		case ch != '\\':
			// Copy up to the next quote or backslash in one go.
			k := j + 1
			for k < len(b) && b[k] != '"' && b[k] != '\\' && b[k] >= 0x20 {
				k++
			}
			out = append(out, b[j:k]...)
			j = k
			continue
		}
		if j+1 >= len(b) {
			return "", 0, false
		}
		switch e := b[j+1]; e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			if j+6 > len(b) {
				return "", 0, false
			}
			var r rune
			for _, h := range b[j+2 : j+6] {
				switch {
				case '0' <= h && h <= '9':
					r = r<<4 | rune(h-'0')
				case 'a' <= h && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case 'A' <= h && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return "", 0, false
				}
			}
			if 0xd800 <= r && r < 0xe000 {
				return "", 0, false
			}
			out = utf8.AppendRune(out, r)
			j += 6
			continue
		default:
			return "", 0, false
		}
		j += 2
	}
	return "", 0, false
}

// plainKey returns the bytes of the object key at b[i] if it has no
// escapes (every key decodeQuick reads is plain ASCII).
func plainKey(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	n := bytes.IndexByte(b[i+1:], '"')
	if n < 0 {
		return nil, 0, false
	}
	k := b[i+1 : i+1+n]
	if bytes.IndexByte(k, '\\') >= 0 {
		return nil, 0, false
	}
	return k, i + n + 2, true
}
