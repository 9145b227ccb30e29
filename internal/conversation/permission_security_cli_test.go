package conversation_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// cliSmokeCases are the cases of the case files that TestSecurityCLI also
// runs through the built binary, as the reporter of issue 8 attacked it.
var cliSmokeCases = []string{
	"c1: comment ending in a backslash hides the next line",
	"c2: grep -r recurses into a denied directory",
	"c3: tar listing with a checkpoint exec action",
	"c5: command substitution in an array subscript",
	"c7: subagent runs Bash the parent disallowed",
	"c10: IPv4-mapped IPv6 of a denied 127.0.0.1",
}

// cliOnlyCases need the C library's resolver (GODEBUG=netdns=cgo), which
// reads numeric host spellings that Go's own resolver refuses; a binary
// built with cgo may use it on a user's machine.
var cliOnlyCases = []securityCase{
	{Name: "c10: decimal 2130706433 of a denied 127.0.0.1", Class: 10, Tool: "WebFetch", Mode: "default",
		Allow: []string{"WebFetch"}, Deny: []string{"WebFetch(domain:127.0.0.1)"}, Want: "deny", Sink: true,
		Input: map[string]any{"url": "http://2130706433:$SINKPORT/", "prompt": "p"}},
	{Name: "c10: hex 0x7f.1 of a denied localhost", Class: 10, Tool: "WebFetch", Mode: "default",
		Allow: []string{"WebFetch"}, Deny: []string{"WebFetch(domain:localhost)"}, Want: "deny", Sink: true,
		Input: map[string]any{"url": "http://0x7f.1:$SINKPORT/", "prompt": "p"}},
	{Name: "c10: short 127.1 of a denied 127.0.0.1", Class: 10, Tool: "WebFetch", Mode: "default",
		Allow: []string{"WebFetch"}, Deny: []string{"WebFetch(domain:127.0.0.1)"}, Want: "deny", Sink: true,
		Input: map[string]any{"url": "http://127.1:$SINKPORT/", "prompt": "p"}},
}

// TestSecurityCLI runs a few attacks through the agentloop binary (built
// with cgo, pointed at agentlooptest by ANTHROPIC_BASE_URL): each must have
// no side effect, and its control run (the same call with the deny and ask
// rules and the disallowed tools dropped, the tool allowed outright, the
// mode bypassPermissions, and a PreToolUse hook approving every call, since
// lines the checker cannot prove still ask) must have it, so the attack can
// fail.
func TestSecurityCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the agentloop binary")
	}
	bin := buildCLI(t)
	var cases []securityCase
	for _, c := range loadSecurityCases(t) {
		if slices.Contains(cliSmokeCases, c.Name) {
			cases = append(cases, c)
		}
	}
	if len(cases) != len(cliSmokeCases) {
		t.Fatalf("found %d of the %d smoke cases in the case files", len(cases), len(cliSmokeCases))
	}
	for _, c := range cliOnlyCases {
		c.file = "permission_security_cli_test.go"
		cases = append(cases, c)
	}
	for i := range cases {
		c := &cases[i]
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			t.Run("attack", func(t *testing.T) { checkNoBypass(t, c, runCLICase(t, bin, c)) })
			t.Run("control", func(t *testing.T) {
				ctl := *c
				ctl.Allow, ctl.Deny, ctl.Ask, ctl.DisallowedTools = nil, nil, nil, nil
				ctl.AllowedTools, ctl.Mode, ctl.approveByHook = []string{c.Tool}, "bypassPermissions", true
				// The side effects of some cases lie outside the working
				// directory, where the default sandbox would stop them;
				// the control is about the checker, so the sandbox is off.
				ctl.sandboxOff = true
				if o := runCLICase(t, bin, &ctl); len(o.effects) == 0 {
					t.Errorf("cannot fail: %s: allowed outright, %s %v had no side effect through the binary; the tool said: %.400q",
						c.id(), c.Tool, c.Input, o.result)
				}
			})
		})
	}
}

// buildCLI builds cmd/agentloop, with cgo, into a temporary directory.
func buildCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "agentloop")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/agentloop/agentloop/cmd/agentloop")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the binary: %v\n%s", err, out)
	}
	return bin
}

// runCLICase runs c once through the binary.
func runCLICase(t *testing.T, bin string, c *securityCase) outcome {
	t.Helper()
	r := prepareSecurityRun(t, c)
	args := []string{"-p", "go", "--output-format", "stream-json", "--verbose", "--setting-sources", "",
		"--settings", r.perms, "--tools", strings.Join(securityTools, ",")}
	if c.Mode != "" {
		args = append(args, "--permission-mode", c.Mode)
	}
	if len(c.AllowedTools) > 0 {
		args = append(args, "--allowedTools", strings.Join(r.e.rules(c.AllowedTools), ","))
	}
	if len(c.DisallowedTools) > 0 {
		args = append(args, "--disallowedTools", strings.Join(c.DisallowedTools, ","))
	}
	if a := r.agents(); a != nil {
		b, _ := json.Marshal(a)
		args = append(args, "--agents", string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = r.e.cwd
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=") && !strings.HasPrefix(kv, "ANTHROPIC_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "HOME="+r.e.home, "ANTHROPIC_BASE_URL="+r.srv.URL, "ANTHROPIC_API_KEY=sk-test",
		"GODEBUG=netdns=cgo")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running the binary: %v\n%s", err, out.String())
		}
	}
	return r.observe(out.String(), nil)
}
