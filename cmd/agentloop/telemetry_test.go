package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/agentloop/agentloop/agentlooptest"
)

// collector is an OTLP/HTTP collector stub: it keeps every request's path
// and body.
type collector struct {
	mu     sync.Mutex
	bodies map[string][][]byte
}

func newCollector(t *testing.T) (*collector, string) {
	c := &collector{bodies: map[string][][]byte{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.bodies[r.Method+" "+r.URL.Path] = append(c.bodies[r.Method+" "+r.URL.Path], b)
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	return c, srv.URL
}

func (c *collector) requests() map[string][][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][][]byte{}
	for k, v := range c.bodies {
		out[k] = v
	}
	return out
}

// cleanEnv is the test process's environment without the variables that
// turn telemetry on or point it somewhere.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "CLAUDE_CODE_ENABLE_TELEMETRY=") ||
			strings.HasPrefix(kv, "TRACEPARENT=") || strings.HasPrefix(kv, "TRACESTATE=") {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// runTelemetryCLI runs the command as a process on a one-reply script with extra
// environment variables and returns its stderr.
func runTelemetryCLI(t *testing.T, extra ...string) string {
	t.Helper()
	srv := agentlooptest.NewTB(t, agentlooptest.Text("done"))
	cmd := exec.Command(os.Args[0], "-p", "hi", "--no-session-persistence")
	cmd.Dir = t.TempDir()
	cmd.Env = append(cleanEnv(), append([]string{runMainEnv + "=1", "ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test"}, extra...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil || out.String() != "done\n" {
		t.Fatalf("run: %v; stdout %q stderr %q", err, out.String(), errOut.String())
	}
	return errOut.String()
}

// TestTelemetryExportsToCollector: with telemetry on, the command sends its
// spans (continuing TRACEPARENT's trace) and metrics over OTLP/HTTP before
// it exits; with the variables unset it sends nothing.
func TestTelemetryExportsToCollector(t *testing.T) {
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	t.Run("on", func(t *testing.T) {
		col, url := newCollector(t)
		runTelemetryCLI(t, "CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_EXPORTER_OTLP_ENDPOINT="+url,
			"OTEL_TRACES_EXPORTER=otlp", "OTEL_METRICS_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf",
			"TRACEPARENT=00-"+traceID+"-"+parentID+"-01")
		reqs := col.requests()
		if len(reqs["POST /v1/metrics"]) == 0 {
			t.Errorf("no metrics posted; requests: %v", keys(reqs))
		}
		var found bool
		for _, body := range reqs["POST /v1/traces"] {
			var req coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &req); err != nil {
				t.Fatalf("decoding an OTLP trace request: %v", err)
			}
			for _, rs := range req.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					for _, sp := range ss.Spans {
						if sp.Name != "invoke_agent agentloop" {
							continue
						}
						found = true
						if got := bytesHex(sp.TraceId); got != traceID {
							t.Errorf("session span trace id %s, want TRACEPARENT's %s", got, traceID)
						}
						if got := bytesHex(sp.ParentSpanId); got != parentID {
							t.Errorf("session span parent %s, want TRACEPARENT's %s", got, parentID)
						}
					}
				}
			}
		}
		if !found {
			t.Errorf("no session span among %d trace requests", len(reqs["POST /v1/traces"]))
		}
	})
	t.Run("off", func(t *testing.T) {
		col, url := newCollector(t)
		runTelemetryCLI(t, "OTEL_EXPORTER_OTLP_ENDPOINT="+url, "OTEL_TRACES_EXPORTER=otlp")
		if reqs := col.requests(); len(reqs) != 0 {
			t.Errorf("telemetry off, yet the collector got %v", keys(reqs))
		}
	})
	t.Run("unsupported exporter", func(t *testing.T) {
		col, url := newCollector(t)
		stderr := runTelemetryCLI(t, "CLAUDE_CODE_ENABLE_TELEMETRY=1", "OTEL_EXPORTER_OTLP_ENDPOINT="+url, "OTEL_TRACES_EXPORTER=zipkin")
		if !strings.Contains(stderr, "telemetry is off") || !strings.Contains(stderr, "zipkin") {
			t.Errorf("stderr %q, want a warning naming the exporter", stderr)
		}
		if reqs := col.requests(); len(reqs) != 0 {
			t.Errorf("the collector got %v", keys(reqs))
		}
	})
}

func bytesHex(b []byte) string {
	const digits = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(digits[c>>4])
		s.WriteByte(digits[c&15])
	}
	return s.String()
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
