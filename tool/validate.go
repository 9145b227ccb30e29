package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/agentloop/agentloop/internal/quickev"
)

// ErrInvalidSchema reports a tool schema that cannot be used.
var ErrInvalidSchema = errors.New("invalid tool schema")

// ValidationError lists what is wrong with a tool call's input. Its Error
// text is what the model is told.
type ValidationError struct {
	Tool   string
	Issues []string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("InputValidationError: %s failed due to the following issue%s:\n%s",
		e.Tool, plural(len(e.Issues)), strings.Join(e.Issues, "\n"))
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// Schema is a compiled input schema. It is immutable once compiled and
// safe for concurrent use: [CompileSchema] hands the same *Schema to every
// caller with the same schema text, in any session of the process.
// Validate reads it and never writes it (the resolved jsonschema-go schema
// keeps per-call state in a fresh value each call, and unmarshals each
// default into a new value).
type Schema struct {
	raw      json.RawMessage
	props    map[string]string // property name -> JSON type, "" when unknown
	required []string
	closed   bool        // additionalProperties false
	flat     *flatSchema // nil unless the schema is flat (validate_flat.go)

	// The general validator's form of the schema: resolved when compiled,
	// or, for a schema compileFlat took, at its first use (general).
	once       sync.Once
	resolved   *jsonschema.Resolved
	resolveErr error
}

// CompileSchema parses and resolves a JSON schema for tool input. The
// result is shared: schemas are compiled once per process and cached by
// their exact text (see schemacache.go), so callers must treat it as
// read-only. raw is not retained; the caller may reuse it.
func CompileSchema(raw json.RawMessage) (*Schema, error) { return compiled.get(raw) }

// compileSchema is CompileSchema without the cache. The result keeps raw.
// A flat schema within what compileFlat vouches for is compiled without
// the general validator, which it gets at its first use; any other goes
// through compileGeneral.
func compileSchema(raw json.RawMessage) (*Schema, error) {
	var generic any
	if json.Unmarshal(raw, &generic) == nil {
		if c := compileFlat(raw, generic); c != nil {
			return c, nil
		}
	}
	return compileGeneral(raw)
}

// compileGeneral compiles raw with the general validator (jsonschema-go),
// which also checks that the schema is one it can use.
func compileGeneral(raw json.RawMessage) (*Schema, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	if s.Type != "" && s.Type != "object" {
		return nil, fmt.Errorf("%w: input schema must have type object, not %q", ErrInvalidSchema, s.Type)
	}
	var generic any
	_ = json.Unmarshal(raw, &generic)
	if err := checkTypes(generic, "schema"); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	c := &Schema{raw: raw, props: map[string]string{}, required: s.Required, flat: newFlatSchema(generic)}
	c.once.Do(func() { c.resolved = rs })
	for name, p := range s.Properties {
		c.props[name] = p.Type
	}
	c.closed = s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
	if s.AdditionalProperties != nil {
		b, _ := json.Marshal(s.AdditionalProperties)
		c.closed = string(b) == "false"
	}
	return c, nil
}

// Raw returns the schema's text. It is shared; do not modify it.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// Validate checks input against the schema and applies its defaults. It
// returns the input to use (defaults filled in) or a *ValidationError
// naming every problem found.
//
// The decoding and the checks are two functions (not inlined), so that the
// decoder's recursion does not stack on the checks' larger frame: the loop
// validates a call's input as its block arrives, deep in a turn's stack.
func (s *Schema) Validate(toolName string, input json.RawMessage) (json.RawMessage, error) {
	input = bytes.TrimSpace(input)
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	obj := decodeObject(input)
	if obj == nil {
		return nil, &ValidationError{Tool: toolName, Issues: []string{"The input must be a JSON object"}}
	}
	return s.check(toolName, input, obj)
}

// decodeObject decodes input, a JSON object; nil when it is not one. A
// flat object (no object or array in it, most tools' input) is read by
// quickev, which reads it as encoding/json does with a fraction of its
// stack; anything else goes to encoding/json.
//
//go:noinline
func decodeObject(input json.RawMessage) map[string]any {
	obj := map[string]any{}
	if quickev.ReadFlatObject(input, func(k string, v []byte) bool {
		x, ok := quickev.FlatValue(v)
		obj[k] = x
		return ok
	}) {
		return obj
	}
	return decodeObjectJSON(input)
}

// decodeObjectJSON is decodeObject with encoding/json.
//
//go:noinline
func decodeObjectJSON(input json.RawMessage) map[string]any {
	var obj map[string]any
	if json.Unmarshal(input, &obj) != nil {
		return nil
	}
	return obj
}

// check is Validate for input, decoded as obj.
//
//go:noinline
func (s *Schema) check(toolName string, input json.RawMessage, obj map[string]any) (json.RawMessage, error) {
	var issues []string
	for _, r := range s.required {
		if _, ok := obj[r]; !ok {
			issues = append(issues, fmt.Sprintf("The required parameter `%s` is missing", r))
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		want, known := s.props[k]
		if !known {
			if s.closed {
				issues = append(issues, fmt.Sprintf("An unexpected parameter `%s` was provided", k))
			}
			continue
		}
		if got := jsonType(obj[k]); want != "" && !typeMatches(want, got) {
			issues = append(issues, fmt.Sprintf("The parameter `%s` type is expected as `%s` but provided as `%s`", k, want, got))
		}
	}
	flat := len(issues) == 0 && s.flat != nil && s.flat.valid(obj)
	var general *jsonschema.Resolved
	if len(issues) == 0 && !flat {
		var err error
		if general, err = s.general(); err != nil {
			issues = append(issues, "The tool's input schema cannot be used: "+err.Error())
		} else if err := general.Validate(obj); err != nil {
			issues = append(issues, err.Error())
		}
	}
	if len(issues) > 0 {
		return nil, &ValidationError{Tool: toolName, Issues: issues}
	}
	if !flat { // a flat schema's valid input has every default already
		if err := general.ApplyDefaults(&obj); err != nil {
			return input, nil
		}
	}
	if len(obj) == len(keys) && compactJSON(input) {
		// No default was added: the input is already what the
		// re-encoding below would give, but for the escaping of <, >
		// and &, which json.Marshal adds and the API does not need.
		if !bytes.ContainsAny(input, "<>&") {
			return input, nil
		}
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return input, nil
	}
	return orderLike(out, input, keys), nil
}

// orderLike keeps the model's key order, with defaulted keys first, as the
// reference prints them. out is a re-marshalled map whose keys are sorted.
func orderLike(out, input json.RawMessage, given []string) json.RawMessage {
	var all map[string]json.RawMessage
	if json.Unmarshal(out, &all) != nil {
		return out
	}
	var orig []string
	dec := json.NewDecoder(bytes.NewReader(input))
	if _, err := dec.Token(); err == nil {
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				break
			}
			k, _ := t.(string)
			orig = append(orig, k)
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				break
			}
		}
	}
	var buf bytes.Buffer
	buf.WriteByte('{')
	first := true
	write := func(k string) {
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(all[k])
	}
	var added []string
	for k := range all {
		if !slices.Contains(given, k) {
			added = append(added, k)
		}
	}
	sort.Strings(added)
	for _, k := range added {
		write(k)
	}
	for _, k := range orig {
		if _, ok := all[k]; ok {
			write(k)
		}
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if v == float64(int64(v)) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	default:
		return "object"
	}
}

