package conversation_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"

	"github.com/agentloop/agentloop"
	"github.com/agentloop/agentloop/agentlooptest"
	"github.com/agentloop/agentloop/message"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
)

// cloudRequest is one request a cloud stub received.
type cloudRequest struct {
	Path   string
	Header http.Header
	Body   map[string]json.RawMessage
}

// cloudStub plays Amazon Bedrock or Google Vertex AI in front of a
// scripted first-party fake: it records each request as the cloud sees
// it, turns it back into a Messages API request for the fake, and answers
// with the fake's stream: in AWS event-stream framing for Bedrock, as it
// is (SSE) for Vertex.
type cloudStub struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []cloudRequest
}

func newCloudStub(t *testing.T, platform string, api *agentlooptest.Server) *cloudStub {
	t.Helper()
	c := &cloudStub{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var body map[string]json.RawMessage
		if err := json.Unmarshal(raw, &body); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		c.reqs = append(c.reqs, cloudRequest{Path: r.URL.Path, Header: r.Header.Clone(), Body: body})
		c.mu.Unlock()

		var modelID string
		fwd := map[string]json.RawMessage{}
		for k, v := range body {
			fwd[k] = v
		}
		delete(fwd, "anthropic_version")
		header := http.Header{"Content-Type": {"application/json"}, "Anthropic-Version": {"2023-06-01"}, "X-Api-Key": {"stub"}}
		switch platform {
		case "bedrock":
			id, ok := strings.CutPrefix(r.URL.Path, "/model/")
			if id, ok = strings.CutSuffix(id, "/invoke-with-response-stream"); !ok {
				http.Error(w, "not a Bedrock streaming path: "+r.URL.Path, http.StatusNotFound)
				return
			}
			modelID = id
			if b, ok := fwd["anthropic_beta"]; ok {
				var betas []string
				json.Unmarshal(b, &betas)
				header.Set("Anthropic-Beta", strings.Join(betas, ","))
				delete(fwd, "anthropic_beta")
			}
		case "vertex":
			_, rest, ok := strings.Cut(r.URL.Path, "/publishers/anthropic/models/")
			if modelID, ok = strings.CutSuffix(rest, ":streamRawPredict"); !ok {
				http.Error(w, "not a Vertex streaming path: "+r.URL.Path, http.StatusNotFound)
				return
			}
			if b := r.Header.Get("Anthropic-Beta"); b != "" {
				header.Set("Anthropic-Beta", b)
			}
		}
		m, _ := json.Marshal(modelID)
		fwd["model"], fwd["stream"] = m, json.RawMessage("true")
		out, _ := json.Marshal(fwd)
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, api.URL+"/v1/messages?beta=true", bytes.NewReader(out))
		req.Header = header
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		sse, _ := io.ReadAll(res.Body)
		if res.StatusCode != http.StatusOK || platform == "vertex" {
			w.Header().Set("Content-Type", res.Header.Get("Content-Type"))
			w.WriteHeader(res.StatusCode)
			w.Write(sse)
			return
		}
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.Write(eventStreamFrames(t, sse))
	}))
	t.Cleanup(c.Close)
	return c
}

func (c *cloudStub) requests() []cloudRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]cloudRequest(nil), c.reqs...)
}

// eventStreamFrames re-frames the events of an SSE body as Bedrock's
// event-stream chunk messages.
func eventStreamFrames(t *testing.T, sse []byte) []byte {
	var buf bytes.Buffer
	enc := eventstream.NewEncoder()
	for _, line := range strings.Split(string(sse), "\n") {
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok {
			data, ok = strings.CutPrefix(line, "data:")
		}
		if !ok {
			continue
		}
		payload, _ := json.Marshal(map[string]string{"bytes": base64.StdEncoding.EncodeToString([]byte(strings.TrimSpace(data)))})
		err := enc.Encode(&buf, eventstream.Message{
			Headers: eventstream.Headers{
				{Name: ":message-type", Value: eventstream.StringValue("event")},
				{Name: ":event-type", Value: eventstream.StringValue("chunk")},
				{Name: ":content-type", Value: eventstream.StringValue("application/json")},
			},
			Payload: payload,
		})
		if err != nil {
			t.Errorf("encoding an event-stream frame: %v", err)
		}
	}
	return buf.Bytes()
}

