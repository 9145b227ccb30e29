package anthropic

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"golang.org/x/oauth2"

	"github.com/agentloop/agentloop/internal/httpretry"
	"github.com/agentloop/agentloop/internal/lazy"
	"github.com/agentloop/agentloop/internal/toolsearch"
	"github.com/agentloop/agentloop/model"
)

// Version is agentloop's version, sent in the User-Agent header as
// agentloop/Version. [New] reads it, so change it, if at all, before
// creating providers.
var Version = "0.1.0"

// ErrNoCredentials is returned by [New] when there is nothing to authenticate
// with on the Anthropic API: no Options.APIKey or Options.AuthToken, no
// credential header in Options.Headers, no API key helper, and neither
// environment variable set. (The cloud platforms have credentials of their
// own.)
var ErrNoCredentials = errors.New("anthropic: no API credentials: set ANTHROPIC_API_KEY (sent as x-api-key), ANTHROPIC_AUTH_TOKEN (sent as Authorization: Bearer) or the apiKeyHelper setting, or use Bedrock (CLAUDE_CODE_USE_BEDROCK=1) or Vertex (CLAUDE_CODE_USE_VERTEX=1)")

// Defaults.
const (
	// DefaultBaseURL is the API's address when neither Options.BaseURL nor
	// ANTHROPIC_BASE_URL is set.
	DefaultBaseURL = "https://api.anthropic.com"
	// DefaultMaxRetries is how many times a failed request is retried when
	// Options.MaxRetries is nil.
	DefaultMaxRetries = 10
	// APIVersion is the anthropic-version header.
	APIVersion = "2023-06-01"
)

// maxOverloaded is how many 529 answers end the retries: the reference gives
// up on the third, whatever MaxRetries allows.
const maxOverloaded = 3

// Failures that cannot succeed on retry end the call early: the second 401,
// the second "no such host".
const (
	maxAuthFailures = 2
	maxNoSuchHost   = 2
)

