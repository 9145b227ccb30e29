package anthropic

// The AWS credentials of a Bedrock provider without Options.AWSCredentials:
// a small chain in place of aws-sdk-go-v2/config, which links the STS, SSO
// and Sign-In clients (and their start-up cost) into every program.
//
//  1. AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN);
//  2. the profile (AWS_PROFILE, else AWS_DEFAULT_PROFILE, else "default")
//     of the shared credentials and config files (AWS_SHARED_CREDENTIALS_FILE,
//     AWS_CONFIG_FILE, else ~/.aws/credentials and ~/.aws/config): its
//     aws_access_key_id and aws_secret_access_key, else its
//     credential_process;
//  3. a profile that names another source (SSO, an assumed role, …)
//     through the AWS CLI v2, which implements them all:
//     `aws configure export-credentials --format process`;
//  4. web identity (AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN), the
//     container endpoint (AWS_CONTAINER_CREDENTIALS_*_URI) and the EC2
//     instance metadata service, over HTTP (awsremote.go);
//  5. the AWS CLI, if it is installed, for whatever is left.
//
// Credentials with an expiry are fetched again five minutes before it.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// ErrNoAWSCredentials is the failure of the default chain to find any AWS
// credentials (wrapped in a [*PlatformAuthError] when a request needs them).
var ErrNoAWSCredentials = errors.New("no AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK, a profile with keys or credential_process, or install the AWS CLI v2 (for SSO and assumed roles)")

// awsChain is the default credentials chain, reading the environment
// through getenv. It is wrapped in an [aws.CredentialsCache].
type awsChain struct {
	getenv   func(string) string
	lookPath func(string) (string, error)
	http     *http.Client // nil: awsHTTP
}

func newAWSChain(getenv func(string) string) aws.CredentialsProvider {
	return aws.NewCredentialsCache(&awsChain{getenv: getenv, lookPath: exec.LookPath}, func(o *aws.CredentialsCacheOptions) {
		o.ExpiryWindow = 5 * time.Minute
	})
}

// Retrieve implements [aws.CredentialsProvider].
func (c *awsChain) Retrieve(ctx context.Context) (aws.Credentials, error) {
	id := firstEnv(c.getenv, "AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY")
	secret := firstEnv(c.getenv, "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY")
	if id != "" && secret != "" {
		return aws.Credentials{AccessKeyID: id, SecretAccessKey: secret, SessionToken: c.getenv("AWS_SESSION_TOKEN"), Source: "environment"}, nil
	}
	name := cmpOrEnv(c.getenv, "default", "AWS_PROFILE", "AWS_DEFAULT_PROFILE")
	prof, err := c.profile(name)
	if err != nil {
		return aws.Credentials{}, err
	}
	switch {
	case prof["aws_access_key_id"] != "" && prof["aws_secret_access_key"] != "":
		return aws.Credentials{AccessKeyID: prof["aws_access_key_id"], SecretAccessKey: prof["aws_secret_access_key"],
			SessionToken: prof["aws_session_token"], Source: "profile " + name}, nil
	case prof["credential_process"] != "":
		return runCredentialProcess(ctx, shellCommand(ctx, prof["credential_process"]), "credential_process of profile "+name)
	}
	cli, cliErr := c.lookPath("aws")
	if cliErr == nil && profileNamesSource(prof) {
		// SSO, an assumed role, …: the AWS CLI knows how.
		return exportCredentials(ctx, cli, name)
	}
	for _, source := range []func(context.Context) (aws.Credentials, error){c.webIdentity, c.container, c.instance} {
		creds, err := source(ctx)
		if !errors.Is(err, errNoSource) {
			if err == nil || cliErr != nil {
				return creds, err
			}
			break // the AWS CLI may do better
		}
	}
	if cliErr != nil {
		return aws.Credentials{}, ErrNoAWSCredentials
	}
	return exportCredentials(ctx, cli, name)
}

