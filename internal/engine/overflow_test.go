package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/agentloop/agentloop/model"
)

func TestContextOverflow(t *testing.T) {
	cases := []struct {
		err  error
		want bool
	}{
		{&model.APIError{Status: 400, Type: "invalid_request_error", Message: "prompt is too long: 210000 tokens > 200000 maximum"}, true},
		{fmt.Errorf("calling the model: %w", &model.APIError{Status: 400, Type: "invalid_request_error", Message: "Prompt is too long"}), true},
		{&model.APIError{Status: 400, Type: "invalid_request_error", Message: "input length and `max_tokens` exceed context limit: 190000 + 20000 > 200000"}, true},
		{&model.APIError{Status: 413, Type: "request_too_large", Message: "Request exceeds the maximum allowed number of bytes."}, true},
		{&model.APIError{Status: 0, Type: "invalid_request_error", Message: "prompt is too long"}, true}, // an error event in the stream
		{&model.APIError{Status: 400, Type: "invalid_request_error", Message: "messages: roles must alternate"}, false},
		{&model.APIError{Status: 529, Type: "overloaded_error", Message: "prompt is too long"}, false},
		{errors.New("prompt is too long"), false}, // not from the API
		{nil, false},
	}
	for _, c := range cases {
		if got := ContextOverflow(c.err); got != c.want {
			t.Errorf("ContextOverflow(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
