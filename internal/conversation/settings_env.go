package conversation

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentloop/agentloop/settings"
)

// The settings' env and agentloop's own model client.
//
// As in the reference CLI, the env object of the settings configures
// agentloop itself, not only the processes it starts: every variable the
// built-in provider reads (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY,
// ANTHROPIC_AUTH_TOKEN, ANTHROPIC_CUSTOM_HEADERS, the proxy variables,
// API_TIMEOUT_MS and the other timeouts, CLAUDE_CODE_MAX_RETRIES, the
// Bedrock and Vertex switches and regions) and ANTHROPIC_MODEL are looked
// up in the settings' env first, then in the process environment. The
// lookup is a function passed down (anthropic.Options.Getenv); the process
// environment is never modified.
//
// A repository can ship .claude/settings.json and
// .claude/settings.local.json, so those two files may not point the
// client elsewhere or hand it credentials: their values of the variables
// clientEnvGuarded names are left out of the client's lookup (a
// lower-precedence file's value, or the process's, stands) and reported
// as a DiagSettings diagnostic. The managed policy, the user file and
// --settings may set them. (The session's tools still get the merged
// env, as before.)

// clientEnvGuarded reports whether a variable can redirect the model API,
// its transport or its credentials, and so is not taken from a settings
// file a repository can ship. The name is compared case-insensitively.
func clientEnvGuarded(key string) bool {
	k := strings.ToUpper(strings.TrimSpace(key))
	switch k {
	case "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_CUSTOM_HEADERS",
		"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "REQUEST_METHOD",
		"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY",
		"CLAUDE_CODE_SKIP_BEDROCK_AUTH", "CLAUDE_CODE_SKIP_VERTEX_AUTH", "CLAUDE_CODE_SKIP_FOUNDRY_AUTH",
		"CLAUDE_CODE_API_KEY_HELPER_TTL_MS", "CLAUDE_CODE_OAUTH_TOKEN", "CLAUDE_CODE_CLIENT_CERT",
		"CLAUDE_CODE_CLIENT_KEY", "CLAUDE_CODE_CLIENT_KEY_PASSPHRASE",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS":
		return true
	}
	for _, suffix := range []string{"_BASE_URL", "_API_KEY", "_AUTH_TOKEN", "_KEY_HELPER"} {
		if strings.HasSuffix(k, suffix) {
			return true
		}
	}
	for _, prefix := range []string{"AWS_", "GOOGLE_", "CLOUD_ML_", "GCLOUD_", "ANTHROPIC_VERTEX_", "ANTHROPIC_BEDROCK_",
		"ANTHROPIC_FOUNDRY_", "AZURE_"} {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// clientEnv returns the environment lookup of the session's model client
// and model choice: the settings' env (less the guarded variables of the
// files a repository can ship, each reported) over the process
// environment.
func (s *Session) clientEnv(st *settings.Settings) func(string) string {
	env, ignored := st.TrustedEnv(func(src settings.Source, key string) bool {
		return settings.RepoShipped(src) && clientEnvGuarded(key)
	})
	for _, ig := range ignored {
		s.diag.Add(DiagSettings, fmt.Sprintf(
			"%s: env %s is not applied to agentloop's model client: a settings file a repository can ship (%s) may not redirect the model API, its proxy or its credentials; set it in the user or managed settings, --settings or the environment",
			ig.File, ig.Key, ig.Source))
	}
	getenv := os.Getenv
	if len(env) > 0 {
		getenv = func(key string) string {
			if v, ok := env[key]; ok {
				return v
			}
			return os.Getenv(key)
		}
	}
	for _, k := range unmappedModelEnv {
		if getenv(k) != "" {
			s.diag.Add(DiagSettings, fmt.Sprintf("%s is set but not honoured by agentloop: model aliases (opus, sonnet, haiku) and the helper model resolve to agentloop's own table; set Options.Model or ANTHROPIC_MODEL", k))
		}
	}
	return getenv
}

// unmappedModelEnv are the reference's variables that remap model
// aliases or the small helper model, which agentloop does not read; a
// session reports each one set rather than ignore it silently.
var unmappedModelEnv = []string{
	"ANTHROPIC_SMALL_FAST_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL", "ANTHROPIC_DEFAULT_SONNET_MODEL",
	"ANTHROPIC_DEFAULT_HAIKU_MODEL", "CLAUDE_CODE_SUBAGENT_MODEL",
}

// EnvModel names the variable that picks the model when Options.Model is
// empty; it wins over the settings' model key, as in the reference
// (Options.Model > ANTHROPIC_MODEL > settings model > the default). The
// settings' env may set it, any file included: a model name redirects
// nothing.
const EnvModel = "ANTHROPIC_MODEL"

// modelChoice is the model asked for before the settings' model key:
// Options.Model, else ANTHROPIC_MODEL from the client's environment.
func (s *Session) modelChoice(option string) string {
	if option != "" || s.getenv == nil {
		return option
	}
	return strings.TrimSpace(s.getenv(EnvModel))
}

// clientGetenv reads a variable of the model client's environment (the
// process's before the settings are read).
func (s *Session) clientGetenv(key string) string {
	if s.getenv == nil {
		return os.Getenv(key)
	}
	return s.getenv(key)
}
