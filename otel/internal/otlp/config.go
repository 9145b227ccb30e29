package otlp

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// Signal is the kind of telemetry an exporter sends: it picks the
// per-signal variables (OTEL_EXPORTER_OTLP_TRACES_* or ..._METRICS_*) and
// the URL path appended to OTEL_EXPORTER_OTLP_ENDPOINT.
type Signal string

const (
	Traces  Signal = "TRACES"
	Metrics Signal = "METRICS"
)

// DefaultEndpoint is the base URL used when no endpoint variable is set.
const DefaultEndpoint = "http://localhost:4318"

// DefaultTimeout bounds one export, retries included, when no timeout
// variable is set.
const DefaultTimeout = 10 * time.Second

// Config is where and how an exporter sends. ConfigFromEnv fills it; its
// zero value is not usable (URL is required).
type Config struct {
	// URL is the full URL requests are posted to
	// (http://localhost:4318/v1/traces by default).
	URL string
	// Headers are added to every request.
	Headers map[string]string
	// Timeout bounds one export, retries included; 0 means DefaultTimeout.
	Timeout time.Duration
	// Gzip compresses request bodies (Content-Encoding: gzip).
	Gzip bool
	// TLS is the client's TLS configuration for https URLs; nil uses the
	// system's roots and no client certificate.
	TLS *tls.Config
	// Temporality and Aggregation are the metric exporter's selectors;
	// nil means the SDK's defaults (cumulative, and the default
	// aggregations). Trace exporters ignore them.
	Temporality sdkmetric.TemporalitySelector
	Aggregation sdkmetric.AggregationSelector
}

// ConfigFromEnv reads the OTLP exporter variables of the specification
// for signal s through getenv (os.Getenv in production), a per-signal
// variable winning over the general one (a value of spaces only counts as
// unset):
//
//   - OTEL_EXPORTER_OTLP_ENDPOINT: a base URL, to which "/v1/traces" or
//     "/v1/metrics" is appended; OTEL_EXPORTER_OTLP_{TRACES,METRICS}_ENDPOINT
//     is used as it is ("/" when it has no path). Either must be an http
//     or https URL with a host. Default http://localhost:4318.
//   - ..._HEADERS: comma-separated key=value pairs, values percent-decoded
//     (see ParseHeaders).
//   - ..._TIMEOUT: a positive whole number of milliseconds (default 10 s).
//   - ..._COMPRESSION: gzip or none (default none).
//   - ..._CERTIFICATE: a PEM file of CA certificates to trust;
//     ..._CLIENT_CERTIFICATE and ..._CLIENT_KEY: PEM files of a client
//     certificate and its key, both or neither.
//   - OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE (metrics only):
//     cumulative (default), delta or lowmemory, mapped to the SDK's
//     selectors as the official exporter maps them.
//   - OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION (metrics
//     only): explicit_bucket_histogram (default) or
//     base2_exponential_bucket_histogram.
//
// Every malformed value is an error naming the variable; none is ignored.
// OTEL_EXPORTER_OTLP_INSECURE is not read: it applies to gRPC only, and
// over HTTP the endpoint's scheme decides.
func ConfigFromEnv(s Signal, getenv func(string) string) (Config, error) {
	r := envReader{s: s, getenv: getenv}
	var cfg Config
	var err error
	if cfg.URL, err = r.endpoint(); err != nil {
		return Config{}, err
	}
	if name, v := r.lookup("HEADERS"); v != "" {
		if cfg.Headers, err = ParseHeaders(v); err != nil {
			return Config{}, fmt.Errorf("otlp: %s: %w", name, err)
		}
	}
	cfg.Timeout = DefaultTimeout
	if name, v := r.lookup("TIMEOUT"); v != "" {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil || ms <= 0 || ms > int64(time.Duration(1<<63-1)/time.Millisecond) {
			return Config{}, fmt.Errorf("otlp: %s=%q: want a positive whole number of milliseconds", name, v)
		}
		cfg.Timeout = time.Duration(ms) * time.Millisecond
	}
	if name, v := r.lookup("COMPRESSION"); v != "" {
		switch strings.ToLower(v) {
		case "gzip":
			cfg.Gzip = true
		case "none":
		default:
			return Config{}, fmt.Errorf("otlp: %s=%q: want gzip or none", name, v)
		}
	}
	if cfg.TLS, err = r.tlsConfig(); err != nil {
		return Config{}, err
	}
	if s == Metrics {
		if cfg.Temporality, err = r.temporality(); err != nil {
			return Config{}, err
		}
		if cfg.Aggregation, err = r.aggregation(); err != nil {
			return Config{}, err
		}
	}
	return cfg, nil
}

// envReader looks up a signal's variables.
type envReader struct {
	s      Signal
	getenv func(string) string
}

// lookup returns the per-signal variable's name and trimmed value when it
// is set, else the general one's (value "" when neither is).
func (r envReader) lookup(suffix string) (name, value string) {
	name = "OTEL_EXPORTER_OTLP_" + string(r.s) + "_" + suffix
	if v := strings.TrimSpace(r.getenv(name)); v != "" {
		return name, v
	}
	name = "OTEL_EXPORTER_OTLP_" + suffix
	return name, strings.TrimSpace(r.getenv(name))
}

