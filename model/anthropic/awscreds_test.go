package anthropic

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentloop/agentloop/model"
)

// The default AWS credentials chain, case by case: the environment's
// keys, then the profile's keys or credential_process, then the AWS CLI.
func TestAWSChain(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	creds := write("credentials", `
[default]
aws_access_key_id = AKIDDEFAULT
aws_secret_access_key = secretdefault

[dev]
# a comment
aws_access_key_id=AKIDDEV
aws_secret_access_key=secretdev
aws_session_token = tokendev
s3 =
  max_concurrent_requests = 20
`)
	config := write("config", `
[profile dev]
region = eu-west-1
[profile proc]
credential_process = printf '{"Version":1,"AccessKeyId":"AKIDPROC","SecretAccessKey":"secretproc","SessionToken":"tp","Expiration":"2030-01-02T03:04:05Z"}'
[profile badproc]
credential_process = echo nope >&2; exit 3
[profile sso]
sso_session = corp
sso_account_id = 123
`)
	// A stand-in for the AWS CLI: it prints credentials naming the
	// profile it was asked for.
	cli := write("aws", "#!/bin/sh\nprintf '{\"Version\":1,\"AccessKeyId\":\"AKIDCLI-%s\",\"SecretAccessKey\":\"s\"}' \"$6\"\n")
	if err := os.Chmod(cli, 0o700); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_CONFIG_FILE": config, "AWS_EC2_METADATA_DISABLED": "true"}
	noFiles := map[string]string{"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "none"), "AWS_CONFIG_FILE": filepath.Join(dir, "none"),
		"AWS_EC2_METADATA_DISABLED": "true"}
	tokenFile := write("token", "the-jwt\n")
	// One server plays STS, the container endpoint and the instance
	// metadata service, and checks what each is sent.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/sts":
			r.ParseForm()
			if r.Form.Get("Action") != "AssumeRoleWithWebIdentity" || r.Form.Get("WebIdentityToken") != "the-jwt" || r.Form.Get("RoleArn") != "arn:aws:iam::1:role/r" {
				http.Error(w, "bad form "+r.Form.Encode(), 400)
				return
			}
			io.WriteString(w, `<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>
<AccessKeyId>AKIDWEB</AccessKeyId><SecretAccessKey>sweb</SecretAccessKey><SessionToken>tweb</SessionToken>
<Expiration>2030-01-02T03:04:05Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>`)
		case r.URL.Path == "/container":
			if r.Header.Get("Authorization") != "ctoken" {
				http.Error(w, "no token", 401)
				return
			}
			io.WriteString(w, `{"AccessKeyId":"AKIDCONT","SecretAccessKey":"scont","Token":"tcont","Expiration":"2030-01-02T03:04:05Z"}`)
		case r.URL.Path == "/latest/api/token" && r.Method == http.MethodPut:
			io.WriteString(w, "imds-token")
		case r.Header.Get("X-Aws-Ec2-Metadata-Token") != "imds-token":
			http.Error(w, "no session token", 401)
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/":
			io.WriteString(w, "my-role\n")
		case r.URL.Path == "/latest/meta-data/iam/security-credentials/my-role":
			io.WriteString(w, `{"Code":"Success","AccessKeyId":"AKIDEC2","SecretAccessKey":"sec2","Token":"tec2","Expiration":"2030-01-02T03:04:05Z"}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	expires := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		env     map[string]string
		cli     bool // an aws command on PATH
		want    aws.Credentials
		wantErr string
	}{
		{name: "environment", env: with(files, "AWS_ACCESS_KEY_ID", "AKIDENV", "AWS_SECRET_ACCESS_KEY", "s", "AWS_SESSION_TOKEN", "t"),
			want: aws.Credentials{AccessKeyID: "AKIDENV", SecretAccessKey: "s", SessionToken: "t", Source: "environment"}},
		{name: "half the environment's keys fall through", env: with(files, "AWS_ACCESS_KEY_ID", "AKIDENV"),
			want: aws.Credentials{AccessKeyID: "AKIDDEFAULT", SecretAccessKey: "secretdefault", Source: "profile default"}},
		{name: "named profile", env: with(files, "AWS_PROFILE", "dev"),
			want: aws.Credentials{AccessKeyID: "AKIDDEV", SecretAccessKey: "secretdev", SessionToken: "tokendev", Source: "profile dev"}},
		{name: "AWS_DEFAULT_PROFILE", env: with(files, "AWS_DEFAULT_PROFILE", "dev"),
			want: aws.Credentials{AccessKeyID: "AKIDDEV", SecretAccessKey: "secretdev", SessionToken: "tokendev", Source: "profile dev"}},
		{name: "credential_process", env: with(files, "AWS_PROFILE", "proc"),
			want: aws.Credentials{AccessKeyID: "AKIDPROC", SecretAccessKey: "secretproc", SessionToken: "tp",
				Source: "credential_process of profile proc", CanExpire: true, Expires: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}},
		{name: "credential_process fails", env: with(files, "AWS_PROFILE", "badproc"), wantErr: "credential_process of profile badproc: exit status 3: nope"},
		{name: "SSO profile through the AWS CLI", env: with(files, "AWS_PROFILE", "sso"), cli: true,
			want: aws.Credentials{AccessKeyID: "AKIDCLI-sso", SecretAccessKey: "s", Source: "aws configure export-credentials"}},
		{name: "no files, AWS CLI", env: noFiles, cli: true,
			want: aws.Credentials{AccessKeyID: "AKIDCLI-default", SecretAccessKey: "s", Source: "aws configure export-credentials"}},
		{name: "nothing at all", env: noFiles, wantErr: ErrNoAWSCredentials.Error()},
		{name: "web identity", env: with(noFiles, "AWS_WEB_IDENTITY_TOKEN_FILE", tokenFile, "AWS_ROLE_ARN", "arn:aws:iam::1:role/r", "AWS_ENDPOINT_URL_STS", srv.URL+"/sts"),
			want: aws.Credentials{AccessKeyID: "AKIDWEB", SecretAccessKey: "sweb", SessionToken: "tweb", Source: "web identity", CanExpire: true, Expires: expires}},
		{name: "container endpoint", env: with(noFiles, "AWS_CONTAINER_CREDENTIALS_FULL_URI", srv.URL+"/container", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "ctoken"),
			want: aws.Credentials{AccessKeyID: "AKIDCONT", SecretAccessKey: "scont", SessionToken: "tcont", Source: "container credentials", CanExpire: true, Expires: expires}},
		{name: "container endpoint refuses", env: with(noFiles, "AWS_CONTAINER_CREDENTIALS_FULL_URI", srv.URL+"/container"), wantErr: "container credentials: GET"},
		{name: "instance metadata", env: with(noFiles, "AWS_EC2_METADATA_DISABLED", "", "AWS_EC2_METADATA_SERVICE_ENDPOINT", srv.URL),
			want: aws.Credentials{AccessKeyID: "AKIDEC2", SecretAccessKey: "sec2", SessionToken: "tec2", Source: "instance metadata", CanExpire: true, Expires: expires}},
		{name: "profile keys win over the instance", env: with(files, "AWS_EC2_METADATA_DISABLED", "", "AWS_EC2_METADATA_SERVICE_ENDPOINT", srv.URL),
			want: aws.Credentials{AccessKeyID: "AKIDDEFAULT", SecretAccessKey: "secretdefault", Source: "profile default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &awsChain{getenv: func(k string) string { return tt.env[k] }, lookPath: func(string) (string, error) {
				if tt.cli {
					return cli, nil
				}
				return "", errors.New("not found")
			}}
			got, err := c.Retrieve(context.Background())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateApproxTime(0)); diff != "" {
				t.Errorf("credentials (-want +got):\n%s", diff)
			}
		})
	}
}

// A Bedrock exception in the event stream is an error event of the
// first-party API's shape, so the provider retries it like an overloaded
// stream, and reports its type and message when retries run out.
func TestBedrockStreamException(t *testing.T) {
	clearPlatformEnv(t)
	f := newFakeAPI(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
		w.WriteHeader(http.StatusOK)
		var buf bytes.Buffer
		err := eventstream.NewEncoder().Encode(&buf, eventstream.Message{
			Headers: eventstream.Headers{
				{Name: ":message-type", Value: eventstream.StringValue("exception")},
				{Name: ":exception-type", Value: eventstream.StringValue("throttlingException")},
			},
			Payload: []byte(`{"message":"Too many requests, please wait"}`),
		})
		if err != nil {
			t.Error(err)
		}
		w.Write(buf.Bytes())
	})
	p, s := testProvider(t, f, func(o *Options) {
		o.APIKey, o.Platform, o.SkipPlatformAuth, o.MaxRetries = "", PlatformBedrock, true, intp(1)
	})
	_, err := p.Stream(context.Background(), simpleRequest(), nil)
	var ae *model.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("err = %v, want an APIError", err)
	}
	if ae.Type != "throttlingException" || ae.Message != "Too many requests, please wait" {
		t.Errorf("type %q, message %q", ae.Type, ae.Message)
	}
	if n := len(f.requests()); n != 2 || len(s.delays) != 1 {
		t.Errorf("%d requests and %d retries, want 2 and 1", n, len(s.delays))
	}
}
