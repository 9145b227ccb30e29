package conversation

import (
	"testing"

	"github.com/agentloop/agentloop/internal/sandbox"
	"github.com/agentloop/agentloop/settings"
	"github.com/google/go-cmp/cmp"
)

// TestSandboxCredentialsReadAllow: the credentials join a command's
// policy (files denied, variables unset), and no allowRead entry at or
// beneath a credentials path re-opens it, while the settings' own list
// is left unchanged.
func TestSandboxCredentialsReadAllow(t *testing.T) {
	allowRead := []string{"/home/u/.aws", "/home/u/.aws/credentials", "/home/u/.aws/credentials/x", "/home/u/.awsome", "/opt"}
	sb := &sandboxState{cfg: &settings.Sandbox{Credentials: settings.SandboxCredentials{
		Files:   []settings.CredentialFile{{Path: "/home/u/.aws/credentials", Mode: "deny"}, {Path: "/opt/token", Mode: "mask"}},
		EnvVars: []settings.CredentialEnvVar{{Name: "TOKEN", Mode: "mask"}},
	}}}
	p := &sandbox.Policy{ReadDeny: []string{"/secret"}, ReadAllow: allowRead}
	sb.applyCredentials(p)
	want := &sandbox.Policy{
		ReadDeny:  []string{"/secret", "/home/u/.aws/credentials", "/opt/token"},
		ReadAllow: []string{"/home/u/.aws", "/home/u/.awsome", "/opt"},
		UnsetEnv:  []string{"TOKEN"},
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("policy (-want +got):\n%s", diff)
	}
	if len(allowRead) != 5 || allowRead[1] != "/home/u/.aws/credentials" {
		t.Errorf("the settings' allowRead changed: %q", allowRead)
	}
}
