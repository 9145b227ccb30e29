package conversation

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/agentloop/agentloop/internal/assemble"
	"github.com/agentloop/agentloop/model/anthropic"
	"github.com/agentloop/agentloop/pricing"
	"github.com/agentloop/agentloop/settings"
)

// The built-in provider's platform and credentials, and the session's
// prices (docs/providers.md).
//
// The provider is built from Options.API, the environment (the
// reference's variables: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL,
// ANTHROPIC_CUSTOM_HEADERS, CLAUDE_CODE_USE_BEDROCK, CLAUDE_CODE_USE_VERTEX,
// the proxy variables and the rest, read by package model/anthropic; the
// settings' env counts as environment, see settings_env.go) and the
// settings' apiKeyHelper. Prices come from the table, the
// modelPricing setting and Options.ModelPricing, the option winning.

// builtInProvider returns the Anthropic provider of a session without
// Options.Provider, and records where its credentials come from and which
// API it calls.
func (s *Session) builtInProvider(st *settings.Settings) (*anthropic.Provider, error) {
	o := s.opts.API.providerOptions()
	if o == nil {
		o = &anthropic.Options{}
	}
	if helper := s.settingString(st, "apiKeyHelper"); helper != "" {
		if src := st.ExtraSource["apiKeyHelper"]; settings.RepoShipped(src) {
			// A repository's file may not run a command for, or choose,
			// the credentials (as its env may not: settings_env.go).
			s.diag.Add(DiagSettings, fmt.Sprintf("settings key \"apiKeyHelper\" is ignored from %s settings: a file a repository can ship may not supply the API credentials", src))
		} else {
			o.APIKeyHelper = helper
		}
	}
	o.Getenv = s.getenv // the settings' env over the process's (settings_env.go)
	p, err := anthropic.Shared(o)
	if err != nil {
		return nil, fmt.Errorf("agentloop: %w", err)
	}
	if s.getenv != nil {
		s.apiKeySource = assemble.APIKeySource(false, s.getenv)
	}
	if p.UsesKeyHelper() {
		s.apiKeySource = "apiKeyHelper"
	}
	if p.Platform() != anthropic.PlatformAnthropic {
		s.apiKeySource = "none" // the cloud's own credentials
	}
	s.apiProvider = p.Platform()
	return p, nil
}

// customProviderSettings reports the provider settings that a session
// with Options.Provider does not honour.
func (s *Session) customProviderSettings(st *settings.Settings) {
	if _, ok := st.Extra["apiKeyHelper"]; ok {
		s.diag.Add(DiagSettings, "settings key \"apiKeyHelper\" is ignored: it gives the built-in provider its key, and Options.Provider is set")
	}
}

// settingString reads a string-valued settings key from the keys the
// settings package does not model; a value of another type is reported
// and ignored.
func (s *Session) settingString(st *settings.Settings, key string) string {
	raw, ok := st.Extra[key]
	if !ok {
		return ""
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		s.diag.Add(DiagSettings, fmt.Sprintf("settings key %q must be a string, not %s; ignored", key, raw))
		return ""
	}
	return v
}

// sessionPrices returns the session's price overrides: the modelPricing
// setting with Options.ModelPricing over it. A malformed setting is
// reported and ignored as a whole.
func (s *Session) sessionPrices(st *settings.Settings) pricing.Overrides {
	var out pricing.Overrides
	if raw, ok := st.Extra["modelPricing"]; ok {
		o, err := pricing.ParseOverrides(raw)
		if err != nil {
			s.diag.Add(DiagSettings, "settings key \"modelPricing\" is ignored: "+err.Error())
		} else {
			out = o
		}
	}
	if len(s.opts.ModelPricing) > 0 {
		if out == nil {
			out = pricing.Overrides{}
		}
		for k, r := range s.opts.ModelPricing {
			// The option's entry replaces the setting's for the same
			// model, however either names it (opus, claude-opus-5-5).
			for k2 := range out {
				if pricing.Resolve(k2) == pricing.Resolve(k) {
					delete(out, k2)
				}
			}
			out[k] = r
		}
	}
	return out
}

// unknownPrice reports a model without a price, once per model and
// session (the engine calls it once).
func (s *Session) unknownPrice(modelID string) {
	s.diag.Add(DiagPricing, "model "+strconv.Quote(modelID)+
		" has no price: its usage is counted at $0 (costUnknown in modelUsage); set Options.ModelPricing or the modelPricing setting to price it")
}
