package anthropic

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/oauth2"
)

// eventStreamReply answers 200 with the events of an SSE body in AWS
// event-stream framing, as Bedrock's invoke-with-response-stream does: one
// "chunk" event per server-sent event, its JSON base64-encoded in bytes.
func eventStreamReply(sse string) reply {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Header().Set("request-id", "req_1")
		w.WriteHeader(http.StatusOK)
		w.Write(eventStreamOf(sse))
	}
}

// eventStreamOf encodes the data lines of an SSE body as event-stream
// chunk messages.
func eventStreamOf(sse string) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, line := range strings.Split(sse, "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			continue
		}
		payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(data))})
		err := enc.Encode(&buf, eventstream.Message{
			Headers: eventstream.Headers{
				{Name: ":message-type", Value: eventstream.StringValue("event")},
				{Name: ":event-type", Value: eventstream.StringValue("chunk")},
				{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			},
			Payload: payload,
		})
		if err != nil {
			panic(err)
		}
	}
	return buf.Bytes()
}

// clearPlatformEnv makes the tests independent of the machine's cloud
// settings.
func clearPlatformEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_SKIP_BEDROCK_AUTH",
		"CLAUDE_CODE_SKIP_VERTEX_AUTH", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_SESSION_TOKEN", "CLOUD_ML_REGION",
		"ANTHROPIC_VERTEX_PROJECT_ID", EnvAPIKeyHelperTTL} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// bodyFields decodes a recorded JSON body.
func bodyFields(t *testing.T, b []byte) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, b)
	}
	return m
}

// A Bedrock provider posts to /model/{id}/invoke-with-response-stream,
// signed with SigV4, with anthropic_version and the betas in the body and
// no model or stream, and reads the event-stream answer into the same
// reply as the first-party API's SSE.
func TestBedrockRequestAndEventStream(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, eventStreamReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) {
		o.APIKey = ""
		o.Platform = PlatformBedrock
		o.AWSRegion = "us-west-2"
		o.AWSCredentials = credentials.NewStaticCredentialsProvider("AKIDTEST", "secret", "")
	})
	req := simpleRequest()
	req.Model = "anthropic.claude-sonnet-4-5-20250929-v1:0"
	req.Betas = []string{"beta-a", "beta-b"}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(helloResponse().Content, resp.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if resp.StopReason != "end_turn" || resp.Usage.OutputTokens != 7 {
		t.Errorf("stop %q, usage %+v", resp.StopReason, resp.Usage)
	}
	rs := f.requests()
	if len(rs) != 1 {
		t.Fatalf("%d requests, want 1", len(rs))
	}
	r := rs[0]
	if want := "/model/anthropic.claude-sonnet-4-5-20250929-v1:0/invoke-with-response-stream"; r.Path != want {
		t.Errorf("path %q, want %q", r.Path, want)
	}
	if r.Query != "" {
		t.Errorf("query %q, want none", r.Query)
	}
	auth := r.Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDTEST/") || !strings.Contains(auth, "/us-west-2/bedrock/aws4_request") {
		t.Errorf("Authorization %q, want a SigV4 signature for AKIDTEST in us-west-2", auth)
	}
	if r.Header.Get("X-Amz-Date") == "" {
		t.Error("no X-Amz-Date header")
	}
	if r.Header.Get("X-Api-Key") != "" || r.Header.Get("anthropic-version") != "" || r.Header.Get("anthropic-beta") != "" {
		t.Errorf("first-party headers sent to Bedrock: %v", r.Header)
	}
	m := bodyFields(t, r.Body)
	if got := string(m["anthropic_version"]); got != `"bedrock-2023-05-31"` {
		t.Errorf("anthropic_version %s", got)
	}
	if got := string(m["anthropic_beta"]); got != `["beta-a","beta-b"]` {
		t.Errorf("anthropic_beta %s", got)
	}
	for _, k := range []string{"model", "stream"} {
		if _, ok := m[k]; ok {
			t.Errorf("body has %q", k)
		}
	}
	if _, ok := m["messages"]; !ok {
		t.Error("body has no messages")
	}
}

// The environment selects Bedrock, its region and base URL, and the AWS
// default chain reads the credentials from the environment.
func TestBedrockFromEnvironment(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, eventStreamReply(helloStream()))
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("CLAUDE_CODE_USE_BEDROCK", "1")
	t.Setenv("ANTHROPIC_BEDROCK_BASE_URL", f.URL)
	t.Setenv("AWS_REGION", "eu-central-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDENV")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "secret")
	p, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Platform() != PlatformBedrock {
		t.Fatalf("platform %q", p.Platform())
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	auth := f.requests()[0].Header.Get("Authorization")
	if !strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDENV/") || !strings.Contains(auth, "/eu-central-1/bedrock/") {
		t.Errorf("Authorization %q", auth)
	}
}

// CLAUDE_CODE_SKIP_BEDROCK_AUTH sends the request unsigned.
func TestBedrockSkipAuth(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, eventStreamReply(helloStream()))
	t.Setenv("CLAUDE_CODE_SKIP_BEDROCK_AUTH", "1")
	p, _ := testProvider(t, f, func(o *Options) { o.APIKey, o.Platform = "", PlatformBedrock })
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("Authorization %q, want none", a)
	}
	if r.Path != "/model/claude-opus-5-5/invoke-with-response-stream" {
		t.Errorf("path %q", r.Path)
	}
}

type failingCreds struct{}

func (failingCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, errors.New("no credentials here")
}