// Options configures a [Provider]. The zero value is usable: every empty field
// takes its default, from the environment where one applies. A nil *Options
// is the zero value.
type Options struct {
	// APIKey is sent in the x-api-key header. Empty: ANTHROPIC_API_KEY,
	// unless AuthToken is set.
	APIKey string
	// AuthToken is sent as Authorization: Bearer. Empty:
	// ANTHROPIC_AUTH_TOKEN, unless APIKey is set.
	AuthToken string
	// BaseURL is the API's address, e.g. http://127.0.0.1:8080 for a local
	// fake. A path is kept: requests go to {BaseURL}/v1/messages. Empty:
	// ANTHROPIC_BASE_URL, else [DefaultBaseURL].
	BaseURL string
	// HTTPClient sends the requests. Nil: a client shared by every
	// provider created without one, so the process keeps one pool of
	// connections (up to [MaxIdleConnsPerHost] idle ones per host), with
	// no timeouts; the provider's own timeouts below bound every attempt
	// whatever the client (they cancel the request's context).
	HTTPClient *http.Client
	// Headers are added to every request, after the provider's own, so they
	// can replace them (User-Agent included). A credential header here
	// (x-api-key or Authorization) counts as credentials for [New].
	Headers map[string]string
	// MaxRetries is how many times a failed request is retried. Nil:
	// CLAUDE_CODE_MAX_RETRIES (a whole number ≥ 0; above 15 counts as 15, as
	// in the reference), else [DefaultMaxRetries]. Zero: no retry. It is
	// also the MaxRetries reported in [model.RetryInfo].
	MaxRetries *int

	// The three timeouts below cut an attempt short; the cut attempt is
	// retried like a connection error, with a [*TimeoutError] as the
	// failure. For each: a positive value is the limit; zero reads the
	// environment variable (whole milliseconds, ≥ 1; anything else makes
	// [New] fail naming it) and falls back to the default; a negative value
	// turns the limit off.

	// StreamIdleTimeout is the longest silence between two events of a
	// stream, pings included. Zero: CLAUDE_STREAM_IDLE_TIMEOUT_MS, else
	// [DefaultStreamIdleTimeout]. Unlike the reference, which raises values
	// under 300 s to 300 s, smaller values are honoured.
	StreamIdleTimeout time.Duration
	// FirstByteTimeout is the longest wait from sending a request to the
	// first event of its stream: connecting, the response headers and the
	// first event all fall under it. Zero:
	// CLAUDE_STREAM_FIRST_BYTE_TIMEOUT_MS, else [DefaultFirstByteTimeout].
	FirstByteTimeout time.Duration
	// RequestTimeout bounds one attempt as a whole, from sending the request
	// to message_stop; retries each get their own. Zero: API_TIMEOUT_MS,
	// else no limit (a long reply may stream for many minutes; the idle
	// timeout catches a stream that stopped).
	RequestTimeout time.Duration

	// Sleep waits d before a retry, returning early with ctx.Err() when ctx
	// is done. Nil: a timer. Tests replace it to record delays without
	// waiting.
	Sleep func(ctx context.Context, d time.Duration) error
	// Now reads the clock for TTFT and Duration. Nil: time.Now.
	Now func() time.Time
	// Jitter returns a number in [0, 1) that scales the random part of a
	// retry delay. Nil: math/rand/v2.Float64.
	Jitter func() float64

	// APIKeyHelper is a shell command (run with /bin/sh -c) whose
	// standard output is the API key, sent as x-api-key: the apiKeyHelper
	// setting. It is used only when no other credential is set (APIKey,
	// AuthToken, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, a credential
	// header). The key is kept for APIKeyTTL and fetched again after that,
	// and after the API answered 401 to it. A helper that fails fails the
	// request, at once, with an [*APIKeyHelperError] naming the command.
	APIKeyHelper string
	// APIKeyFunc is APIKeyHelper as a Go function; it wins over
	// APIKeyHelper. It may be called from several goroutines, one at a
	// time.
	APIKeyFunc func(ctx context.Context) (string, error)
	// APIKeyTTL is how long a helper's key is used. Zero:
	// CLAUDE_CODE_API_KEY_HELPER_TTL_MS (0 there: fetch for every
	// request), else [DefaultAPIKeyTTL]. Negative: until the API refuses
	// it.
	APIKeyTTL time.Duration

	// Platform is where the requests go: [PlatformAnthropic],
	// [PlatformBedrock] or [PlatformVertex]. Empty: PlatformBedrock when
	// CLAUDE_CODE_USE_BEDROCK is true (1, true, yes, on), else
	// PlatformVertex when CLAUDE_CODE_USE_VERTEX is, else
	// PlatformAnthropic. On the cloud platforms the Anthropic credentials
	// (APIKey, AuthToken, the helper and their variables) are not used,
	// and BaseURL, when empty, is read from ANTHROPIC_BEDROCK_BASE_URL or
	// ANTHROPIC_VERTEX_BASE_URL, else it is the platform's regional
	// endpoint; a base URL with a path is refused. Model ids are sent as
	// given ("anthropic.claude-sonnet-4-5-20250929-v1:0",
	// "claude-sonnet-4-5@20250929").
	Platform string
	// AWSRegion is Bedrock's region. Empty: AWS_REGION, else
	// AWS_DEFAULT_REGION, else [DefaultAWSRegion].
	AWSRegion string
	// AWSCredentials sign Bedrock requests (SigV4). Nil: a small default
	// chain (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; the profile's
	// keys or credential_process in the shared files; the AWS CLI v2's
	// `aws configure export-credentials` for SSO and role profiles; web
	// identity, the container endpoint and the EC2 instance metadata
	// service); when AWS_BEARER_TOKEN_BEDROCK is set, that token is sent
	// instead.
	AWSCredentials aws.CredentialsProvider
	// VertexProject is the Google Cloud project for Vertex. Empty:
	// ANTHROPIC_VERTEX_PROJECT_ID, else the Application Default
	// Credentials' project; [New] fails without one.
	VertexProject string
	// VertexRegion is Vertex's region. Empty: CLOUD_ML_REGION, else
	// [DefaultVertexRegion].
	VertexRegion string
	// VertexTokenSource gives the OAuth tokens sent to Vertex as
	// Authorization: Bearer. Nil: Google Application Default Credentials,
	// unless SkipPlatformAuth.
	VertexTokenSource oauth2.TokenSource
	// Getenv reads every environment variable this package consults
	// (those named above, [EnvCustomHeaders] and the proxy variables
	// HTTPS_PROXY, HTTP_PROXY and NO_PROXY, in upper or lower case). Nil:
	// os.Getenv. A caller that layers its own variables over the process's
	// (agentloop applies the settings' env this way) passes a function
	// that looks in its layer first; the AWS credentials chain reads its
	// variables (AWS_PROFILE, AWS_CONFIG_FILE, …) through it too. Google's
	// Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS, …)
	// and the AWS CLI the chain may run still read the process
	// environment.
	Getenv func(key string) string

	// SkipPlatformAuth sends cloud requests without authentication (no
	// SigV4 signature, no bearer token), for gateways that add their own
	// and for tests. It is also on when CLAUDE_CODE_SKIP_BEDROCK_AUTH
	// (Bedrock) or CLAUDE_CODE_SKIP_VERTEX_AUTH (Vertex) is true. An
	// explicit VertexTokenSource is used all the same.
	SkipPlatformAuth bool
}