func typeMatches(want, got string) bool {
	return want == got || (want == "number" && got == "integer")
}

// isJSONType reports whether t names a JSON type.
func isJSONType(t string) bool {
	switch t {
	case "object", "array", "string", "number", "integer", "boolean", "null":
		return true
	}
	return false
}

// checkTypes rejects type keywords that name no JSON type, which the
// resolver lets through. A "type" whose value is an object is a property
// called type, not the keyword, and is walked like any other schema.
func checkTypes(v any, at string) error {
	switch v := v.(type) {
	case map[string]any:
		for k, sub := range v {
			switch k {
			case "const", "default", "enum", "examples":
				continue // values, not schemas
			}
			if k == "type" {
				switch t := sub.(type) {
				case string:
					if !isJSONType(t) {
						return fmt.Errorf("%s.type: %q is not a JSON type", at, t)
					}
					continue
				case []any:
					for _, e := range t {
						if s, ok := e.(string); !ok || !isJSONType(s) {
							return fmt.Errorf("%s.type: %v is not a JSON type", at, e)
						}
					}
					continue
				}
			}
			if err := checkTypes(sub, at+"."+k); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range v {
			if err := checkTypes(e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// compactJSON reports whether raw, a valid JSON value, has no whitespace
// outside its strings, as json.Marshal writes it.
func compactJSON(raw []byte) bool {
	in := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == ' ' || c == '\n' || c == '\t' || c == '\r'):
			return false
		}
	}
	return true
}
