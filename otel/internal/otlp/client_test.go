package otlp

import (
	"compress/gzip"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// request is what the test collector received.
type request struct {
	path   string
	header http.Header
	body   []byte // decompressed
}

// testCollector answers each request with the next of replies (the last
// one repeated); a reply of status 0 drops the connection.
type testCollector struct {
	mu      sync.Mutex
	reqs    []request
	replies []reply
}

type reply struct {
	status int
	header map[string]string
	body   []byte
}

func (c *testCollector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var body io.Reader = r.Body
	if r.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, _ := io.ReadAll(body)
	c.mu.Lock()
	n := len(c.reqs)
	c.reqs = append(c.reqs, request{path: r.URL.Path, header: r.Header.Clone(), body: data})
	rep := reply{status: 200}
	if len(c.replies) > 0 {
		rep = c.replies[min(n, len(c.replies)-1)]
	}
	c.mu.Unlock()
	if rep.status == 0 {
		conn, _, _ := w.(http.Hijacker).Hijack()
		conn.Close()
		return
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	w.Write(rep.body)
}

func (c *testCollector) requests() []request {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]request(nil), c.reqs...)
}

// newTestExporter starts a collector with replies and returns a trace
// exporter configured from env (OTEL_EXPORTER_OTLP_ENDPOINT is set to the
// collector), with short backoffs.
func newTestExporter(t *testing.T, env map[string]string, replies ...reply) (*TraceExporter, *testCollector) {
	t.Helper()
	col := &testCollector{replies: replies}
	srv := httptest.NewServer(col)
	t.Cleanup(srv.Close)
	all := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}
	for k, v := range env {
		all[k] = v
	}
	cfg, err := ConfigFromEnv(Traces, func(k string) string { return all[k] })
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewTraceExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.c.minBackoff, e.c.maxBackoff = 10*time.Millisecond, 40*time.Millisecond
	return e, col
}

func testSpans() []sdktrace.ReadOnlySpan {
	return tracetest.SpanStubs{
		{Name: "one", Resource: resource.NewSchemaless(attribute.String("service.name", "svc"))},
		{Name: "two", Resource: resource.NewSchemaless(attribute.String("service.name", "svc"))},
	}.Snapshots()
}

func spanNames(t *testing.T, body []byte) []string {
	t.Helper()
	var req coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			for _, s := range ss.Spans {
				names = append(names, s.Name)
			}
		}
	}
	return names
}

// TestTraceExporterPosts: one POST to /v1/traces with the protobuf
// content type, agentloop's User-Agent, the configured headers and the
// encoded spans; with gzip, the body is compressed. An empty batch sends
// nothing, and an export after Shutdown fails.
func TestTraceExporterPosts(t *testing.T) {
	for _, gz := range []bool{false, true} {
		env := map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "Authorization=Bearer%20tok,x-tenant=t1"}
		if gz {
			env["OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"] = "gzip"
		}
		e, col := newTestExporter(t, env)
		if err := e.ExportSpans(context.Background(), nil); err != nil {
			t.Fatal(err)
		}
		if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
			t.Fatal(err)
		}
		reqs := col.requests()
		if len(reqs) != 1 {
			t.Fatalf("gzip %v: %d requests, want 1", gz, len(reqs))
		}
		r := reqs[0]
		if r.path != "/v1/traces" || r.header.Get("Content-Type") != "application/x-protobuf" ||
			!strings.Contains(r.header.Get("User-Agent"), "agentloop") ||
			r.header.Get("Authorization") != "Bearer tok" || r.header.Get("X-Tenant") != "t1" {
			t.Errorf("gzip %v: request %s %v", gz, r.path, r.header)
		}
		if got := r.header.Get("Content-Encoding"); (got == "gzip") != gz {
			t.Errorf("gzip %v: Content-Encoding %q", gz, got)
		}
		if names := spanNames(t, r.body); strings.Join(names, ",") != "one,two" {
			t.Errorf("spans %v", names)
		}
		if err := e.Shutdown(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := e.ExportSpans(context.Background(), testSpans()); !errors.Is(err, ErrShutdown) {
			t.Errorf("export after shutdown: %v", err)
		}
	}
}

// TestRetries: 429, 502, 503, 504 and a dropped connection are retried
// until a success; Retry-After is honoured.
func TestRetries(t *testing.T) {
	e, col := newTestExporter(t, nil,
		reply{status: 503}, reply{status: 0}, reply{status: 502}, reply{status: 504},
		reply{status: 429, header: map[string]string{"Retry-After": "1"}}, reply{status: 200})
	start := time.Now()
	if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Fatal(err)
	}
	if n := len(col.requests()); n != 6 {
		t.Errorf("%d attempts, want 6", n)
	}
	if d := time.Since(start); d < time.Second {
		t.Errorf("done in %v: Retry-After: 1 not honoured", d)
	}
	for _, r := range col.requests() {
		if names := spanNames(t, r.body); len(names) != 2 {
			t.Errorf("a retry sent %v", names)
		}
	}
}

