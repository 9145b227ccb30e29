package otlp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// writePEM writes a self-signed certificate and its key to dir and
// returns their paths.
func writePEM(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPath, keyPath
}

// TestConfigFromEnv: each variable of the OTLP exporter specification,
// the per-signal one winning, and an error naming the variable for each
// malformed value.
func TestConfigFromEnv(t *testing.T) {
	dir := t.TempDir()
	cert, key := writePEM(t, dir)
	junk := filepath.Join(dir, "junk.pem")
	os.WriteFile(junk, []byte("not a certificate"), 0o600)

	type want struct {
		url      string
		headers  map[string]string
		timeout  time.Duration
		gzip     bool
		tls      string // "", "ca", "client", "both"
		delta    bool   // counters and observable counters delta
		lowmem   bool   // counters delta, observable counters cumulative
		expHisto bool
	}
	for _, c := range []struct {
		name    string
		signal  Signal
		env     map[string]string
		want    want
		wantErr string // the variable the error names
	}{
		{name: "defaults traces", signal: Traces, want: want{url: "http://localhost:4318/v1/traces", timeout: 10 * time.Second}},
		{name: "defaults metrics", signal: Metrics, want: want{url: "http://localhost:4318/v1/metrics", timeout: 10 * time.Second}},
		{name: "base endpoint", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "https://col:4318"},
			want: want{url: "https://col:4318/v1/traces", timeout: DefaultTimeout}},
		{name: "base endpoint with path", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": " http://col:4318/my/collector/ "},
			want: want{url: "http://col:4318/my/collector/v1/metrics", timeout: DefaultTimeout}},
		{name: "signal endpoint as is", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://ignored",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://col:9/custom/path?x=1"},
			want: want{url: "http://col:9/custom/path?x=1", timeout: DefaultTimeout}},
		{name: "signal endpoint without path", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://col:9"},
			want: want{url: "http://col:9/", timeout: DefaultTimeout}},
		{name: "other signal's endpoint ignored", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://col:9"},
			want: want{url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout}},
		{name: "headers", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%20b%3Dc, X-Team = core ,"},
			want: want{url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout, headers: map[string]string{"api-key": "a b=c", "X-Team": "core"}}},
		{name: "signal headers win", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1", "OTEL_EXPORTER_OTLP_METRICS_HEADERS": "b=2"},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout, headers: map[string]string{"b": "2"}}},
		{name: "timeout", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1500", "OTEL_EXPORTER_OTLP_METRICS_TIMEOUT": "1"},
			want: want{url: "http://localhost:4318/v1/traces", timeout: 1500 * time.Millisecond}},
		{name: "signal timeout", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "1500", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "20"},
			want: want{url: "http://localhost:4318/v1/traces", timeout: 20 * time.Millisecond}},
		{name: "gzip", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "GZIP"},
			want: want{url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout, gzip: true}},
		{name: "signal none wins", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "gzip", "OTEL_EXPORTER_OTLP_METRICS_COMPRESSION": "none"},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout}},
		{name: "ca", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": cert},
			want: want{url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout, tls: "ca"}},
		{name: "client cert", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": key},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout, tls: "client"}},
		{name: "both", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": cert,
			"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": key},
			want: want{url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout, tls: "both"}},
		{name: "delta", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "Delta"},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout, delta: true}},
		{name: "lowmemory", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "lowmemory"},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout, lowmem: true}},
		{name: "cumulative", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "cumulative"},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout}},
		{name: "exponential", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "base2_exponential_bucket_histogram"},
			want: want{url: "http://localhost:4318/v1/metrics", timeout: DefaultTimeout, expHisto: true}},
		{name: "metrics variables ignored for traces", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "bogus"},
			want: want{url: "http://localhost:4318/v1/traces", timeout: DefaultTimeout}},

		{name: "bad endpoint scheme", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4318"}, wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "grpc scheme", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "grpc://col"}, wantErr: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"},
		{name: "endpoint no host", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http:///x"}, wantErr: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"},
		{name: "endpoint unparsable", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://col:port"}, wantErr: "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{name: "headers no =", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=1,b"}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "headers bad escape", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_HEADERS": "a=%zz"}, wantErr: "OTEL_EXPORTER_OTLP_METRICS_HEADERS"},
		{name: "headers bad key", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a b=1"}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "headers newline", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "a=x%0Ay"}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "headers only commas", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": ","}, wantErr: "OTEL_EXPORTER_OTLP_HEADERS"},
		{name: "timeout text", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "10s"}, wantErr: "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{name: "timeout zero", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT": "0"}, wantErr: "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"},
		{name: "timeout negative", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_TIMEOUT": "-5"}, wantErr: "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{name: "compression", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, wantErr: "OTEL_EXPORTER_OTLP_COMPRESSION"},
		{name: "ca missing", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_CERTIFICATE": filepath.Join(dir, "nope")}, wantErr: "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{name: "ca junk", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE": junk}, wantErr: "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE"},
		{name: "key without cert", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_KEY": key}, wantErr: "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE"},
		{name: "cert without key", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_CLIENT_CERTIFICATE": cert}, wantErr: "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{name: "key junk", signal: Traces, env: map[string]string{"OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE": cert, "OTEL_EXPORTER_OTLP_CLIENT_KEY": junk}, wantErr: "OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{name: "temporality", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE": "sometimes"}, wantErr: "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"},
		{name: "histogram aggregation", signal: Metrics, env: map[string]string{"OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "x"}, wantErr: "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := ConfigFromEnv(c.signal, func(k string) string { return c.env[k] })
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %s", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if cfg.URL != c.want.url || cfg.Timeout != c.want.timeout || cfg.Gzip != c.want.gzip {
				t.Errorf("url %q timeout %v gzip %v, want %q %v %v", cfg.URL, cfg.Timeout, cfg.Gzip, c.want.url, c.want.timeout, c.want.gzip)
			}
			if diff := cmp.Diff(c.want.headers, cfg.Headers); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
			tlsGot := ""
			if cfg.TLS != nil {
				switch {
				case cfg.TLS.RootCAs != nil && len(cfg.TLS.Certificates) == 1:
					tlsGot = "both"
				case cfg.TLS.RootCAs != nil:
					tlsGot = "ca"
				case len(cfg.TLS.Certificates) == 1:
					tlsGot = "client"
				default:
					tlsGot = "empty"
				}
			}
			if tlsGot != c.want.tls {
				t.Errorf("tls %q, want %q", tlsGot, c.want.tls)
			}
			if c.signal != Metrics {
				return
			}
			e, err := NewMetricExporter(cfg)
			if err != nil {
				t.Fatal(err)
			}
			counter, updown := e.Temporality(sdkmetric.InstrumentKindCounter), e.Temporality(sdkmetric.InstrumentKindObservableCounter)
			wantCounter, wantUpdown := metricdata.CumulativeTemporality, metricdata.CumulativeTemporality
			if c.want.delta {
				wantCounter, wantUpdown = metricdata.DeltaTemporality, metricdata.DeltaTemporality
			}
			if c.want.lowmem {
				wantCounter = metricdata.DeltaTemporality
			}
			if counter != wantCounter || updown != wantUpdown {
				t.Errorf("temporality counter %v observable counter %v, want %v %v", counter, updown, wantCounter, wantUpdown)
			}
			_, isExp := e.Aggregation(sdkmetric.InstrumentKindHistogram).(sdkmetric.AggregationBase2ExponentialHistogram)
			if isExp != c.want.expHisto {
				t.Errorf("exponential histograms %v, want %v", isExp, c.want.expHisto)
			}
		})
	}
}

// FuzzParseHeaders: the headers parser never panics, and what it accepts
// is a set of valid HTTP header names and values that parse again from
// their own re-encoding.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"a=b", "api-key=a%20b%3Dc, X-Team = core ,", "a=%zz", "=", ",,", "a=1,a=2", "k=\t v \t", "k=%E2%82%AC"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHeaders(s)
		if err != nil {
			if h != nil {
				t.Errorf("%q: headers %v with error %v", s, h, err)
			}
			return
		}
		if len(h) == 0 {
			t.Fatalf("%q: no headers and no error", s)
		}
		var parts []string
		for k, v := range h {
			if !isToken(k) {
				t.Errorf("%q: key %q is not a token", s, k)
			}
			if strings.ContainsAny(v, "\r\n\x00") || v != strings.TrimSpace(v) {
				t.Errorf("%q: value %q", s, v)
			}
			parts = append(parts, k+"="+escapeAll(v))
		}
		again, err := ParseHeaders(strings.Join(parts, ","))
		if err != nil || !cmp.Equal(h, again) {
			t.Errorf("%q: %v re-parsed as %v, %v", s, h, again, err)
		}
	})
}

// escapeAll percent-encodes every byte of s.
func escapeAll(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for _, c := range []byte(s) {
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}