// clearProviderEnv isolates a test from the machine's credentials and
// cloud settings.
func clearProviderEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL",
		"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_SKIP_VERTEX_AUTH",
		"ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION",
		"AWS_REGION", "AWS_DEFAULT_REGION", "AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_SESSION_TOKEN",
		"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "CLAUDE_CODE_API_KEY_HELPER_TTL_MS",
		"CLAUDE_STREAM_IDLE_TIMEOUT_MS", "CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS", "API_TIMEOUT_MS", "CLAUDE_CODE_MAX_RETRIES"} {
		t.Setenv(k, "")
	}
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// toolTurn is a script of two replies: a Read of notes.txt in cwd, then
// a text answer.
func cloudToolTurn(t *testing.T) (cwd string, replies []agentlooptest.Reply) {
	cwd = t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "notes.txt"), []byte("cloud notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return cwd, []agentlooptest.Reply{
		agentlooptest.ToolUse("toolu_1", "Read", map[string]any{"file_path": filepath.Join(cwd, "notes.txt")}),
		agentlooptest.Text("All done."),
	}
}

// runQuery runs one prompt and returns its messages and result.
func runCloudQuery(t *testing.T, o *agentloop.Options) ([]agentloop.Message, *message.Result) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	msgs, err := agentloop.Query(ctx, "go", o).Collect()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range msgs {
		if r, ok := m.(*message.Result); ok {
			return msgs, r
		}
	}
	t.Fatal("no result message")
	return nil, nil
}

// checkToolTurn checks that the run of toolTurn's script completed: the
// Read ran and the model saw its output, and the run ended on the text.
func checkCloudToolTurn(t *testing.T, api *agentlooptest.Server, r *message.Result) {
	t.Helper()
	if r.IsError || r.Text() != "All done." || r.NumTurns != 2 {
		t.Fatalf("result: error %v, %q after %d turns; want All done. after 2", r.IsError, r.Text(), r.NumTurns)
	}
	var sawResult bool
	for _, req := range api.Requests() {
		if c, ok := req.ToolResult("toolu_1"); ok {
			sawResult = strings.Contains(string(cloudJSON(t, c)), "cloud notes")
		}
	}
	if !sawResult {
		t.Error("the model never saw the Read result")
	}
}

