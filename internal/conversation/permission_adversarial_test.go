package conversation_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/internal/conversation"
)

// TestAdversarialThroughTheLoop runs every end-to-end attack case through
// the real loop as a user would run it (the Bash sandbox as configured) and
// checks that its side effect does not happen: no file created, changed or
// removed, no secret in the stream or sent to the model, no connection to
// the sink. A call the case expects to be refused must also get an error
// result.
func TestAdversarialThroughTheLoop(t *testing.T) {
	n := forEachCase(t, func(t *testing.T, c *securityCase) { checkNoBypass(t, c, runSecurityCase(t, c)) })
	if n < 300 {
		t.Errorf("only %d end-to-end cases ran, want at least 300", n)
	}
}

// TestSecurityCheckerAlone is TestAdversarialThroughTheLoop with the Bash
// sandbox off, so that the permission checker alone must stop every case:
// a case that fails here and passes above is one the sandbox catches and
// the checker misses.
func TestSecurityCheckerAlone(t *testing.T) {
	t.Cleanup(conversation.SetSandboxDisabledForTest(true))
	forEachCase(t, func(t *testing.T, c *securityCase) { checkNoBypass(t, c, runSecurityCase(t, c)) })
}

func checkNoBypass(t *testing.T, c *securityCase, o outcome) {
	t.Helper()
	if len(o.effects) > 0 {
		t.Fatalf("BYPASS %s: %s %v: %s; the tool said: %.300q", c.id(), c.Tool, c.Input, strings.Join(o.effects, "; "), o.result)
	}
	if o.runErr != nil && strings.Contains(o.runErr.Error(), "timed out") {
		t.Fatalf("%s: %v", c.id(), o.runErr)
	}
	if o.ran && !o.isError && c.Want != "allow" {
		t.Errorf("%s: the call was not refused (want %s): %.300q", c.id(), c.Want, o.result)
	}
}

// TestSecurityMutation proves that the end-to-end cases can fail: with
// every call authorised and the sandbox off, each case must produce its
// side effect. A case that does not is reported as "cannot fail": its
// command is broken, its path wrong, or its tool fails for another reason,
// and the normal tests would pass it whatever the checker did.
//
// It does not run in parallel with other tests: the seam is process-wide.
func TestSecurityMutation(t *testing.T) {
	t.Cleanup(conversation.SetForceAllowForTest(true))
	t.Cleanup(conversation.SetSandboxDisabledForTest(true))
	forEachCase(t, func(t *testing.T, c *securityCase) {
		run := runSecurityCase
		if c.Defense == "bash-env" {
			run = runDirect
		}
		o := run(t, c)
		if len(o.effects) == 0 {
			detail := o.result
			if !o.ran {
				detail = "(the call never reached its tool) " + o.result
				if o.runErr != nil {
					detail += " " + o.runErr.Error()
				}
			}
			t.Errorf("cannot fail: %s: with every call allowed and no sandbox, %s %v had no side effect; the tool said: %.400q",
				c.id(), c.Tool, c.Input, detail)
		}
	})
}

// TestSecurityClassCoverage checks the case files themselves: every case of
// testdata/security is end to end and names its class of issue 8, and
// every class this harness covers has at least three cases.
func TestSecurityClassCoverage(t *testing.T) {
	classes := []int{1, 2, 3, 4, 5, 6, 7, 8, 10}
	count := map[int]int{}
	for _, c := range loadSecurityCases(t) {
		if !strings.HasPrefix(c.file, "testdata/security/") {
			continue
		}
		if !c.endToEnd() {
			t.Errorf("%s has no side effect the harness can observe", c.id())
		}
		if !slices.Contains(classes, c.Class) {
			t.Errorf("%s: class %d is not one of %v", c.id(), c.Class, classes)
		}
		switch c.Want {
		case "deny", "ask", "allow":
		default:
			t.Errorf("%s: want %q, not deny, ask or allow", c.id(), c.Want)
		}
		count[c.Class]++
	}
	for _, k := range classes {
		if count[k] < 3 {
			t.Errorf("class %d has %d end-to-end cases, want at least 3", k, count[k])
		}
	}
}
