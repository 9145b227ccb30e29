// Package jsonscan finds the extent of JSON values without decoding them,
// for the hand-written fast paths that decode only part of a document
// (model's content blocks, agentlooptest's request bodies). It does not
// validate: whoever decodes a value it delimits checks it.
package jsonscan

import "bytes"

// SkipSpace returns the index of the first byte at or after i that is not
// JSON white space.
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// ValueEnd returns the end of the JSON value starting at b[i]: a string,
// an object or array (brackets matched outside strings), or a run of
// literal characters (a number, true, false, null). It reports false when
// b ends first.
func ValueEnd(b []byte, i int) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch b[i] {
	case '"':
		return StringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				end, ok := StringEnd(b, i)
				if !ok {
					return 0, false
				}
				i = end
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1, true
				}
			}
			i++
		}
		return 0, false
	default:
		start := i
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
			i++
		}
		return i, i > start
	}
}

// StringEnd returns the index past the JSON string starting at b[i] (a
// quote): past the first quote after it that no odd run of backslashes
// escapes.
func StringEnd(b []byte, i int) (int, bool) {
	i++
	for {
		n := bytes.IndexByte(b[i:], '"')
		if n < 0 {
			return 0, false
		}
		q := i + n
		bs := 0
		for j := q - 1; j >= i && b[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}
