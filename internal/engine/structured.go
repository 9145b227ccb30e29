package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/tool"
)

// StructuredOutputTool is the name of the tool through which the model
// delivers structured output.
const StructuredOutputTool = "StructuredOutput"

// DefaultStructuredRetries is how many failed attempts at structured output
// a run tolerates before it ends in error_max_structured_output_retries.
const DefaultStructuredRetries = 5

const structuredAccepted = "Structured output provided successfully"

// structuredTool returns the tool whose input schema is the caller's output
// schema. A valid call ends the run; the loop validates the input before the
// tool runs, so Run only acknowledges it.
func structuredTool(schema json.RawMessage) tool.Tool {
	return tool.New(StructuredOutputTool,
		"Deliver your final answer by calling this tool exactly once, with input that matches its schema. "+
			"Call it when the task is complete; the run ends when the call succeeds.",
		func(ctx context.Context, in map[string]any, c *tool.Call) (tool.Result, error) {
			return tool.Result{Content: []model.Content{model.TextBlock(structuredAccepted)}, Structured: structuredAccepted}, nil
		}, &tool.Options{Schema: schema, ReadOnly: true})
}

// ErrInvalidOutputSchema reports an output schema the loop cannot use.
var ErrInvalidOutputSchema = errors.New("invalid output schema")

// checkOutputSchema verifies a structured-output schema before any model
// call: it must be a JSON object schema that a validator accepts.
func checkOutputSchema(schema json.RawMessage) error {
	var probe map[string]any
	if err := json.Unmarshal(schema, &probe); err != nil {
		return fmt.Errorf("%w: not a JSON object: %v", ErrInvalidOutputSchema, err)
	}
	if t, ok := probe["type"]; ok && t != "object" {
		return fmt.Errorf("%w: the top-level type must be \"object\", not %v", ErrInvalidOutputSchema, t)
	}
	if _, err := tool.CompileSchema(schema); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidOutputSchema, err)
	}
	return nil
}

// structuredState tracks a run's progress towards structured output.
type structuredState struct {
	failures int
	output   json.RawMessage // the accepted input, once delivered
}

// structuredOutcome inspects a reply whose tools have run: it records a
// successful StructuredOutput call, or counts a failed one.
func (r *run) noteStructured(resp *model.Response, results []model.Content) {
	if r.s.cfg.OutputSchema == nil {
		return
	}
	ok := map[string]bool{}
	for _, res := range results {
		if res.Type == model.TypeToolResult && (res.IsError == nil || !*res.IsError) {
			ok[res.ToolUseID] = true
		}
	}
	for _, b := range resp.Content {
		if b.Type != model.TypeToolUse || b.Name != StructuredOutputTool {
			continue
		}
		if ok[b.ID] {
			var buf bytes.Buffer
			if json.Compact(&buf, b.Input) == nil {
				r.structured.output = buf.Bytes()
			} else {
				r.structured.output = b.Input
			}
			return
		}
		r.structured.failures++
	}
}

// enforceStructured handles a reply that ended without delivering
// structured output: it asks again, or gives up after the retry limit. It
// returns false when the run must end.
func (r *run) enforceStructured() (cont bool, res *message.Result) {
	r.structured.failures++
	if r.structured.failures > r.s.maxStructuredRetries() {
		return false, r.structuredExhausted()
	}
	text := "[structured-output] This run must end with a call to the " + StructuredOutputTool +
		" tool whose input matches its schema. Call it now with your answer."
	if !r.syntheticTurn(text) {
		return false, nil
	}
	return true, nil
}

func (r *run) structuredExhausted() *message.Result {
	return r.errorResult(message.ResultErrorMaxStructuredRetries, message.TerminalStructuredRetry,
		fmt.Sprintf("The model did not produce output matching the schema after %d attempts", r.structured.failures), true)
}

func (s *Session) maxStructuredRetries() int {
	if s.cfg.MaxStructuredRetries > 0 {
		return s.cfg.MaxStructuredRetries
	}
	return DefaultStructuredRetries
}

// structuredResult is the success result of a run that delivered its
// structured output.
func (r *run) structuredResult() *message.Result {
	res := r.successResult()
	text := string(r.structured.output)
	res.Result = &text
	res.StructuredOutput = r.structured.output
	return res
}

// schemaMismatch rewrites a validation error of the StructuredOutput tool in
// the words the model needs: what in its output failed the schema.
func schemaMismatch(err error) string {
	var ve *tool.ValidationError
	if errors.As(err, &ve) {
		return "Output does not match required schema: " + strings.Join(ve.Issues, "; ")
	}
	return "Output does not match required schema: " + err.Error()
}