// endpoint resolves the URL to post to.
func (r envReader) endpoint() (string, error) {
	signalVar := "OTEL_EXPORTER_OTLP_" + string(r.s) + "_ENDPOINT"
	if v := strings.TrimSpace(r.getenv(signalVar)); v != "" {
		u, err := parseEndpoint(signalVar, v)
		if err != nil {
			return "", err
		}
		if u.Path == "" {
			u.Path = "/"
		}
		return u.String(), nil
	}
	base := DefaultEndpoint
	if v := strings.TrimSpace(r.getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		base = v
	}
	u, err := parseEndpoint("OTEL_EXPORTER_OTLP_ENDPOINT", base)
	if err != nil {
		return "", err
	}
	u.Path = path.Join("/", u.Path, "v1", strings.ToLower(string(r.s)))
	u.RawPath = ""
	return u.String(), nil
}

func parseEndpoint(name, v string) (*url.URL, error) {
	u, err := url.Parse(v)
	if err != nil {
		return nil, fmt.Errorf("otlp: %s=%q: %w", name, v, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("otlp: %s=%q: want an http:// or https:// URL", name, v)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("otlp: %s=%q: the URL has no host", name, v)
	}
	return u, nil
}

// tlsConfig reads the certificate variables; nil when none is set.
func (r envReader) tlsConfig() (*tls.Config, error) {
	caVar, ca := r.lookup("CERTIFICATE")
	certVar, cert := r.lookup("CLIENT_CERTIFICATE")
	keyVar, key := r.lookup("CLIENT_KEY")
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("otlp: %s: %w", caVar, err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("otlp: %s=%q: no PEM certificate in the file", caVar, ca)
		}
	}
	switch {
	case cert == "" && key != "":
		return nil, fmt.Errorf("otlp: %s is set but not %s", keyVar, certVar)
	case cert != "" && key == "":
		return nil, fmt.Errorf("otlp: %s is set but not %s", certVar, keyVar)
	case cert != "":
		certPEM, err := os.ReadFile(cert)
		if err != nil {
			return nil, fmt.Errorf("otlp: %s: %w", certVar, err)
		}
		keyPEM, err := os.ReadFile(key)
		if err != nil {
			return nil, fmt.Errorf("otlp: %s: %w", keyVar, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("otlp: %s and %s: %w", certVar, keyVar, err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// temporality reads OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE.
func (r envReader) temporality() (sdkmetric.TemporalitySelector, error) {
	const name = "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE"
	v := strings.TrimSpace(r.getenv(name))
	switch strings.ToLower(v) {
	case "", "cumulative":
		return sdkmetric.CumulativeTemporalitySelector, nil
	case "delta":
		return sdkmetric.DeltaTemporalitySelector, nil
	case "lowmemory":
		return sdkmetric.LowMemoryTemporalitySelector, nil
	}
	return nil, fmt.Errorf("otlp: %s=%q: want cumulative, delta or lowmemory", name, v)
}

// aggregation reads OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION.
func (r envReader) aggregation() (sdkmetric.AggregationSelector, error) {
	const name = "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION"
	v := strings.TrimSpace(r.getenv(name))
	switch strings.ToLower(v) {
	case "", "explicit_bucket_histogram":
		return sdkmetric.DefaultAggregationSelector, nil
	case "base2_exponential_bucket_histogram":
		return func(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
			if k == sdkmetric.InstrumentKindHistogram {
				// The specification's defaults.
				return sdkmetric.AggregationBase2ExponentialHistogram{MaxSize: 160, MaxScale: 20}
			}
			return sdkmetric.DefaultAggregationSelector(k)
		}, nil
	}
	return nil, fmt.Errorf("otlp: %s=%q: want explicit_bucket_histogram or base2_exponential_bucket_histogram", name, v)
}

// ParseHeaders parses the value of an OTEL_EXPORTER_OTLP_*HEADERS
// variable: a comma-separated list of key=value members in the W3C
// Baggage format. Spaces around keys and values are trimmed, values are
// percent-decoded, and empty members (",,", a trailing comma) are
// skipped. A key that is not an HTTP token, a member without "=", a bad
// percent escape, or a decoded value with a control character other than
// tab is an error; a repeated key keeps its last value.
func ParseHeaders(v string) (map[string]string, error) {
	h := map[string]string{}
	for _, member := range strings.Split(v, ",") {
		if strings.TrimSpace(member) == "" {
			continue
		}
		k, val, ok := strings.Cut(member, "=")
		if !ok {
			return nil, fmt.Errorf("header %q has no '='", member)
		}
		k = strings.TrimSpace(k)
		if !isToken(k) {
			return nil, fmt.Errorf("header name %q is not an HTTP token", k)
		}
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("header %q: %w", k, err)
		}
		dec = strings.TrimSpace(dec)
		for _, c := range []byte(dec) {
			if (c < 0x20 && c != '\t') || c == 0x7f {
				return nil, fmt.Errorf("header %q: the value has a control character", k)
			}
		}
		h[k] = dec
	}
	if len(h) == 0 {
		return nil, errors.New("no header in the value")
	}
	return h, nil
}

// isToken reports whether s is an HTTP token (RFC 9110), the form of a
// header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}
