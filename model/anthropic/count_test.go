package anthropic

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/model"
)

// TestCountTokens: the request goes to /v1/messages/count_tokens with the
// context-taking fields only and the betas in the header; the answer's
// input_tokens is returned; an API error is a *model.APIError.
func TestCountTokens(t *testing.T) {
	var path, body, beta string
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		path, body, beta = r.URL.Path, string(b), r.Header.Get("anthropic-beta")
		w.Header().Set("content-type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			io.WriteString(w, `{"type":"error","error":{"type":"invalid_request_error","message":"bad model"}}`)
			return
		}
		io.WriteString(w, `{"input_tokens":1234}`)
	}))
	defer srv.Close()
	zero := 0
	p, err := New(&Options{APIKey: "k", BaseURL: srv.URL, MaxRetries: &zero})
	if err != nil {
		t.Fatal(err)
	}
	req := &model.Request{Model: "m", MaxTokens: 99, Stream: true, Betas: []string{"b1", "b2"},
		Messages: []model.Message{{Role: "user", Content: []model.Content{model.TextBlock("hi")}}},
		System:   []model.Content{model.TextBlock("sys")}}
	n, err := p.CountTokens(context.Background(), req)
	if err != nil || n != 1234 {
		t.Fatalf("CountTokens = %d, %v; want 1234", n, err)
	}
	if path != "/v1/messages/count_tokens" || beta != "b1,b2" {
		t.Errorf("path %s, beta %q", path, beta)
	}
	if strings.Contains(body, "max_tokens") || strings.Contains(body, "stream") || !strings.Contains(body, `"system":[{"type":"text","text":"sys"}]`) {
		t.Errorf("body = %s; want model, messages, system and no max_tokens or stream", body)
	}
	status = http.StatusBadRequest
	_, err = p.CountTokens(context.Background(), req)
	var ae *model.APIError
	if !errors.As(err, &ae) || ae.Status != http.StatusBadRequest || ae.Message != "bad model" {
		t.Errorf("err = %v, want an APIError 400 bad model", err)
	}
}
