package quickev

import (
	"strconv"

	"github.com/agentloop/agentloop/internal/jsonscan"
)

// A tool call's input is decoded deep in a turn's stack: under the
// stream's reader when its block is checked against the tool's schema,
// under the dispatcher when the permission checker reads it.
// encoding/json's reflective decoder takes about 2.5 KB of stack for even a
// flat object, which is what most inputs are ({"file_path": "…"}); these
// readers take a few hundred bytes, and leave anything else to
// encoding/json.

// ReadFlatObject calls f with the key and the value's bytes (as they stand
// in data) of each member of data, a JSON object whose values are all
// strings, numbers, true, false or null (no object or array), whose keys
// and strings have no \u escape, with white space where JSON allows it,
// around the object too. It reports false when data is not such an object
// or f returns false. A key given twice is passed twice, in order
// (encoding/json keeps the last).
func ReadFlatObject(data []byte, f func(key string, v []byte) bool) bool {
	i := jsonscan.SkipSpace(data, 0)
	if i >= len(data) || data[i] != '{' {
		return false
	}
	i = jsonscan.SkipSpace(data, i+1)
	if i < len(data) && data[i] == '}' {
		return jsonscan.SkipSpace(data, i+1) == len(data)
	}
	for {
		if i >= len(data) || data[i] != '"' {
			return false
		}
		key, rest, ok := readString(data[i+1:])
		if !ok {
			return false
		}
		i = jsonscan.SkipSpace(data, len(data)-len(rest))
		if i >= len(data) || data[i] != ':' {
			return false
		}
		i = jsonscan.SkipSpace(data, i+1)
		end, ok := flatValueEnd(data, i)
		if !ok || !f(key, data[i:end]) {
			return false
		}
		i = jsonscan.SkipSpace(data, end)
		if i >= len(data) {
			return false
		}
		switch data[i] {
		case ',':
			i = jsonscan.SkipSpace(data, i+1)
		case '}':
			return jsonscan.SkipSpace(data, i+1) == len(data)
		default:
			return false
		}
	}
}

// flatValueEnd returns the end of the value at data[i] when it is one that
// ReadFlatObject accepts: a string without \u escapes, a number, true,
// false or null.
func flatValueEnd(data []byte, i int) (int, bool) {
	if i >= len(data) {
		return 0, false
	}
	switch data[i] {
	case '"':
		_, rest, ok := readString(data[i+1:])
		return len(data) - len(rest), ok
	case '{', '[':
		return 0, false
	}
	end, ok := jsonscan.ValueEnd(data, i)
	if !ok {
		return 0, false
	}
	switch v := data[i:end]; string(v) {
	case "true", "false", "null":
		return end, true
	default:
		return end, isNumber(v)
	}
}

// FlatValue returns v, a value ReadFlatObject gave, as encoding/json
// decodes it into an interface value: a string, a float64, a bool or nil.
// ok is false for a number out of float64's range (encoding/json fails
// there).
func FlatValue(v []byte) (x any, ok bool) {
	switch {
	case len(v) == 0:
		return nil, false
	case v[0] == '"':
		s, rest, ok := readString(v[1:])
		return s, ok && len(rest) == 0
	case string(v) == "true":
		return true, true
	case string(v) == "false":
		return false, true
	case string(v) == "null":
		return nil, true
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil && isNumber(v)
}

// isNumber reports whether v is a JSON number:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(v []byte) bool {
	i := 0
	if i < len(v) && v[i] == '-' {
		i++
	}
	switch {
	case i < len(v) && v[i] == '0':
		i++
	case i < len(v) && v[i] >= '1' && v[i] <= '9':
		i = digits(v, i)
	default:
		return false
	}
	if i < len(v) && v[i] == '.' {
		j := digits(v, i+1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(v) && (v[i] == 'e' || v[i] == 'E') {
		i++
		if i < len(v) && (v[i] == '+' || v[i] == '-') {
			i++
		}
		j := digits(v, i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(v)
}

// digits returns the index past the run of decimal digits at v[i].
func digits(v []byte, i int) int {
	for i < len(v) && v[i] >= '0' && v[i] <= '9' {
		i++
	}
	return i
}
