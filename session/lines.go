package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"regexp"
	"strings"

	"github.com/agentloop/agentloop/internal/lazy"
)

// maxLineWarnings is how many skipped lines a transcript's Warnings name
// one by one; the rest are counted in one more warning.
const maxLineWarnings = 10

// lines is the result of reading a transcript's lines leniently.
type lines struct {
	entries  []Entry
	warnings []string
	skipped  int // malformed lines left out, the truncated final line included
	// bridge maps the uuid of a conversation entry that was skipped (or
	// that an entry after a skipped line names as its parent but that no
	// line holds) to the uuid the chain continues with: the skipped
	// entry's own parent when the line still shows it, else the last
	// conversation entry before the skipped line. It keeps the chain whole
	// across a damaged line.
	bridge map[string]string
}

// rawLine is one line of a transcript file: its text without the newline,
// and whether it is the last one with no newline after it (a write that
// may not have finished).
type rawLine struct {
	b    []byte
	last bool
}

// nonBlankLines yields the non-blank lines of data with their 1-based line
// numbers.
func nonBlankLines(data []byte) iter.Seq2[int, rawLine] {
	return func(yield func(int, rawLine) bool) {
		line := 0
		for len(data) > 0 {
			line++
			i := bytes.IndexByte(data, '\n')
			last := i < 0
			var b []byte
			if last {
				b, data = data, nil
			} else {
				b, data = data[:i], data[i+1:]
			}
			if len(bytes.TrimSpace(b)) == 0 {
				continue
			}
			if !yield(line, rawLine{b, last}) {
				return
			}
		}
	}
}

// readLines reads a transcript's lines the way the reference does: a line
// that is not a valid entry is left out and everything else is kept. Each
// skipped line is described in warnings by name:line and what was wrong,
// in plain words (up to maxLineWarnings of them, then a count). Blank
// lines are ignored.
func readLines(data []byte, name string) lines {
	var r lines
	lastChain := "" // uuid of the last conversation entry read
	afterSkip := "" // lastChain when the previous non-blank line was skipped
	skippedAt := false
	warn := func(s string) {
		if r.skipped <= maxLineWarnings {
			r.warnings = append(r.warnings, s)
		}
	}
	for line, l := range nonBlankLines(data) {
		b, last := l.b, l.last
		e, err := ParseEntry(b)
		if err != nil {
			r.skipped++
			if last {
				warn(fmt.Sprintf("%s:%d: skipped the final line: it is cut short (%d bytes, no newline), a write that did not finish", name, line, len(b)))
			} else {
				if !json.Valid(b) {
					var v any
					if jerr := json.Unmarshal(b, &v); jerr != nil {
						err = jerr // say why it is not JSON, not that it is no object
					}
				}
				warn(fmt.Sprintf("%s:%d: skipped a malformed line: %s", name, line, plainReason(err)))
			}
			if u, p := lineLinks(b); u != "" {
				if p == "" {
					p = lastChain
				}
				r.addBridge(u, p)
			}
			if !skippedAt {
				afterSkip = lastChain
			}
			skippedAt = true
			continue
		}
		if IsChainType(e.Type) && e.UUID != "" {
			if skippedAt && e.ParentUUID != "" {
				// The parent may be the skipped line; if no line holds
				// it, continue with the entry before the damage.
				r.addBridge(e.ParentUUID, afterSkip)
			}
			lastChain = e.UUID
			skippedAt = false
		}
		r.entries = append(r.entries, e)
	}
	if n := r.skipped - maxLineWarnings; n > 0 {
		r.warnings = append(r.warnings, fmt.Sprintf("%s: %d more malformed lines skipped", name, n))
	}
	// A bridge from a uuid that some line does hold is not needed.
	for _, e := range r.entries {
		if IsChainType(e.Type) && e.UUID != "" {
			delete(r.bridge, e.UUID)
		}
	}
	return r
}

func (r *lines) addBridge(from, to string) {
	if from == "" || from == to {
		return
	}
	if _, ok := r.bridge[from]; ok {
		return
	}
	if r.bridge == nil {
		r.bridge = map[string]string{}
	}
	r.bridge[from] = to
}

var linkREOnce lazy.Value[*regexp.Regexp] // the value of linkRE, built at its first use

// linkRE finds a "uuid" or "parentUuid" string field in a damaged line.
// It is compiled when first needed: its bounded repetition makes a large
// program, which every process would otherwise build at start-up.
func linkRE() *regexp.Regexp { return linkREOnce.Get(compileLinkRE) }

func compileLinkRE() *regexp.Regexp {
	return regexp.MustCompile(`"(uuid|parentUuid)"\s*:\s*"([^"\\]{1,100})"`)
}

// lineLinks returns the uuid and parentUuid a damaged line still shows,
// from its JSON when it is an object, else found in its text.
func lineLinks(b []byte) (uuid, parent string) {
	var m map[string]any
	if json.Unmarshal(b, &m) == nil {
		uuid, _ = m["uuid"].(string)
		parent, _ = m["parentUuid"].(string)
		if t, _ := m["type"].(string); t != "" && !IsChainType(t) {
			return "", ""
		}
		return uuid, parent
	}
	for _, sm := range linkRE().FindAllSubmatch(b, -1) {
		switch string(sm[1]) {
		case "uuid":
			if uuid == "" {
				uuid = string(sm[2])
			}
		case "parentUuid":
			if parent == "" {
				parent = string(sm[2])
			}
		}
	}
	return uuid, parent
}

// plainReason says what is wrong with a line in words: JSON decoding
// errors are rewritten without Go type names.
func plainReason(err error) string {
	msg := err.Error()
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		msg = strings.Replace(msg, te.Error(), typeMismatch(te), 1)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg = strings.Replace(msg, se.Error(), fmt.Sprintf("not valid JSON (%s, at byte %d)", se.Error(), se.Offset), 1)
	}
	msg = strings.ReplaceAll(msg, "json: ", "")
	if strings.Contains(msg, "Go ") || strings.Contains(msg, "json.") || strings.Contains(msg, "model.") {
		return "its JSON does not have the shape of a transcript entry"
	}
	return msg
}

// typeMismatch describes a JSON value of the wrong kind.
func typeMismatch(te *json.UnmarshalTypeError) string {
	got := te.Value
	if f, _, ok := strings.Cut(got, " "); ok {
		got = f // "number 1.5" → "number"
	}
	switch got {
	case "array":
		got = "a list"
	case "object":
		got = "an object"
	case "bool":
		got = "true or false"
	default:
		got = "a " + got
	}
	s := fmt.Sprintf("expected %s, found %s", kindWords(te.Type), got)
	if te.Field != "" {
		// The path's last key is the field of the line; earlier ones may
		// name Go types.
		f := te.Field[strings.LastIndexByte(te.Field, '.')+1:]
		s = fmt.Sprintf("field %q: %s", f, s)
	}
	return s
}

// kindWords names the JSON value a Go type is decoded from.
func kindWords(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 && t.Name() == "RawMessage" {
			return "a JSON value"
		}
		return "a list"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another kind of value"
}
