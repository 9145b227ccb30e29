package anthropic

// The AWS credentials a server hands out, read over HTTP without the AWS
// SDK's clients: web identity (EKS service accounts), the container
// endpoint (ECS tasks, EKS Pod Identity) and the instance metadata
// service (EC2, IMDSv2). Each is tried by awsChain when the environment
// and the shared files give no keys.

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// errNoSource means a source does not apply here (its variables are not
// set): the chain goes on to the next.
var errNoSource = errors.New("not configured")

// awsHTTP is the client of the credential endpoints: short timeouts, so
// that a machine off EC2 learns it quickly, and no proxy (the endpoints
// are link-local or the region's STS).
var awsHTTP = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}

// awsGet sends req and reads at most 64 KiB of a 2xx answer.
func awsGet(req *http.Request, client *http.Client) ([]byte, error) {
	res, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		return nil, fmt.Errorf("%s %s: HTTP %d: %.200s", req.Method, req.URL.Redacted(), res.StatusCode, b)
	}
	return b, nil
}

// webIdentity exchanges the token of AWS_WEB_IDENTITY_TOKEN_FILE for
// AWS_ROLE_ARN's credentials (STS AssumeRoleWithWebIdentity, which takes
// no signature).
func (c *awsChain) webIdentity(ctx context.Context) (aws.Credentials, error) {
	file, role := c.getenv("AWS_WEB_IDENTITY_TOKEN_FILE"), c.getenv("AWS_ROLE_ARN")
	if file == "" || role == "" {
		return aws.Credentials{}, errNoSource
	}
	token, err := os.ReadFile(file)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("web identity: %w", err)
	}
	endpoint := c.getenv("AWS_ENDPOINT_URL_STS")
	if endpoint == "" {
		region := cmpOrEnv(c.getenv, DefaultAWSRegion, "AWS_REGION", "AWS_DEFAULT_REGION")
		endpoint = "https://sts." + region + ".amazonaws.com"
	}
	session := cmpOrEnv(c.getenv, fmt.Sprintf("agentloop-%d", time.Now().UnixNano()), "AWS_ROLE_SESSION_NAME")
	form := url.Values{"Action": {"AssumeRoleWithWebIdentity"}, "Version": {"2011-06-15"}, "RoleArn": {role},
		"RoleSessionName": {session}, "WebIdentityToken": {strings.TrimSpace(string(token))}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(form.Encode()))
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("web identity: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	body, err := awsGet(req, c.client())
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("web identity: %w", err)
	}
	var out struct {
		Credentials struct {
			AccessKeyID     string `xml:"AccessKeyId"`
			SecretAccessKey string
			SessionToken    string
			Expiration      time.Time
		} `xml:"AssumeRoleWithWebIdentityResult>Credentials"`
	}
	if err := xml.Unmarshal(body, &out); err != nil {
		return aws.Credentials{}, fmt.Errorf("web identity: reading STS's answer: %w", err)
	}
	k := out.Credentials
	if k.AccessKeyID == "" || k.SecretAccessKey == "" {
		return aws.Credentials{}, errors.New("web identity: STS's answer has no credentials")
	}
	return aws.Credentials{AccessKeyID: k.AccessKeyID, SecretAccessKey: k.SecretAccessKey, SessionToken: k.SessionToken,
		CanExpire: !k.Expiration.IsZero(), Expires: k.Expiration, Source: "web identity"}, nil
}

// endpointCredentials is the JSON of the container and instance endpoints.
type endpointCredentials struct {
	AccessKeyID     string `json:"AccessKeyId"`
	SecretAccessKey string
	Token           string
	Expiration      *time.Time
}

func (e endpointCredentials) credentials(source string) (aws.Credentials, error) {
	if e.AccessKeyID == "" || e.SecretAccessKey == "" {
		return aws.Credentials{}, fmt.Errorf("%s: the answer has no AccessKeyId and SecretAccessKey", source)
	}
	c := aws.Credentials{AccessKeyID: e.AccessKeyID, SecretAccessKey: e.SecretAccessKey, SessionToken: e.Token, Source: source}
	if e.Expiration != nil {
		c.CanExpire, c.Expires = true, *e.Expiration
	}
	return c, nil
}

// container reads the credentials of AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
// (on 169.254.170.2) or AWS_CONTAINER_CREDENTIALS_FULL_URI, authorised by
// AWS_CONTAINER_AUTHORIZATION_TOKEN(_FILE) when set.
func (c *awsChain) container(ctx context.Context) (aws.Credentials, error) {
	u := c.getenv("AWS_CONTAINER_CREDENTIALS_FULL_URI")
	if rel := c.getenv("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"); rel != "" {
		u = "http://169.254.170.2" + rel
	}
	if u == "" {
		return aws.Credentials{}, errNoSource
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("container credentials: %w", err)
	}
	token := c.getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN")
	if f := c.getenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"); f != "" {
		b, err := os.ReadFile(f)
		if err != nil {
			return aws.Credentials{}, fmt.Errorf("container credentials: %w", err)
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		req.Header.Set("Authorization", token)
	}
	body, err := awsGet(req, c.client())
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("container credentials: %w", err)
	}
	var e endpointCredentials
	if err := json.Unmarshal(body, &e); err != nil {
		return aws.Credentials{}, fmt.Errorf("container credentials: %w", err)
	}
	return e.credentials("container credentials")
}

// instance reads the credentials of the EC2 instance's role from the
// instance metadata service (IMDSv2: a session token first), at
// AWS_EC2_METADATA_SERVICE_ENDPOINT or 169.254.169.254. It is skipped
// when AWS_EC2_METADATA_DISABLED is true.
func (c *awsChain) instance(ctx context.Context) (aws.Credentials, error) {
	if strings.EqualFold(c.getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		return aws.Credentials{}, errNoSource
	}
	base := strings.TrimSuffix(cmpOrEnv(c.getenv, "http://169.254.169.254", "AWS_EC2_METADATA_SERVICE_ENDPOINT"), "/")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second) // off EC2 nothing answers
	defer cancel()
	do := func(method, path string, header http.Header) ([]byte, error) {
		req, err := http.NewRequestWithContext(ctx, method, base+path, nil)
		if err != nil {
			return nil, err
		}
		req.Header = header
		return awsGet(req, c.client())
	}
	token, err := do(http.MethodPut, "/latest/api/token", http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}})
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("instance metadata: %w", err)
	}
	h := http.Header{"X-Aws-Ec2-Metadata-Token": {string(token)}}
	roles, err := do(http.MethodGet, "/latest/meta-data/iam/security-credentials/", h)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("instance metadata: %w", err)
	}
	role, _, _ := strings.Cut(strings.TrimSpace(string(roles)), "\n")
	if role == "" {
		return aws.Credentials{}, errors.New("instance metadata: the instance has no role")
	}
	body, err := do(http.MethodGet, "/latest/meta-data/iam/security-credentials/"+url.PathEscape(role), h)
	if err != nil {
		return aws.Credentials{}, fmt.Errorf("instance metadata: %w", err)
	}
	var e endpointCredentials
	if err := json.Unmarshal(body, &e); err != nil {
		return aws.Credentials{}, fmt.Errorf("instance metadata: %w", err)
	}
	return e.credentials("instance metadata")
}

func (c *awsChain) client() *http.Client {
	if c.http != nil {
		return c.http
	}
	return awsHTTP
}
