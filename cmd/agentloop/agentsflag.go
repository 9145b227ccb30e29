package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"

	"github.com/agentloop/agentloop"
)

// parseAgents reads the --agents value: inline JSON when it starts with
// "{", else the path of a file holding it. The JSON maps agent names to
// definitions. Fields agentloop does not know are left out, each with a
// warning, as the reference CLI ignores them; a definition without a
// description or a prompt is an error.
func parseAgents(v string) (map[string]agentloop.AgentDefinition, []string, error) {
	data := []byte(v)
	if !strings.HasPrefix(strings.TrimSpace(v), "{") {
		b, err := os.ReadFile(v)
		if err != nil {
			return nil, nil, err
		}
		data = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	}
	if err := checkJSON(data); err != nil {
		return nil, nil, err
	}
	var byName map[string]json.RawMessage
	if err := json.Unmarshal(data, &byName); err != nil || byName == nil {
		return nil, nil, errors.New(`want a JSON object of agents by name: {"name": {"description": …, "prompt": …}}`)
	}
	known := agentFields()
	var warnings []string
	agents := make(map[string]agentloop.AgentDefinition, len(byName))
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		raw := byName[name]
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
			return nil, nil, fmt.Errorf("agent %q: want an object with a description and a prompt", name)
		}
		for _, f := range slices.Sorted(maps.Keys(fields)) {
			if !slices.Contains(known, f) {
				warnings = append(warnings, fmt.Sprintf("--agents: agent %q: field %q is not supported and is ignored", name, f))
			}
		}
		var d agentloop.AgentDefinition
		if err := json.Unmarshal(raw, &d); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return nil, nil, fmt.Errorf("agent %q: %s: want %s, got %s", name, te.Field, jsonKind(te.Type), te.Value)
			}
			return nil, nil, fmt.Errorf("agent %q: %w", name, err)
		}
		if strings.TrimSpace(d.Description) == "" || strings.TrimSpace(d.Prompt) == "" {
			return nil, nil, fmt.Errorf("agent %q needs a description and a prompt", name)
		}
		agents[name] = d
	}
	return agents, warnings, nil
}

// agentFields are the JSON field names of an agent definition.
func agentFields() []string {
	t := reflect.TypeFor[agentloop.AgentDefinition]()
	var names []string
	for f := range t.Fields() {
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// jsonKind names a Go type the way a JSON document would.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array of " + strings.TrimPrefix(strings.TrimPrefix(jsonKind(t.Elem()), "a "), "an ") + "s"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// checkJSON reports whether data is one valid JSON value, naming the line
// and column where it goes wrong.
func checkJSON(data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	line, col := jsonPosition(data, se.Offset)
	msg := se.Error()
	if msg == "unexpected end of JSON input" {
		msg = "unexpected end of input"
	}
	return fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, msg)
}

// jsonPosition is the 1-based line and column of the byte a
// *json.SyntaxError with offset points at (the last byte read).
func jsonPosition(data []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(data)))
	if offset > 0 {
		offset--
	}
	line, col = 1, 1
	for _, b := range data[:offset] {
		if b == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}