// Credentials that cannot be had fail the call at once: no request, no
// retry, an error that says so.
func TestBedrockCredentialsFailureNotRetried(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, eventStreamReply(helloStream()))
	p, s := testProvider(t, f, func(o *Options) {
		o.APIKey, o.Platform, o.AWSCredentials = "", PlatformBedrock, failingCreds{}
	})
	_, err := p.Stream(context.Background(), simpleRequest(), nil)
	var pe *PlatformAuthError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "no credentials here") {
		t.Fatalf("err = %v, want a PlatformAuthError", err)
	}
	if n := len(f.requests()); n != 0 || len(s.delays) != 0 {
		t.Errorf("%d requests and %d retries, want none", n, len(s.delays))
	}
}

// A Vertex provider posts to the project's streamRawPredict URL with the
// token source's bearer token, anthropic_version in the body and no model.
func TestVertexRequest(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) {
		o.APIKey = ""
		o.Platform = PlatformVertex
		o.VertexProject = "proj-1"
		o.VertexRegion = "europe-west1"
		o.VertexTokenSource = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "ya29.test"})
	})
	req := simpleRequest()
	req.Model = "claude-sonnet-4-5@20250929"
	req.Betas = []string{"beta-a"}
	resp, err := p.Stream(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(helloResponse().Content, resp.Content); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	r := f.requests()[0]
	if want := "/v1/projects/proj-1/locations/europe-west1/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict"; r.Path != want {
		t.Errorf("path %q, want %q", r.Path, want)
	}
	if a := r.Header.Get("Authorization"); a != "Bearer ya29.test" {
		t.Errorf("Authorization %q", a)
	}
	if b := r.Header.Get("anthropic-beta"); b != "beta-a" {
		t.Errorf("anthropic-beta %q", b)
	}
	m := bodyFields(t, r.Body)
	if got := string(m["anthropic_version"]); got != `"vertex-2023-10-16"` {
		t.Errorf("anthropic_version %s", got)
	}
	if _, ok := m["model"]; ok {
		t.Error("body has model")
	}
	if got := string(m["stream"]); got != "true" {
		t.Errorf("stream %s", got)
	}
}

// The environment selects Vertex; CLAUDE_CODE_SKIP_VERTEX_AUTH sends no
// token.
func TestVertexFromEnvironmentSkipAuth(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, sseReply(helloStream()))
	t.Setenv("CLAUDE_CODE_USE_VERTEX", "true")
	t.Setenv("CLAUDE_CODE_SKIP_VERTEX_AUTH", "1")
	t.Setenv("ANTHROPIC_VERTEX_BASE_URL", f.URL)
	t.Setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj-env")
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	p, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if want := "/v1/projects/proj-env/locations/us-east5/publishers/anthropic/models/claude-opus-5-5:streamRawPredict"; r.Path != want {
		t.Errorf("path %q, want %q", r.Path, want)
	}
	if a := r.Header.Get("Authorization"); a != "" {
		t.Errorf("Authorization %q, want none", a)
	}
}

// Configurations that cannot work fail in New, naming what is missing.
func TestPlatformConfigErrors(t *testing.T) {
	clearPlatformEnv(t)
	tests := []struct {
		name string
		o    Options
		want string
	}{
		{"unknown platform", Options{Platform: "azure"}, `platform "azure"`},
		{"vertex without project", Options{Platform: PlatformVertex, SkipPlatformAuth: true}, "ANTHROPIC_VERTEX_PROJECT_ID"},
		{"base URL with a path", Options{Platform: PlatformBedrock, SkipPlatformAuth: true, BaseURL: "http://127.0.0.1:1/bedrock"},
			"a path is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(&tt.o)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// Fields the model API sees are the same on every platform: the request
// the fake first-party API gets is unchanged by the platform code.
func TestFirstPartyUnchangedByPlatforms(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, nil)
	if p.Platform() != PlatformAnthropic {
		t.Fatalf("platform %q", p.Platform())
	}
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if r.Path != "/v1/messages" || r.Query != "beta=true" || r.Header.Get("X-Api-Key") != "sk-test" ||
		r.Header.Get("anthropic-version") != APIVersion {
		t.Errorf("first-party request changed: %s?%s %v", r.Path, r.Query, r.Header)
	}
	if _, ok := bodyFields(t, r.Body)["model"]; !ok {
		t.Error("no model in the first-party body")
	}
}

// Without a token source or CLAUDE_CODE_SKIP_VERTEX_AUTH, Vertex uses
// Google Application Default Credentials: here a service account file whose
// token endpoint is a local stub, so the whole exchange stays offline.
func TestVertexApplicationDefaultCredentials(t *testing.T) {
	clearPlatformEnv(t)
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	var tokenRequests atomic.Int32
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tokenRequests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"ya29.from-adc","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(tokens.Close)
	sa, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "adc-project", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "agentloop-test@adc-project.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": tokens.URL + "/token",
	})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, sa, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
	f := newFakeAPI(t, sseReply(helloStream()))
	p, _ := testProvider(t, f, func(o *Options) { o.APIKey, o.Platform = "", PlatformVertex })
	if _, err := p.Stream(context.Background(), simpleRequest(), nil); err != nil {
		t.Fatal(err)
	}
	r := f.requests()[0]
	if a := r.Header.Get("Authorization"); a != "Bearer ya29.from-adc" {
		t.Errorf("Authorization %q, want the ADC token", a)
	}
	if want := "/v1/projects/adc-project/locations/us-east5/publishers/anthropic/models/claude-opus-5-5:streamRawPredict"; r.Path != want {
		t.Errorf("path %q, want %q (the credentials' project)", r.Path, want)
	}
	if tokenRequests.Load() == 0 {
		t.Error("the token endpoint was never asked")
	}
}
