package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
)

// Options configure a tool built with [New]. The zero value is a tool that
// may change state, with a schema inferred from its input type.
type Options struct {
	// ReadOnly marks the tool as changing nothing. Calls of one reply may
	// then run concurrently, and, like the built-in read-only tools (Read,
	// Glob, Grep), the tool runs without asking: in every permission
	// mode, a call that no deny or ask rule and no PreToolUse hook stops
	// is allowed without consulting CanUseTool. (The reference asks about
	// its SDK tools unless a rule or the mode allows them; leave ReadOnly
	// false for a tool whose calls someone should approve.)
	ReadOnly bool
	// Schema replaces the inferred input schema. It must describe a JSON
	// object that decodes into the input type.
	Schema json.RawMessage
	// AlwaysReportError sends "is_error": false with successful results.
	AlwaysReportError bool
	// MaxResultChars sets Info.MaxResultChars.
	MaxResultChars int
	// Defer and AlwaysLoad set Info.Defer and Info.AlwaysLoad: whether
	// tool search may keep the tool's definition out of the request
	// until the model loads it.
	Defer, AlwaysLoad bool
}

// Func is the handler of a typed tool: it receives the decoded input.
type Func[In any] func(ctx context.Context, in In, call *Call) (Result, error)

// New returns a tool whose input is decoded into In.
//
// The input schema is inferred from In with github.com/google/jsonschema-go:
// exported fields named by their json tags, fields without omitempty
// required, unknown properties rejected, descriptions from jsonschema tags.
// The loop validates input against it before fn runs, so fn sees only input
// that matches the schema.
//
// New never panics. If no schema can be inferred from In, the returned tool
// reports the error from [Check] and the loop refuses to start with it.
func New[In any](name, description string, fn Func[In], opts *Options) Tool {
	if opts == nil {
		opts = &Options{}
	}
	t := &typed[In]{info: Info{
		Name: name, Description: description, ReadOnly: opts.ReadOnly,
		AlwaysReportError: opts.AlwaysReportError,
		MaxResultChars:    opts.MaxResultChars,
		Defer:             opts.Defer, AlwaysLoad: opts.AlwaysLoad,
	}, fn: fn}
	switch {
	case fn == nil:
		t.err = fmt.Errorf("tool %q: nil handler", name)
	case len(opts.Schema) > 0:
		t.info.InputSchema = opts.Schema
	default:
		s, err := jsonschema.For[In](nil)
		if err != nil {
			t.err = fmt.Errorf("tool %q: inferring input schema: %w", name, err)
			break
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.err = fmt.Errorf("tool %q: encoding input schema: %w", name, err)
			break
		}
		t.info.InputSchema = b
	}
	if t.err == nil {
		if _, err := CompileSchema(t.info.InputSchema); err != nil {
			t.err = fmt.Errorf("tool %q: %w", name, err)
		}
	}
	return t
}

type typed[In any] struct {
	info Info
	fn   Func[In]
	err  error
}

func (t *typed[In]) Info() Info   { return t.info }
func (t *typed[In]) Check() error { return t.err }

func (t *typed[In]) Run(ctx context.Context, call *Call) (Result, error) {
	if t.err != nil {
		return Result{}, t.err
	}
	var in In
	if len(call.Input) > 0 {
		if err := json.Unmarshal(call.Input, &in); err != nil {
			return Result{}, &ValidationError{Tool: t.info.Name, Issues: []string{err.Error()}}
		}
	}
	return t.fn(ctx, in, call)
}

// Checker is implemented by tools that can be misconfigured. The loop calls
// Check before the first model request and refuses to start when it fails.
type Checker interface {
	Check() error
}

// Check returns the configuration error of t, if it has one.
func Check(t Tool) error {
	if c, ok := t.(Checker); ok {
		return c.Check()
	}
	return nil
}
