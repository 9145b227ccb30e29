package agentlooptest

import (
	"context"

	"github.com/agentloop/agentloop/model"
	"github.com/agentloop/agentloop/model/anthropic"
)

// Provider returns the Messages API client of package anthropic pointed at
// the server, for agentloop.Options.Provider: it sends the key "sk-test"
// to s.URL and reads no environment variable, so neither the process's
// credentials nor its proxy, header or cloud-provider settings reach it.
// Retries and timeouts are the client's defaults. Each call returns a new
// client.
func (s *Server) Provider() model.Provider {
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-test", BaseURL: s.URL, Getenv: func(string) string { return "" }})
	if err != nil {
		// Not expected: the options hold a key and the server's own
		// http URL. Every call reports it.
		return failedProvider{err}
	}
	return p
}

// failedProvider answers every request with the error that kept the
// client from being made.
type failedProvider struct{ err error }

func (f failedProvider) Stream(context.Context, *model.Request, model.Handler) (*model.Response, error) {
	return nil, f.err
}
