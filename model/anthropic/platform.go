package anthropic

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
)

// The platforms a [Provider] can send its requests to (Options.Platform).
const (
	// PlatformAnthropic is the Anthropic Messages API (or a gateway that
	// speaks it): POST {base}/v1/messages, server-sent events back.
	PlatformAnthropic = "firstParty"
	// PlatformBedrock is Amazon Bedrock: POST
	// {base}/model/{model}/invoke-with-response-stream, signed with AWS
	// SigV4, answered in AWS event-stream framing.
	PlatformBedrock = "bedrock"
	// PlatformVertex is Google Vertex AI: POST
	// {base}/v1/projects/{project}/locations/{region}/publishers/anthropic/models/{model}:streamRawPredict,
	// with a Google OAuth bearer token.
	PlatformVertex = "vertex"
)

// The anthropic-version each platform takes (in the body, on the cloud
// platforms; the platform's middleware moves the header there).
const (
	bedrockAPIVersion = "bedrock-2023-05-31"
	vertexAPIVersion  = "vertex-2023-10-16"
)

// Defaults of the cloud platforms' regions, as in the reference CLI.
const (
	// DefaultAWSRegion is Bedrock's region when neither Options.AWSRegion,
	// AWS_REGION nor AWS_DEFAULT_REGION is set.
	DefaultAWSRegion = "us-east-1"
	// DefaultVertexRegion is Vertex's region when neither
	// Options.VertexRegion nor CLOUD_ML_REGION is set.
	DefaultVertexRegion = "us-east5"
)

// vertexScope is the OAuth scope of Application Default Credentials.
const vertexScope = "https://www.googleapis.com/auth/cloud-platform"

// PlatformAuthError is the failure to get a cloud platform's credentials
// for a request: AWS credentials for Bedrock, a Google token for Vertex.
// It is not retried; [Provider.Stream] returns it, wrapped, at once.
type PlatformAuthError struct {
	Platform string // PlatformBedrock or PlatformVertex
	Err      error
}

func (e *PlatformAuthError) Error() string {
	what := "AWS credentials"
	if e.Platform == PlatformVertex {
		what = "Google Cloud credentials"
	}
	return fmt.Sprintf("%s: getting %s: %v", e.Platform, what, e.Err)
}

func (e *PlatformAuthError) Unwrap() error { return e.Err }

// EnvPlatform returns the platform the environment selects for a
// provider without Options.Platform: [PlatformBedrock] when
// CLAUDE_CODE_USE_BEDROCK is true, else [PlatformVertex] when
// CLAUDE_CODE_USE_VERTEX is, else [PlatformAnthropic].
func EnvPlatform() string { return EnvPlatformFrom(os.Getenv) }

// EnvPlatformFrom is [EnvPlatform] reading the variables through getenv
// (see Options.Getenv).
func EnvPlatformFrom(getenv func(string) string) string {
	switch {
	case envTrue(getenv, "CLAUDE_CODE_USE_BEDROCK"):
		return PlatformBedrock
	case envTrue(getenv, "CLAUDE_CODE_USE_VERTEX"):
		return PlatformVertex
	}
	return PlatformAnthropic
}

// envTrue reports whether an environment variable holds a true value, the
// way the reference reads its CLAUDE_CODE_USE_* switches.
func envTrue(getenv func(string) string, name string) bool {
	switch strings.ToLower(strings.TrimSpace(getenv(name))) {
	case "1", "true", "yes", "on":
		return true
	}
	return false
}

