package anthropic

import (
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/httpretry"
)

// TestShared shows that Shared returns one provider per resolved
// configuration, the environment's part included, and new ones for
// options it cannot compare.
func TestShared(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-env")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "")
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1")
	t.Setenv(EnvStreamIdleTimeout, "")
	get := func(o *Options) *Provider {
		t.Helper()
		p, err := Shared(o)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	base := get(nil)
	if get(&Options{}) != base {
		t.Error("nil and empty options gave different providers")
	}
	if get(&Options{APIKey: "sk-env", BaseURL: "http://127.0.0.1:1"}) != base {
		t.Error("options spelling out the environment's values gave another provider")
	}
	for name, o := range map[string]*Options{
		"other key":     {APIKey: "sk-other"},
		"other retries": {MaxRetries: intp(1)},
		"other timeout": {RequestTimeout: time.Second},
		"sleep":         {Sleep: httpretry.Sleep},
		"headers":       {Headers: map[string]string{"X-A": "b"}},
	} {
		if get(o) == base {
			t.Errorf("%s: got the shared provider of other settings", name)
		}
	}
	if get(&Options{Sleep: httpretry.Sleep}) == get(&Options{Sleep: httpretry.Sleep}) {
		t.Error("options with functions were shared")
	}
	t.Setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:2")
	if p := get(nil); p == base || p.endpoint != "127.0.0.1:2" {
		t.Errorf("after the environment changed: provider for %s, the old one %v", p.endpoint, p == base)
	}
	t.Setenv(EnvStreamIdleTimeout, "5")
	if p := get(nil); p.timeouts.idle != 5*time.Millisecond {
		t.Errorf("idle timeout %v after %s=5, want 5ms", p.timeouts.idle, EnvStreamIdleTimeout)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	if _, err := Shared(nil); !errors.Is(err, ErrNoCredentials) {
		t.Errorf("without credentials: %v, want ErrNoCredentials", err)
	}
}
