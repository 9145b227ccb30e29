package anthropic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// Vertex AI, without the SDK's vertex package.
//
// The official SDK's vertex package does what is below, and also builds a
// default HTTP client through google.golang.org/api/transport, which links
// gRPC and the Google API client into every program that imports this
// package: about 250 packages, and megabytes of every agentloop process's
// memory, for a client this provider never uses (it always brings its
// own). So the rewrite is done here, the Google credentials coming from
// golang.org/x/oauth2 as before.

// vertexBaseURL is the Vertex AI endpoint of region: the global and
// multi-region ones have hosts of their own.
func vertexBaseURL(region string) string {
	switch region {
	case "global":
		return "https://aiplatform.googleapis.com/"
	case "us", "eu":
		return "https://aiplatform." + region + ".rep.googleapis.com/"
	}
	return "https://" + region + "-aiplatform.googleapis.com/"
}

// vertexOptions returns the HTTP client and the client options of a
// Vertex provider: requests authorised with tokens from ts on hc's
// transport, sent to baseURL (empty: the region's endpoint) and rewritten
// by vertexRewrite.
func vertexOptions(region, project, baseURL string, ts oauth2.TokenSource, hc *http.Client) (*http.Client, string, []middleware, error) {
	if region == "" {
		return nil, "", nil, errors.New("anthropic: vertex: no region")
	}
	if baseURL == "" {
		baseURL = vertexBaseURL(region)
	}
	authed := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	authed.Transport = &oauth2.Transport{Base: base, Source: ts}
	return &authed, baseURL, []middleware{vertexRewrite(region, project)}, nil
}

// vertexRewrite is the middleware that turns a Messages API request into
// Vertex's form: the model moves from the body into the path
// (…/models/{model}:streamRawPredict, or :rawPredict without streaming;
// count_tokens goes to …/models/count-tokens:rawPredict), and the API
// version from the anthropic-version header into the body's
// anthropic_version.
func vertexRewrite(region, project string) middleware {
	models := "/v1/projects/" + project + "/locations/" + region + "/publishers/anthropic/models/"
	modelsRaw := "/v1/projects/" + url.PathEscape(project) + "/locations/" + url.PathEscape(region) + "/publishers/anthropic/models/"
	return func(r *http.Request, next next) (*http.Response, error) {
		version := r.Header.Get("anthropic-version")
		r.Header.Del("anthropic-version")
		if r.Body == nil || r.Method != http.MethodPost {
			return next(r)
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("anthropic: vertex: reading the request body: %w", err)
		}
		if o, ok := parseObject(body); ok {
			if _, has := o["anthropic_version"]; version != "" && !has {
				if err := o.set("anthropic_version", version); err != nil {
					return nil, fmt.Errorf("anthropic: vertex: %w", err)
				}
			}
			switch strings.TrimSuffix(r.URL.Path, "/") {
			case "/v1/messages":
				model := o.str("model")
				if model == "" {
					return nil, errors.New("anthropic: vertex: the request names no model")
				}
				method := "rawPredict"
				if o.truth("stream") {
					method = "streamRawPredict"
				}
				delete(o, "model")
				// The model is one escaped path segment: a "/" or ";"
				// in it cannot reach another path.
				r.URL.Path = models + model + ":" + method
				r.URL.RawPath = modelsRaw + url.PathEscape(model) + ":" + method
			case "/v1/messages/count_tokens":
				r.URL.Path = models + "count-tokens:rawPredict"
				r.URL.RawPath = modelsRaw + "count-tokens:rawPredict"
			}
			if body, err = o.bytes(); err != nil {
				return nil, fmt.Errorf("anthropic: vertex: %w", err)
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		r.ContentLength = int64(len(body))
		return next(r)
	}
}