// Provider streams replies from the Messages API. It implements
// [model.Provider] and is safe for concurrent use. Create it with [New].
type Provider struct {
	client     *apiClient
	maxRetries int
	sleep      func(context.Context, time.Duration) error
	now        func() time.Time
	jitter     func() float64
	endpoint   string // host[:port] of the base URL, for error messages
	timeouts   timeouts
	enc        encoder
	platform   string     // PlatformAnthropic, PlatformBedrock or PlatformVertex
	toolRefs   bool       // see ToolReferences
	keys       *keySource // the API key helper's cache; nil without one
	extra      extraMemo  // the betas and key header of the last request
}

// Platform returns where the provider sends its requests: [PlatformAnthropic],
// [PlatformBedrock] or [PlatformVertex].
func (p *Provider) Platform() string { return p.platform }

// UsesKeyHelper reports whether the provider's key comes from an API key
// helper (Options.APIKeyHelper or APIKeyFunc).
func (p *Provider) UsesKeyHelper() bool { return p.keys != nil }

var _ model.Provider = (*Provider)(nil)

// New returns a Provider configured by opts, which may be nil. It fails with
// [ErrNoCredentials] when there are no credentials, and with an error naming
// the value when the base URL is not an http or https URL or an environment
// variable it reads (CLAUDE_CODE_MAX_RETRIES, the timeouts) is malformed.
func New(opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c, err := resolve(&o)
	if err != nil {
		return nil, err
	}
	return build(&o, c)
}

// config is what [resolve] makes of an [Options] without its functions,
// HTTP client and headers: every value that decides the provider's
// behaviour, the environment's included. It is comparable, the key of
// [Shared]'s providers.
type config struct {
	apiKey, authToken, baseURL string
	endpoint                   string // host[:port] of baseURL
	maxRetries                 int
	timeouts                   timeouts
	version                    string // Version when resolved
	headers                    string // EnvCustomHeaders, canonical (see customHeaders)
	proxy                      proxyConfig

	keyHelper string        // Options.APIKeyHelper, when it is the credential
	keyTTL    time.Duration // its key's lifetime

	platform                    string
	awsRegion                   string
	vertexProject, vertexRegion string
	skipAuth                    bool
}

// resolve fills o's empty fields from the environment and checks them.
func resolve(o *Options) (config, error) {
	cloud, err := resolvePlatform(o)
	if err != nil {
		return config{}, err
	}
	hdrs, _, err := customHeaders(o.getenv)
	if err != nil {
		return config{}, err
	}
	var c config
	if cloud {
		// The platform's own credentials; the endpoint is named by the
		// base URL when there is one, else by the region.
		c = config{platform: o.Platform, baseURL: o.BaseURL, version: Version, skipAuth: o.SkipPlatformAuth,
			awsRegion: o.AWSRegion, vertexProject: o.VertexProject, vertexRegion: o.VertexRegion}
		c.endpoint = "bedrock-runtime." + o.AWSRegion + ".amazonaws.com"
		if o.Platform == PlatformVertex {
			c.endpoint = o.VertexRegion + "-aiplatform.googleapis.com"
		}
		if o.BaseURL != "" {
			u, _ := url.Parse(o.BaseURL) // checked by resolvePlatform
			c.endpoint = u.Host
		}
	} else {
		if o.APIKey == "" && o.AuthToken == "" {
			o.APIKey = o.getenv("ANTHROPIC_API_KEY")
			o.AuthToken = o.getenv("ANTHROPIC_AUTH_TOKEN")
		}
		helper := o.APIKeyFunc != nil || o.APIKeyHelper != ""
		credHeader := hasCredentialHeader(o.Headers) || hasCredentialHeaderLine(hdrs)
		if o.APIKey == "" && o.AuthToken == "" && !credHeader && !helper {
			return config{}, ErrNoCredentials
		}
		if o.BaseURL == "" {
			o.BaseURL = o.getenv("ANTHROPIC_BASE_URL")
		}
		if o.BaseURL == "" {
			o.BaseURL = DefaultBaseURL
		}
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return config{}, fmt.Errorf("anthropic: base URL %q: want an http or https URL", o.BaseURL)
		}
		c = config{apiKey: o.APIKey, authToken: o.AuthToken, baseURL: o.BaseURL, endpoint: u.Host, version: Version,
			platform: PlatformAnthropic}
		if o.APIKey == "" && o.AuthToken == "" && !credHeader {
			// Only a helper is left to authenticate with.
			if o.APIKeyFunc == nil {
				c.keyHelper = o.APIKeyHelper
			}
			if c.keyTTL, err = resolveKeyTTL(o.getenv, o.APIKeyTTL); err != nil {
				return config{}, err
			}
		} else {
			o.APIKeyFunc = nil // another credential wins
		}
	}
	c.headers, c.proxy = hdrs, readProxy(o.getenv)
	if c.maxRetries, err = resolveMaxRetries(o.getenv, o.MaxRetries); err != nil {
		return config{}, err
	}
	t := &c.timeouts
	if t.idle, err = resolveTimeout(o.getenv, o.StreamIdleTimeout, EnvStreamIdleTimeout, DefaultStreamIdleTimeout); err != nil {
		return config{}, err
	}
	if t.firstByte, err = resolveTimeout(o.getenv, o.FirstByteTimeout, EnvFirstByteTimeout, DefaultFirstByteTimeout); err != nil {
		return config{}, err
	}
	if t.request, err = resolveTimeout(o.getenv, o.RequestTimeout, EnvRequestTimeout, 0); err != nil {
		return config{}, err
	}
	return c, nil
}