func firstEnv(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// resolvePlatform fills o's platform fields from the environment and
// checks them. It returns whether the platform is a cloud one.
func resolvePlatform(o *Options) (bool, error) {
	switch o.Platform {
	case "":
		o.Platform = EnvPlatformFrom(o.getenv)
	case PlatformAnthropic, PlatformBedrock, PlatformVertex:
	default:
		return false, fmt.Errorf("anthropic: platform %q: want %q, %q or %q", o.Platform, PlatformAnthropic, PlatformBedrock, PlatformVertex)
	}
	var baseEnv string
	switch o.Platform {
	case PlatformAnthropic:
		return false, nil
	case PlatformBedrock:
		if o.AWSRegion == "" {
			o.AWSRegion = firstEnv(o.getenv, "AWS_REGION", "AWS_DEFAULT_REGION")
		}
		if o.AWSRegion == "" {
			o.AWSRegion = DefaultAWSRegion
		}
		o.SkipPlatformAuth = o.SkipPlatformAuth || envTrue(o.getenv, "CLAUDE_CODE_SKIP_BEDROCK_AUTH")
		baseEnv = "ANTHROPIC_BEDROCK_BASE_URL"
	case PlatformVertex:
		if o.VertexRegion == "" {
			o.VertexRegion = o.getenv("CLOUD_ML_REGION")
		}
		if o.VertexRegion == "" {
			o.VertexRegion = DefaultVertexRegion
		}
		if o.VertexProject == "" {
			o.VertexProject = o.getenv("ANTHROPIC_VERTEX_PROJECT_ID")
		}
		o.SkipPlatformAuth = o.SkipPlatformAuth || envTrue(o.getenv, "CLAUDE_CODE_SKIP_VERTEX_AUTH")
		baseEnv = "ANTHROPIC_VERTEX_BASE_URL"
	}
	if o.BaseURL == "" {
		o.BaseURL = o.getenv(baseEnv)
	}
	if o.BaseURL != "" {
		u, err := url.Parse(o.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return false, fmt.Errorf("anthropic: %s base URL %q (%s): want an http or https URL", o.Platform, o.BaseURL, baseEnv)
		}
		if strings.Trim(u.Path, "/") != "" {
			// The middleware rewrites only requests to /v1/messages
			// at the root: under a path it would send a first-party
			// request to the cloud.
			return false, fmt.Errorf("anthropic: %s base URL %q (%s): a path is not supported; give the scheme and host only", o.Platform, o.BaseURL, baseEnv)
		}
	}
	return true, nil
}

// platformOptions returns what adapts requests to a cloud platform: the
// HTTP client, the base URL (empty on the first-party API) and the
// middleware, which goes after every other so that it runs closest to the
// wire (it signs the request, which must not change after it).
func platformOptions(o *Options, c config, hc *http.Client) (*http.Client, string, []middleware, error) {
	switch c.platform {
	case PlatformBedrock:
		auth, err := bedrockAuthOf(o, c)
		if err != nil {
			return nil, "", nil, err
		}
		base := c.baseURL
		if base == "" {
			base = "https://bedrock-runtime." + c.awsRegion + ".amazonaws.com"
		}
		return hc, base, []middleware{bedrockRewrite(auth)}, nil
	case PlatformVertex:
		ts := o.VertexTokenSource
		switch {
		case ts != nil:
		case c.skipAuth:
			ts = oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "unused"})
			hc = &http.Client{Transport: noAuthTransport{base: hc.Transport}, CheckRedirect: hc.CheckRedirect, Jar: hc.Jar, Timeout: hc.Timeout}
		default:
			creds, err := google.FindDefaultCredentials(context.Background(), vertexScope)
			if err != nil {
				return nil, "", nil, fmt.Errorf("anthropic: vertex: finding Google Application Default Credentials (or set CLAUDE_CODE_SKIP_VERTEX_AUTH=1): %w", err)
			}
			ts = creds.TokenSource
			if c.vertexProject == "" {
				c.vertexProject = creds.ProjectID
			}
		}
		if c.vertexProject == "" {
			return nil, "", nil, errors.New("anthropic: vertex: no project: set ANTHROPIC_VERTEX_PROJECT_ID (Options.VertexProject)")
		}
		return vertexOptions(c.vertexRegion, c.vertexProject, c.baseURL, &tokenSource{ts}, hc)
	}
	return hc, "", nil, nil
}

// bedrockAuthOf is how a Bedrock provider authenticates: not at all when
// authentication is skipped, else with AWS_BEARER_TOKEN_BEDROCK when it is
// set, else by signing with Options.AWSCredentials or the default chain
// (awscreds.go).
func bedrockAuthOf(o *Options, c config) (bedrockAuth, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	a := bedrockAuth{region: c.awsRegion, now: now}
	switch {
	case c.skipAuth:
	case o.getenv("AWS_BEARER_TOKEN_BEDROCK") != "":
		a.bearer = o.getenv("AWS_BEARER_TOKEN_BEDROCK")
	case o.AWSCredentials != nil:
		a.creds = awsCredentials{o.AWSCredentials}
	default:
		a.creds = awsCredentials{newAWSChain(o.getenv)}
	}
	return a, nil
}

// awsCredentials marks the failures of a credentials provider, so that
// Stream reports them at once instead of retrying them as connection
// errors.
type awsCredentials struct{ p aws.CredentialsProvider }

func (a awsCredentials) Retrieve(ctx context.Context) (aws.Credentials, error) {
	c, err := a.p.Retrieve(ctx)
	if err != nil {
		return c, &PlatformAuthError{Platform: PlatformBedrock, Err: err}
	}
	return c, nil
}

// tokenSource marks the failures of a Google token source, as
// awsCredentials does for AWS.
type tokenSource struct{ ts oauth2.TokenSource }

func (t *tokenSource) Token() (*oauth2.Token, error) {
	tok, err := t.ts.Token()
	if err != nil {
		return nil, &PlatformAuthError{Platform: PlatformVertex, Err: err}
	}
	return tok, nil
}

// noAuthTransport sends requests without their Authorization header: the
// transport under Vertex's OAuth transport when authentication is
// skipped.
type noAuthTransport struct{ base http.RoundTripper }

func (t noAuthTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	if r.Header.Get("Authorization") != "" {
		r = r.Clone(r.Context())
		r.Header.Del("Authorization")
	}
	return base.RoundTrip(r)
}
