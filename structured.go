package agentloop

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// OutputFormat asks for structured output: the run ends when the model has
// delivered a JSON value that matches Schema (JSON Schema draft 2020-12 or
// draft-07; the top level must be an object). The value is in the result's
// StructuredOutput field, and its JSON text in Result. A schema that is not
// valid fails the run before any model call.
type OutputFormat struct {
	Type   string          // "json_schema" (the only type; empty means it)
	Schema json.RawMessage // the JSON schema
}

// OutputFormatFor returns an OutputFormat whose schema is inferred from T,
// a struct type, the same way NewTool infers input schemas.
func OutputFormatFor[T any]() (*OutputFormat, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("%w: output schema: %w", ErrInvalidOption, err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("%w: output schema: %w", ErrInvalidOption, err)
	}
	return &OutputFormat{Type: "json_schema", Schema: b}, nil
}

// ErrNoStructuredOutput reports a result that carries no structured output.
var ErrNoStructuredOutput = errors.New("agentloop: the result has no structured output")

// StructuredOutput decodes a result's structured output into a T.
func StructuredOutput[T any](res *ResultMessage) (T, error) {
	var v T
	if res == nil || len(res.StructuredOutput) == 0 {
		return v, ErrNoStructuredOutput
	}
	if err := json.Unmarshal(res.StructuredOutput, &v); err != nil {
		return v, fmt.Errorf("agentloop: decoding structured output: %w", err)
	}
	return v, nil
}