// build makes the provider of a resolved configuration. It fails only
// for a cloud platform whose credentials cannot be set up.
func build(o *Options, c config) (*Provider, error) {
	hc := o.HTTPClient
	if hc == nil {
		hc = clientFor(c.proxy)
	}
	version := APIVersion
	switch c.platform {
	case PlatformBedrock:
		version = bedrockAPIVersion
	case PlatformVertex:
		version = vertexAPIVersion
	}
	hc, base, chain, err := platformOptions(o, c, hc)
	if err != nil {
		return nil, err
	}
	if c.platform == PlatformAnthropic {
		base = c.baseURL
	}
	header := headerOf("User-Agent", "agentloop/"+c.version, "anthropic-version", version, "X-Api-Key", c.apiKey)
	if c.authToken != "" {
		header.Set("Authorization", "Bearer "+c.authToken)
	}
	if c.headers != "" {
		h, err := ParseCustomHeaders(c.headers)
		if err != nil {
			return nil, err
		}
		for k, v := range h {
			header.Set(k, v)
		}
	}
	for k, v := range o.Headers {
		header.Set(k, v)
	}
	client, err := newAPIClient(hc, base, header, chain)
	if err != nil {
		return nil, err
	}

	p := &Provider{
		endpoint:   c.endpoint,
		client:     client,
		maxRetries: c.maxRetries,
		sleep:      o.Sleep,
		now:        o.Now,
		jitter:     o.Jitter,
		timeouts:   c.timeouts,
		platform:   c.platform,
		toolRefs:   c.platform == PlatformAnthropic && toolsearch.FirstParty(c.baseURL),
	}
	switch {
	case c.platform != PlatformAnthropic:
	case o.APIKeyFunc != nil:
		p.keys = &keySource{fn: o.APIKeyFunc, ttl: c.keyTTL}
	case c.keyHelper != "":
		p.keys = &keySource{fn: HelperCommand(c.keyHelper), command: c.keyHelper, ttl: c.keyTTL}
	}
	if p.sleep == nil {
		p.sleep = httpretry.Sleep
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.jitter == nil {
		p.jitter = rand.Float64
	}
	if p.keys != nil {
		p.keys.now = p.now
	}
	return p, nil
}

// maxShared bounds the providers [Shared] keeps: past it (a process with
// that many distinct credentials or addresses), Shared makes new ones.
const maxShared = 64

var shared struct {
	sync.Mutex
	m map[config]*Provider
}

// Shared is [New] for callers that create many providers with the same
// settings, such as one per session: it returns the same *Provider for the
// same resolved configuration (options and environment) each time, so the
// sessions share its caches and skip its set-up (and an API key helper's
// key). Options with functions (Sleep, Now, Jitter, APIKeyFunc), an
// HTTPClient, Headers, AWSCredentials or a VertexTokenSource get a new
// provider, as from New; Getenv does not, since what it yields is part of
// the resolved configuration. It fails as New does.
func Shared(opts *Options) (*Provider, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	c, err := resolve(&o)
	if err != nil {
		return nil, err
	}
	if o.Sleep != nil || o.Now != nil || o.Jitter != nil || o.HTTPClient != nil || len(o.Headers) > 0 ||
		o.APIKeyFunc != nil || o.AWSCredentials != nil || o.VertexTokenSource != nil {
		return build(&o, c)
	}
	shared.Lock()
	defer shared.Unlock()
	if p, ok := shared.m[c]; ok {
		return p, nil
	}
	p, err := build(&o, c)
	if err != nil {
		return nil, err
	}
	if len(shared.m) < maxShared {
		if shared.m == nil {
			shared.m = map[config]*Provider{}
		}
		shared.m[c] = p
	}
	return p, nil
}

// hasCredentialHeaderLine is hasCredentialHeader for the canonical
// lines of [customHeaders].
func hasCredentialHeaderLine(lines string) bool {
	for _, l := range strings.Split(lines, "\n") {
		k, v, _ := strings.Cut(l, ":")
		if hasCredentialHeader(map[string]string{k: strings.TrimSpace(v)}) {
			return true
		}
	}
	return false
}

func hasCredentialHeader(h map[string]string) bool {
	for k, v := range h {
		if v != "" && (strings.EqualFold(k, "x-api-key") || strings.EqualFold(k, "authorization")) {
			return true
		}
	}
	return false
}

// MaxIdleConnsPerHost is how many idle connections to one host the shared
// transport of providers without Options.HTTPClient keeps for reuse. It is
// sized for a process running on the order of a thousand sessions at once:
// with http.DefaultTransport's 2, most of their requests would open a new
// TCP (and TLS) connection.
const MaxIdleConnsPerHost = 1024

var sharedClientOnce lazy.Value[*http.Client] // the value of sharedClient, built at its first use

// sharedClient returns the HTTP client of every provider created without
// Options.HTTPClient: one connection pool per process, so sessions reuse
// each other's connections. It is never modified after creation.
func sharedClient() *http.Client { return sharedClientOnce.Get(newSharedClient) }

func newSharedClient() *http.Client {
	t := NewTransport()
	if t == nil {
		return &http.Client{}
	}
	return &http.Client{Transport: t}
}

// NewTransport returns a new transport configured as the one the
// provider's default client uses: a clone of [http.DefaultTransport]
// (HTTP/2 over TLS, the proxy from the environment, its dial timeouts)
// keeping [MaxIdleConnsPerHost] idle connections per host, tuned by
// [TuneTransport]. It is for a program that wraps the transport (to trace
// or meter requests) and passes it in Options.HTTPClient without losing
// those settings. It returns nil if http.DefaultTransport has been
// replaced by something other than an *http.Transport.
func NewTransport() *http.Transport {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return nil
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = MaxIdleConnsPerHost
	t.MaxIdleConns = 2 * MaxIdleConnsPerHost
	TuneTransport(t)
	return t
}

// Buffer sizes of an HTTP/1.1 connection of the provider's own client
// (see [TuneTransport]).
const (
	connReadBuffer  = 4 << 10
	connWriteBuffer = 2 << 10
)

// TuneTransport sets on t what the provider's default client has. Its
// connections' write buffers are smaller than net/http's 4 KiB: an
// HTTP/1.1 connection holds its buffers for as long as it lives, idle or
// not, a process running a thousand sessions holds a thousand
// connections, and a request body's large parts are written past the
// write buffer anyway. The read buffer stays at 4 KiB: a reply's head
// (over a kilobyte from the real API) and the start of its event stream
// then come in one read, where a 1 KiB buffer took two or more system
// calls per reply. And its dialer wraps each connection so that a request
// body is written from the provider's own bytes in one vectored write
// (writev), without the copy into a buffer allocated per request that
// net/http otherwise makes over HTTP/1.1. Over HTTP/2 neither changes
// anything: its connections frame bodies through buffers of their own.
//
// Its dialer also shares dials among the provider's requests to an HTTPS
// host (the dial gate): while the host is not known to speak HTTP/1.1
// only, at most one dial to it is under way, and the requests that were
// waiting take the HTTP/2 connection it makes instead of each dialing
// (and handshaking) one of their own. It applies to requests a Provider
// sends, direct (not through a proxy); anything else sent through t dials
// as before. A transport and its clones share their gates.
//
// Call it before t is used, once: it wraps t's DialContext.
func TuneTransport(t *http.Transport) {
	t.ReadBufferSize = connReadBuffer
	t.WriteBufferSize = connWriteBuffer
	dialBodyConns(t)
}

func defaultHTTPClient() *http.Client { return sharedClient() }
