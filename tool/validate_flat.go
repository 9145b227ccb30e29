package tool

import (
	"encoding/json"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Most tool schemas are flat: an object whose properties are scalars with
// a type and perhaps bounds, an enum of strings or a default. For those,
// Validate's own checks (required properties, unknown ones, types) and a
// few comparisons settle whether an input is valid, without the general
// validator (jsonschema-go walks the schema by reflection and compares
// numbers as big.Rat: most of a call's cost). flatSchema is that subset.
// It only ever says "valid": an input it cannot vouch for (out of bounds,
// not in the enum, a default to apply) goes to the general validator,
// which words the problems. The general validator compares the same
// float64 values, so what flatSchema accepts it accepts too
// (TestFlatSchemaAgrees checks it on many inputs).

// flatSchema is the flat part of a schema; nil when the schema is not flat.
type flatSchema struct {
	props map[string]flatProp
	// defaults are the properties with a default.
	defaults []string
}

// flatProp is what a flat schema says of one property.
type flatProp struct {
	min, max, exclMin, exclMax *float64
	enum                       []string
}

// flatTopKeys and flatPropKeys are the keywords a flat schema may use, at
// the top and in a property. Annotations (description, title, examples)
// constrain nothing.
var (
	flatTopKeys  = []string{"$schema", "type", "properties", "required", "additionalProperties", "description", "title"}
	flatPropKeys = []string{"type", "description", "title", "examples", "minimum", "maximum",
		"exclusiveMinimum", "exclusiveMaximum", "enum", "default"}
)

// newFlatSchema returns the flat form of the schema decoded as generic,
// or nil when it is not flat.
func newFlatSchema(generic any) *flatSchema {
	top, ok := generic.(map[string]any)
	if !ok {
		return nil
	}
	for k, v := range top {
		if !slices.Contains(flatTopKeys, k) {
			return nil
		}
		switch k {
		case "type":
			if v != "object" {
				return nil
			}
		case "additionalProperties":
			if v != false {
				return nil
			}
		}
	}
	props, _ := top["properties"].(map[string]any)
	if _, given := top["properties"]; given && props == nil {
		return nil
	}
	f := &flatSchema{props: map[string]flatProp{}}
	for name, raw := range props {
		p, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		var fp flatProp
		for k, v := range p {
			if !slices.Contains(flatPropKeys, k) {
				return nil
			}
			switch k {
			case "type":
				switch v {
				case "string", "integer", "number", "boolean":
				default:
					return nil // unions, arrays and objects need the general validator
				}
			case "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum":
				n, ok := v.(float64)
				if !ok {
					return nil
				}
				switch k {
				case "minimum":
					fp.min = &n
				case "maximum":
					fp.max = &n
				case "exclusiveMinimum":
					fp.exclMin = &n
				default:
					fp.exclMax = &n
				}
			case "enum":
				list, ok := stringList(v)
				if !ok {
					return nil
				}
				fp.enum = list // an empty enum admits nothing
			case "default":
				f.defaults = append(f.defaults, name)
			}
		}
		if _, typed := p["type"]; !typed {
			return nil
		}
		f.props[name] = fp
	}
	return f
}

// valid reports whether obj, which passed Validate's own checks (required
// properties, unknown ones, types), is valid and needs no default. False
// means "ask the general validator", not "invalid".
func (f *flatSchema) valid(obj map[string]any) bool {
	for _, name := range f.defaults {
		if _, ok := obj[name]; !ok {
			return false
		}
	}
	for k, v := range obj {
		p, ok := f.props[k]
		if !ok {
			continue // allowed: the schema is open, or Validate refused it
		}
		if p.enum != nil {
			s, ok := v.(string)
			if !ok || !slices.Contains(p.enum, s) {
				return false
			}
		}
		if p.min == nil && p.max == nil && p.exclMin == nil && p.exclMax == nil {
			continue
		}
		n, ok := v.(float64)
		if !ok ||
			p.min != nil && !(n >= *p.min) || p.max != nil && !(n <= *p.max) ||
			p.exclMin != nil && !(n > *p.exclMin) || p.exclMax != nil && !(n < *p.exclMax) {
			return false
		}
	}
	return true
}

// flatSchemaURI is the one $schema a schema compileFlat takes may name:
// the dialect jsonschema-go implements.
const flatSchemaURI = "https://json-schema.org/draft/2020-12/schema"

// compileFlat compiles raw, decoded as generic, without the general
// validator when it is a flat schema of the plainest kind: the keywords
// of newFlatSchema with the JSON types jsonschema-go requires of them
// ($schema naming its dialect, strings where it wants strings, a
// non-empty enum, examples as a list). Every schema it takes, the general
// validator resolves too (FuzzCompileFlat holds it to that), so the
// general form is left to the first input the flat checks cannot vouch
// for (Schema.general). It returns nil for any other schema. Most
// built-in tools' schemas are of this kind (all but those with lists or
// objects in them: AskUserQuestion, TaskCreate, TaskUpdate, WebSearch),
// so a process that never sees an invalid call never resolves them.
func compileFlat(raw json.RawMessage, generic any) *Schema {
	f := newFlatSchema(generic)
	if f == nil {
		return nil
	}
	top := generic.(map[string]any)
	c := &Schema{raw: raw, props: map[string]string{}, flat: f}
	for k, v := range top {
		switch k {
		case "$schema":
			if v != flatSchemaURI {
				return nil
			}
		case "description", "title":
			if _, ok := v.(string); !ok {
				return nil
			}
		case "required":
			list, ok := stringList(v)
			if !ok {
				return nil
			}
			for i, name := range list {
				if slices.Contains(list[:i], name) {
					return nil
				}
			}
			c.required = list
		case "additionalProperties":
			c.closed = true // newFlatSchema took only false
		}
	}
	props, _ := top["properties"].(map[string]any)
	for name, raw := range props {
		p := raw.(map[string]any) // newFlatSchema checked
		for k, v := range p {
			switch k {
			case "description", "title":
				if _, ok := v.(string); !ok {
					return nil
				}
			case "examples":
				if _, ok := v.([]any); !ok {
					return nil
				}
			case "enum":
				if len(v.([]any)) == 0 {
					return nil
				}
			}
		}
		c.props[name] = p["type"].(string)
	}
	return c
}

// general returns the schema's form for the general validator, resolving
// it at the first call for a schema compileFlat took.
func (s *Schema) general() (*jsonschema.Resolved, error) {
	s.once.Do(func() {
		var js jsonschema.Schema
		if err := json.Unmarshal(s.raw, &js); err != nil {
			s.resolveErr = err
			return
		}
		s.resolved, s.resolveErr = js.Resolve(nil)
	})
	return s.resolved, s.resolveErr
}

// stringList returns v, a decoded JSON value, as a list of strings (empty,
// not nil, for []), and false when it is anything else.
func stringList(v any) ([]string, bool) {
	list, ok := v.([]any)
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		s, ok := e.(string)
		if !ok {
			return nil, false
		}
		out = append(out, s)
	}
	return out, true
}
