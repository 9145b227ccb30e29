//go:build unix

package anthropic

import (
	"context"
	"testing"
)

// TestHelperCommandWithoutCredentials: the apiKeyHelper does not see the
// credentials agentloop holds (its environment is readable by other
// processes of the user while it runs); other variables reach it.
func TestHelperCommandWithoutCredentials(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-held")
	t.Setenv("ANTHROPIC_AUTH_TOKEN", "tok-held")
	t.Setenv("HELPER_TEST_OTHER", "kept")
	key, err := HelperCommand(`printf 'k-%s-%s-%s' "${ANTHROPIC_API_KEY:-none}" "${ANTHROPIC_AUTH_TOKEN:-none}" "$HELPER_TEST_OTHER"`)(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := "k-none-none-kept"; key != want {
		t.Errorf("helper printed %q, want %q", key, want)
	}
}
