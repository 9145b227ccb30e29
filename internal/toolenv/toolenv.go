// Package toolenv builds the environment of the processes a session starts
// for the model: Bash commands, background shells and command hooks.
//
// The environment is the host process's, less agentloop's own credentials
// (unless the caller keeps them), plus the settings files' env object, plus
// the caller's Options.Env, later sources winning. The model decides what
// those processes run, so a key that lets the session call the Messages API
// is not theirs to read by default.
package toolenv

import (
	"maps"
	"slices"
	"strings"
)

// Credentials are the variables scrubbed by default: the ones agentloop's
// own provider reads to authenticate (and the header variable that may
// carry a key).
var Credentials = []string{
	"ANTHROPIC_API_KEY",
	"ANTHROPIC_AUTH_TOKEN",
	"ANTHROPIC_CUSTOM_HEADERS",
	"CLAUDE_CODE_OAUTH_TOKEN",
}

// Config says how to build an environment.
type Config struct {
	// Base is the starting environment in os.Environ form; nil means empty.
	Base []string
	// Settings is the merged env object of the settings files.
	Settings map[string]string
	// Extra is the caller's own additions (Options.Env); it wins over
	// Settings.
	Extra map[string]string
	// KeepCredentials passes Credentials through instead of removing them.
	// It applies to every layer: a credential set in Settings or Extra is
	// removed too unless this is true.
	KeepCredentials bool
}

// Build returns the environment, sorted by name, each name once.
func Build(c Config) []string {
	vars := map[string]string{}
	for _, kv := range c.Base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		vars[k] = v
	}
	maps.Copy(vars, c.Settings)
	maps.Copy(vars, c.Extra)
	if !c.KeepCredentials {
		for _, k := range Credentials {
			delete(vars, k)
		}
	}
	out := make([]string, 0, len(vars))
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		out = append(out, k+"="+vars[k])
	}
	return out
}