func cloudJSON(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// With CLAUDE_CODE_USE_BEDROCK the built-in provider talks to Bedrock:
// signed requests to the model's invoke-with-response-stream path, the
// version in the body and no model there, an event-stream answer read
// into a full turn with a tool call; the Bedrock model id is priced as its
// family and the usage says provider bedrock.
func TestQueryOnBedrock(t *testing.T) {
	clearProviderEnv(t)
	cwd, replies := cloudToolTurn(t)
	api := agentlooptest.NewTB(t, replies...)
	stub := newCloudStub(t, "bedrock", api)
	t.Setenv("CLAUDE_CODE_USE_BEDROCK", "1")
	t.Setenv("ANTHROPIC_BEDROCK_BASE_URL", stub.URL)
	t.Setenv("AWS_REGION", "us-east-2")
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIDQUERYTEST")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "not-a-secret")
	const id = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"
	msgs, r := runCloudQuery(t, &agentloop.Options{Cwd: cwd, Model: id})
	checkCloudToolTurn(t, api, r)

	reqs := stub.requests()
	if len(reqs) < 2 {
		t.Fatalf("Bedrock got %d requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		if want := "/model/" + id + "/invoke-with-response-stream"; req.Path != want {
			t.Errorf("request %d: path %q, want %q", i, req.Path, want)
		}
		if a := req.Header.Get("Authorization"); !strings.HasPrefix(a, "AWS4-HMAC-SHA256 Credential=AKIDQUERYTEST/") ||
			!strings.Contains(a, "/us-east-2/bedrock/aws4_request") {
			t.Errorf("request %d: Authorization %q, want SigV4", i, a)
		}
		if v := string(req.Body["anthropic_version"]); v != `"bedrock-2023-05-31"` {
			t.Errorf("request %d: anthropic_version %s", i, v)
		}
		if _, ok := req.Body["model"]; ok {
			t.Errorf("request %d: the body names the model", i)
		}
	}

	mu, ok := r.ModelUsage[id]
	if !ok {
		t.Fatalf("modelUsage has no %q: %v", id, r.ModelUsage)
	}
	if mu.CanonicalModel != "claude-sonnet-4-5" || mu.CostBasis != "list" || mu.CostUnknown || mu.Provider != "bedrock" {
		t.Errorf("modelUsage: canonical %q, basis %q, unknown %v, provider %q", mu.CanonicalModel, mu.CostBasis, mu.CostUnknown, mu.Provider)
	}
	p, _, _ := pricing.Lookup("claude-sonnet-4-5")
	want := float64(mu.InputTokens)/1e6*p.Input + float64(mu.OutputTokens)/1e6*p.Output +
		float64(mu.CacheReadInputTokens)/1e6*p.CacheRead + float64(mu.CacheCreationInputTokens)/1e6*p.CacheWrite5m
	if want == 0 || math.Abs(r.TotalCostUSD-want) > 1e-12 {
		t.Errorf("total_cost_usd %v, want %v at claude-sonnet-4-5's rates", r.TotalCostUSD, want)
	}
	for _, m := range msgs {
		if s, ok := m.(*message.System); ok && s.Init != nil && s.Init.APIKeySource != "none" {
			t.Errorf("apiKeySource %q on Bedrock, want none", s.Init.APIKeySource)
		}
	}
}

// With CLAUDE_CODE_USE_VERTEX the built-in provider talks to Vertex: the
// project's streamRawPredict path, the version in the body and no model
// there, no Authorization when CLAUDE_CODE_SKIP_VERTEX_AUTH is set, and a
// full turn with a tool call.
func TestQueryOnVertex(t *testing.T) {
	clearProviderEnv(t)
	cwd, replies := cloudToolTurn(t)
	api := agentlooptest.NewTB(t, replies...)
	stub := newCloudStub(t, "vertex", api)
	t.Setenv("CLAUDE_CODE_USE_VERTEX", "1")
	t.Setenv("CLAUDE_CODE_SKIP_VERTEX_AUTH", "1")
	t.Setenv("ANTHROPIC_VERTEX_BASE_URL", stub.URL)
	t.Setenv("ANTHROPIC_VERTEX_PROJECT_ID", "agentloop-test")
	t.Setenv("CLOUD_ML_REGION", "europe-west4")
	const id = "claude-opus-4-5@20251101"
	_, r := runCloudQuery(t, &agentloop.Options{Cwd: cwd, Model: id})
	checkCloudToolTurn(t, api, r)
	reqs := stub.requests()
	if len(reqs) < 2 {
		t.Fatalf("Vertex got %d requests, want 2", len(reqs))
	}
	for i, req := range reqs {
		want := "/v1/projects/agentloop-test/locations/europe-west4/publishers/anthropic/models/" + id + ":streamRawPredict"
		if p, _ := url.PathUnescape(req.Path); p != want {
			t.Errorf("request %d: path %q, want %q", i, req.Path, want)
		}
		if a := req.Header.Get("Authorization"); a != "" {
			t.Errorf("request %d: Authorization %q with auth skipped", i, a)
		}
		if v := string(req.Body["anthropic_version"]); v != `"vertex-2023-10-16"` {
			t.Errorf("request %d: anthropic_version %s", i, v)
		}
		if _, ok := req.Body["model"]; ok {
			t.Errorf("request %d: the body names the model", i)
		}
	}
	if mu := r.ModelUsage[id]; mu.CanonicalModel != "claude-opus-4-5" || mu.Provider != "vertex" || mu.CostUSD <= 0 {
		t.Errorf("modelUsage %+v, want claude-opus-4-5 on vertex at a price", mu)
	}
}

// The apiKeyHelper setting gives the key: its output is the x-api-key of
// every request, and system/init says apiKeyHelper.
func TestQueryAPIKeyHelperSetting(t *testing.T) {
	clearProviderEnv(t)
	api := agentlooptest.NewTB(t, agentlooptest.Text("Hi."))
	t.Setenv("ANTHROPIC_BASE_URL", api.URL)
	msgs, r := runCloudQuery(t, &agentloop.Options{Cwd: t.TempDir(), Settings: `{"apiKeyHelper": "printf 'sk-from-helper\\n'"}`})
	if r.IsError {
		t.Fatalf("result %+v", r)
	}
	for _, req := range api.Requests() {
		if k := req.Header.Get("X-Api-Key"); k != "sk-from-helper" {
			t.Errorf("x-api-key %q, want the helper's", k)
		}
	}
	var source string
	for _, m := range msgs {
		if s, ok := m.(*message.System); ok && s.Init != nil {
			source = s.Init.APIKeySource
		}
		if d, ok := agentloop.DiagnosticOf(m); ok && strings.Contains(d.Text, "apiKeyHelper") {
			t.Errorf("diagnostic about the honoured key: %q", d.Text)
		}
	}
	if source != "apiKeyHelper" {
		t.Errorf("apiKeySource %q, want apiKeyHelper", source)
	}
}

// A helper that fails ends the session's first request with an error that
// names apiKeyHelper.
func TestQueryAPIKeyHelperFails(t *testing.T) {
	clearProviderEnv(t)
	api := agentlooptest.NewTB(t)
	api.AllowExhausted()
	t.Setenv("ANTHROPIC_BASE_URL", api.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err := agentloop.Query(ctx, "go", &agentloop.Options{Cwd: t.TempDir(),
		Settings: `{"apiKeyHelper": "echo no vault >&2; exit 7"}`}).Collect()
	if err == nil || !strings.Contains(err.Error(), `apiKeyHelper "echo no vault >&2; exit 7" failed: exit status 7: no vault`) {
		t.Errorf("err = %v, want one naming apiKeyHelper, its command and its message", err)
	}
	if strings.Contains(fmt.Sprint(err), "connection") {
		t.Errorf("err = %v: the helper's failure is no connection error", err)
	}
	if n := len(api.Requests()); n != 0 {
		t.Errorf("%d requests sent without a key", n)
	}
}

// modelPricing (setting and option) replaces the list price: the option
// wins over the setting, and the usage says managed.
func TestQueryModelPricing(t *testing.T) {
	clearProviderEnv(t)
	tests := []struct {
		name     string
		settings string
		option   map[string]pricing.Rates
		input    float64 // the input rate that must apply
	}{
		{"setting", `{"modelPricing": {"claude-opus-5-5": {"input": 1000, "output": 1000}}}`, nil, 1000},
		{"option over setting", `{"modelPricing": {"claude-opus-5-5": {"input": 1000, "output": 1000}}}`,
			map[string]pricing.Rates{"opus": pricing.ListRates(3000, 3000)}, 3000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := agentlooptest.NewTB(t, agentlooptest.Text("Priced."))
			t.Setenv("ANTHROPIC_BASE_URL", api.URL)
			t.Setenv("ANTHROPIC_API_KEY", "sk-test")
			_, r := runCloudQuery(t, &agentloop.Options{Cwd: t.TempDir(), Model: "claude-opus-5-5", Settings: tt.settings, ModelPricing: tt.option})
			mu := r.ModelUsage["claude-opus-5-5"]
			if mu.CostBasis != "managed" || mu.CostUnknown {
				t.Errorf("costBasis %q, unknown %v; want managed", mu.CostBasis, mu.CostUnknown)
			}
			want := float64(mu.InputTokens)/1e6*tt.input + float64(mu.OutputTokens)/1e6*tt.input +
				float64(mu.CacheReadInputTokens)/1e6*tt.input*0.1 + float64(mu.CacheCreationInputTokens)/1e6*tt.input*1.25
			if want == 0 || math.Abs(r.TotalCostUSD-want) > 1e-9 {
				t.Errorf("total_cost_usd %v, want %v", r.TotalCostUSD, want)
			}
		})
	}
}

// A model without a price costs 0, is flagged costUnknown in modelUsage,
// and is reported once by a pricing diagnostic, however many replies it
// gives.
func TestQueryUnknownModelCost(t *testing.T) {
	clearProviderEnv(t)
	cwd, replies := cloudToolTurn(t)
	api := agentlooptest.NewTB(t, replies...)
	t.Setenv("ANTHROPIC_BASE_URL", api.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	msgs, r := runCloudQuery(t, &agentloop.Options{Cwd: cwd, Model: "local-llama-70b"})
	checkCloudToolTurn(t, api, r)
	mu, ok := r.ModelUsage["local-llama-70b"]
	if !ok {
		t.Fatalf("no modelUsage entry: %v", r.ModelUsage)
	}
	if !mu.CostUnknown || mu.CostBasis != "unknown" || mu.CostUSD != 0 || r.TotalCostUSD != 0 || mu.InputTokens == 0 {
		t.Errorf("modelUsage %+v, total %v; want tokens counted at $0, flagged", mu, r.TotalCostUSD)
	}
	line, _ := json.Marshal(r)
	if !bytes.Contains(line, []byte(`"costUnknown":true`)) {
		t.Errorf("result line has no costUnknown: %s", line)
	}
	var diags []string
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagPricing {
			diags = append(diags, d.Text)
		}
	}
	if len(diags) != 1 || !strings.Contains(diags[0], `"local-llama-70b" has no price`) {
		t.Errorf("pricing diagnostics %q, want one naming the model", diags)
	}
}

// A known model's modelUsage JSON has no costUnknown field.
func TestQueryKnownModelNotFlagged(t *testing.T) {
	clearProviderEnv(t)
	api := agentlooptest.NewTB(t, agentlooptest.Text("Hi."))
	t.Setenv("ANTHROPIC_BASE_URL", api.URL)
	t.Setenv("ANTHROPIC_API_KEY", "sk-test")
	msgs, r := runCloudQuery(t, &agentloop.Options{Cwd: t.TempDir()})
	line, _ := json.Marshal(r)
	if bytes.Contains(line, []byte("costUnknown")) || r.TotalCostUSD <= 0 {
		t.Errorf("known model: %s", line)
	}
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagPricing {
			t.Errorf("pricing diagnostic for a known model: %q", d.Text)
		}
	}
}

