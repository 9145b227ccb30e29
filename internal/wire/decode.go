package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// DecodeError is why a line could not be decoded. Type and RequestID
// hold what could be read before the fault, so that the engine can
// still answer a control_request whose body is wrong.
type DecodeError struct {
	Type      string // the line's type; "" when it has none or is not JSON
	Subtype   string // a control_request's subtype, when read
	RequestID string // a control line's request_id, when read
	Field     string // the member at fault, as a dotted path ("request.mode"); "" for the line as a whole
	Reason    string // what is wrong, e.g. "is missing", "want a string, got number"
}

func (e *DecodeError) Error() string {
	var b strings.Builder
	b.WriteString("wire: ")
	if e.Type != "" {
		b.WriteString(e.Type)
		if e.Subtype != "" {
			b.WriteString(" " + e.Subtype)
		}
		b.WriteString(": ")
	}
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Reason)
	return b.String()
}

// fieldError is a fault in one member, its path relative to the object
// being decoded; the callers up the tree prefix their own part.
type fieldError struct {
	path   string
	reason string
}

func (e *fieldError) Error() string {
	if e.path == "" {
		return e.reason
	}
	return e.path + ": " + e.reason
}

// asField is err as a *fieldError; any other error becomes the reason
// of one about the whole object.
func asField(err error) *fieldError {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe
	}
	return &fieldError{reason: err.Error()}
}

func (e *fieldError) under(parent string) *fieldError {
	p := parent
	if e.path != "" {
		p += "." + e.path
	}
	return &fieldError{path: p, reason: e.reason}
}

// quote shows a value read from the input in an error, cut short.
func quote(s string) string {
	const max = 40
	if len(s) > max {
		return fmt.Sprintf("%q…", s[:max])
	}
	return fmt.Sprintf("%q", s)
}

// jsonKind names the JSON kind of a raw value, for errors.
func jsonKind(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// wantKind names the JSON kind a Go type is read from.
func wantKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "a whole number"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// objectOf reads raw as a JSON object.
func objectOf(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if k := jsonKind(raw); k != "object" {
		return nil, &fieldError{reason: "want an object, got " + k}
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &fieldError{reason: err.Error()}
	}
	return m, nil
}

// fieldInfo is one json-tagged field of a struct decoded by decodeObject.
type fieldInfo struct {
	name     string
	index    int
	required bool
}

func fieldsOf(t reflect.Type) []fieldInfo {
	var out []fieldInfo
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, fieldInfo{name: name, index: i, required: f.Tag.Get("wire") == "required"})
	}
	return out
}

// decodeObject reads m into v, a pointer to a struct whose fields carry
// json tags; a field tagged wire:"required" must be present and not null.
// Each member is decoded on its own, so an error names it. It returns the
// members v has no field for, nil when there are none; skip lists
// members read elsewhere (such as "type").
func decodeObject(m map[string]json.RawMessage, v any, skip ...string) (map[string]json.RawMessage, error) {
	rv := reflect.ValueOf(v).Elem()
	known := map[string]bool{}
	for _, s := range skip {
		known[s] = true
	}
	for _, f := range fieldsOf(rv.Type()) {
		known[f.name] = true
		raw, ok := m[f.name]
		if !ok || jsonKind(raw) == "null" {
			if f.required {
				return nil, &fieldError{path: f.name, reason: "is missing"}
			}
			continue
		}
		fv := rv.Field(f.index)
		if err := json.Unmarshal(raw, fv.Addr().Interface()); err != nil {
			return nil, memberError(f.name, fv.Type(), raw, err)
		}
	}
	var extra map[string]json.RawMessage
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !known[k] {
			if extra == nil {
				extra = map[string]json.RawMessage{}
			}
			extra[k] = m[k]
		}
	}
	return extra, nil
}

// memberError turns the error of decoding member name into a fieldError.
func memberError(name string, t reflect.Type, raw json.RawMessage, err error) *fieldError {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.under(name)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path := name
		if te.Field != "" {
			path += "." + te.Field
		}
		if te.Type == nil {
			return &fieldError{path: path, reason: fmt.Sprintf("want %s, got %s", wantKind(t), jsonKind(raw))}
		}
		return &fieldError{path: path, reason: fmt.Sprintf("want %s, got %s", wantKind(te.Type), te.Value)}
	}
	return &fieldError{path: name, reason: err.Error()}
}

// encodeObject writes v (a struct value, of a type without a MarshalJSON
// method) as a JSON object, with the members of extra that v does not
// set and then the members of fixed, which win. Members come sorted by
// name.
func encodeObject(v any, extra map[string]json.RawMessage, fixed map[string]any) ([]byte, error) {
	b, err := marshal(v)
	if err != nil {
		return nil, err
	}
	m := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, raw := range extra {
		if _, ok := m[k]; !ok {
			m[k] = raw
		}
	}
	for k, val := range fixed {
		b, err := marshal(val)
		if err != nil {
			return nil, err
		}
		m[k] = b
	}
	return marshal(m)
}

// marshal is json.Marshal without the escaping of <, > and &, which
// the other side does not need.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