// profileNamesSource reports whether a profile names a source of
// credentials this chain does not implement itself.
func profileNamesSource(prof map[string]string) bool {
	for _, k := range []string{"role_arn", "sso_session", "sso_start_url", "web_identity_token_file", "credential_source", "login_session"} {
		if prof[k] != "" {
			return true
		}
	}
	return false
}

// exportCredentials asks the AWS CLI v2 for the profile's credentials.
func exportCredentials(ctx context.Context, cli, profile string) (aws.Credentials, error) {
	cmd := exec.CommandContext(ctx, cli, "configure", "export-credentials", "--format", "process", "--profile", profile)
	return runCredentialProcess(ctx, cmd, "aws configure export-credentials")
}

// cmpOrEnv returns the first of the variables that is set, else def.
func cmpOrEnv(getenv func(string) string, def string, names ...string) string {
	if v := firstEnv(getenv, names...); v != "" {
		return v
	}
	return def
}

// profile returns the settings of the named profile, those of the
// credentials file winning over the config file's.
func (c *awsChain) profile(name string) (map[string]string, error) {
	home, _ := os.UserHomeDir() // no home: only the variables can name the files
	credFile := cmpOrEnv(c.getenv, filepath.Join(home, ".aws", "credentials"), "AWS_SHARED_CREDENTIALS_FILE")
	confFile := cmpOrEnv(c.getenv, filepath.Join(home, ".aws", "config"), "AWS_CONFIG_FILE")
	section := "profile " + name
	if name == "default" {
		section = "default"
	}
	out := map[string]string{}
	for _, f := range []struct{ path, section string }{{confFile, section}, {credFile, name}} {
		data, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading the AWS shared file: %w", err)
		}
		for k, v := range iniSection(data, f.section) {
			out[k] = v
		}
	}
	return out, nil
}

// iniSection returns the keys of the named section of an AWS shared file
// (names lower-cased; indented sub-keys are skipped).
func iniSection(data []byte, name string) map[string]string {
	out := map[string]string{}
	in := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		raw := sc.Text()
		line := strings.TrimSpace(raw)
		switch {
		case line == "" || line[0] == '#' || line[0] == ';':
		case line[0] == '[':
			sec := strings.TrimSpace(strings.Trim(line, "[]"))
			in = strings.Join(strings.Fields(sec), " ") == name
		case in && raw[0] != ' ' && raw[0] != '\t':
			if k, v, ok := strings.Cut(line, "="); ok {
				out[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
			}
		}
	}
	return out
}

// shellCommand runs line through the system's shell, as the AWS tools run
// credential_process.
func shellCommand(ctx context.Context, line string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		return exec.CommandContext(ctx, "cmd.exe", "/C", line)
	}
	return exec.CommandContext(ctx, "/bin/sh", "-c", line)
}

// runCredentialProcess runs cmd and reads its output in the
// credential_process format.
func runCredentialProcess(_ context.Context, cmd *exec.Cmd, what string) (aws.Credentials, error) {
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 500 {
			msg = msg[:500] + "…"
		}
		return aws.Credentials{}, fmt.Errorf("%s: %w: %s", what, err, msg)
	}
	var p struct {
		Version         int
		AccessKeyID     string `json:"AccessKeyId"`
		SecretAccessKey string
		SessionToken    string
		Expiration      *time.Time
	}
	if err := json.Unmarshal(out, &p); err != nil {
		return aws.Credentials{}, fmt.Errorf("%s: reading its output: %w", what, err)
	}
	if p.Version != 1 || p.AccessKeyID == "" || p.SecretAccessKey == "" {
		return aws.Credentials{}, fmt.Errorf("%s: its output has no Version 1, AccessKeyId and SecretAccessKey", what)
	}
	c := aws.Credentials{AccessKeyID: p.AccessKeyID, SecretAccessKey: p.SecretAccessKey, SessionToken: p.SessionToken, Source: what}
	if p.Expiration != nil {
		c.CanExpire, c.Expires = true, *p.Expiration
	}
	return c, nil
}