// With a provider of the host's own, the apiKeyHelper setting is reported
// as not honoured, and never run.
func TestQueryAPIKeyHelperWithOwnProvider(t *testing.T) {
	clearProviderEnv(t)
	api := agentlooptest.NewTB(t, agentlooptest.Text("Hi."))
	p, err := anthropic.New(&anthropic.Options{APIKey: "sk-own", BaseURL: api.URL})
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "ran")
	msgs, r := runCloudQuery(t, &agentloop.Options{Cwd: t.TempDir(), Provider: p,
		Settings: `{"apiKeyHelper": "touch ` + marker + `; echo k"}`})
	if r.IsError {
		t.Fatalf("result %+v", r)
	}
	var found bool
	for _, m := range msgs {
		if d, ok := agentloop.DiagnosticOf(m); ok && d.Tag == agentloop.DiagSettings && strings.Contains(d.Text, `"apiKeyHelper" is ignored`) {
			found = true
		}
	}
	if !found {
		t.Error("no diagnostic for the ignored apiKeyHelper")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the helper ran")
	}
	if k := api.LastRequest().Header.Get("X-Api-Key"); k != "sk-own" {
		t.Errorf("x-api-key %q", k)
	}
}

// A repository's settings file cannot run apiKeyHelper: from the project
// file it is ignored (reported), the helper never runs and the key of the
// environment is sent; the same helper from --settings (the control) runs.
func TestQueryAPIKeyHelperNotFromRepository(t *testing.T) {
	for _, c := range []struct {
		name    string
		project bool
		wantKey string
	}{
		{"project file", true, "sk-env"},
		{"control: --settings", false, "sk-from-helper"},
	} {
		t.Run(c.name, func(t *testing.T) {
			clearProviderEnv(t)
			api := agentlooptest.NewTB(t, agentlooptest.Text("Hi."))
			t.Setenv("ANTHROPIC_BASE_URL", api.URL)
			if c.project {
				t.Setenv("ANTHROPIC_API_KEY", "sk-env")
			}
			cwd := t.TempDir()
			marker := filepath.Join(t.TempDir(), "helper-ran")
			helper := `{"apiKeyHelper": "touch '` + marker + `'; printf 'sk-from-helper\\n'"}`
			o := &agentloop.Options{Cwd: cwd, SettingSources: []settings.SettingSource{settings.Project}}
			if c.project {
				os.MkdirAll(filepath.Join(cwd, ".claude"), 0o755)
				os.WriteFile(filepath.Join(cwd, ".claude", "settings.json"), []byte(helper), 0o644)
			} else {
				o.Settings = helper
			}
			msgs, r := runCloudQuery(t, o)
			if r.IsError {
				t.Fatalf("result %+v", r)
			}
			for _, req := range api.Requests() {
				if k := req.Header.Get("X-Api-Key"); k != c.wantKey {
					t.Errorf("x-api-key %q, want %q", k, c.wantKey)
				}
			}
			_, err := os.Stat(marker)
			if ran := err == nil; ran == c.project {
				t.Errorf("helper ran = %v", ran)
			}
			reported := false
			for _, m := range msgs {
				if d, ok := agentloop.DiagnosticOf(m); ok && strings.Contains(d.Text, "apiKeyHelper") {
					reported = true
				}
			}
			if reported != c.project {
				t.Errorf("reported = %v, want %v", reported, c.project)
			}
		})
	}
}