// TestRetriesWithinTimeout: retries stop at the timeout, and a
// Retry-After beyond it stops them at once; the error names the status.
func TestRetriesWithinTimeout(t *testing.T) {
	e, col := newTestExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "300"}, reply{status: 503, body: []byte("busy")})
	start := time.Now()
	err := e.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "busy") {
		t.Errorf("error %v, want one naming 503 and the body", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v with a 300 ms timeout", d)
	}
	if n := len(col.requests()); n < 2 {
		t.Errorf("%d attempts, want retries", n)
	}

	e, col = newTestExporter(t, map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "2000"},
		reply{status: 429, header: map[string]string{"Retry-After": "60"}})
	start = time.Now()
	err = e.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "429") || time.Since(start) > time.Second || len(col.requests()) != 1 {
		t.Errorf("Retry-After past the deadline: error %v after %v and %d attempts", err, time.Since(start), len(col.requests()))
	}
}

// TestNonRetryableStatus: another status fails at once, naming the
// status and the start of the body.
func TestNonRetryableStatus(t *testing.T) {
	long := strings.Repeat("x", 1000)
	e, col := newTestExporter(t, nil, reply{status: 400, body: []byte("bad request: field 9 " + long)})
	err := e.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "400 Bad Request") || !strings.Contains(err.Error(), "bad request: field 9") ||
		strings.Contains(err.Error(), long) {
		t.Errorf("error %v", err)
	}
	if n := len(col.requests()); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}
}

// TestConnectionRefused: a refused connection (nothing listening) fails
// at once, without retries, so that a program flushing at exit does not
// wait out the timeout.
func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	cfg, err := ConfigFromEnv(Traces, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": url}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := NewTraceExporter(cfg)
	start := time.Now()
	err = e.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "refused") || time.Since(start) > time.Second {
		t.Errorf("error %v after %v", err, time.Since(start))
	}
}

// TestPartialSuccess: a 2xx response reporting rejected spans is an error.
func TestPartialSuccess(t *testing.T) {
	body, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
		RejectedSpans: 2, ErrorMessage: "too old"}})
	hdr := map[string]string{"Content-Type": "application/x-protobuf"}
	e, _ := newTestExporter(t, nil, reply{status: 200, header: hdr, body: body})
	err := e.ExportSpans(context.Background(), testSpans())
	if err == nil || !strings.Contains(err.Error(), "2 spans rejected") || !strings.Contains(err.Error(), "too old") {
		t.Errorf("error %v", err)
	}
	empty, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{}})
	e, _ = newTestExporter(t, nil, reply{status: 200, header: hdr, body: empty})
	if err := e.ExportSpans(context.Background(), testSpans()); err != nil {
		t.Errorf("empty partial success: %v", err)
	}
}

// TestMetricExporterPosts: a collection goes to /v1/metrics as an
// ExportMetricsServiceRequest; after Shutdown, exports fail.
func TestMetricExporterPosts(t *testing.T) {
	col := &testCollector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	cfg, err := ConfigFromEnv(Metrics, func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": srv.URL + "/custom"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewMetricExporter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Export(context.Background(), &metricdata.ResourceMetrics{}); err != nil {
		t.Fatal(err)
	}
	if n := len(col.requests()); n != 0 {
		t.Fatalf("an empty collection sent %d requests", n)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(e, sdkmetric.WithInterval(time.Hour))))
	c, _ := mp.Meter("m").Int64Counter("c")
	c.Add(context.Background(), 5)
	if err := mp.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := col.requests()
	if len(reqs) != 1 || reqs[0].path != "/custom" {
		t.Fatalf("requests %v", reqs)
	}
	var req colmetricpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(reqs[0].body, &req); err != nil {
		t.Fatal(err)
	}
	m := req.ResourceMetrics[0].ScopeMetrics[0].Metrics[0]
	if m.Name != "c" || m.GetSum().DataPoints[0].GetAsInt() != 5 {
		t.Errorf("metric %v", m)
	}
	if err := e.Export(context.Background(), &metricdata.ResourceMetrics{}); !errors.Is(err, ErrShutdown) {
		t.Errorf("export after shutdown: %v", err)
	}
	if err := e.ForceFlush(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestTLS: OTEL_EXPORTER_OTLP_CERTIFICATE makes the exporter trust a
// collector's certificate; without it the handshake fails.
func TestTLS(t *testing.T) {
	col := &testCollector{}
	srv := httptest.NewTLSServer(col)
	defer srv.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, trust := range []bool{true, false} {
		// A generous timeout: the untrusted case fails at the handshake at
		// once, and a loaded machine must not turn that into a deadline.
		env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL, "OTEL_EXPORTER_OTLP_TIMEOUT": "10000"}
		if trust {
			env["OTEL_EXPORTER_OTLP_CERTIFICATE"] = ca
		}
		cfg, err := ConfigFromEnv(Traces, func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		e, _ := NewTraceExporter(cfg)
		err = e.ExportSpans(context.Background(), testSpans())
		if trust && err != nil {
			t.Errorf("trusted: %v", err)
		}
		if !trust && (err == nil || !strings.Contains(err.Error(), "certificate") || strings.Contains(err.Error(), "attempts")) {
			t.Errorf("untrusted: %v (want one attempt failing on the certificate: no retry can fix it)", err)
		}
	}
	if n := len(col.requests()); n != 1 {
		t.Errorf("%d requests reached the collector, want 1", n)
	}
}
