//go:build unix

package hooks

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/agentloop/agentloop/settings"
)

// alive reports whether pid is a live process (a zombie is not).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	// the state follows the parenthesised command name
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

func TestHangingHookIsKilledWithItsChildren(t *testing.T) {
	cwd := t.TempDir()
	rec := &recorder{}
	cfg := testConfig(cwd)
	cfg.Observer = rec.observe
	// The shell starts a child that would outlive it, then waits.
	cfg.Commands = commands(PreToolUse, 1, `sleep 60 & echo $! > child.pid; echo started; wait`)
	start := time.Now()
	res := mustNew(t, cfg).PreToolUse(context.Background(), bashCall())
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v; the hook was not killed at its timeout", took)
	}
	want := "PreToolUse:Bash hook error: [sleep 60 & echo $! > child.pid; echo started; wait]: did not respond within 1s"
	if res.Decision != Deny || res.Message != want {
		t.Errorf("decision %q message %q", res.Decision, res.Message)
	}
	if len(res.Errors) != 1 || !strings.Contains(res.Errors[0], "did not respond within 1s") {
		t.Errorf("errors %q", res.Errors)
	}
	rs := rec.responses()
	if len(rs) != 1 || rs[0].Outcome != Cancelled || rs[0].Stdout != "started\n" || rs[0].ExitCode != 128+int(syscall.SIGKILL) {
		t.Errorf("responses %+v", rs)
	}
	b, err := os.ReadFile(filepath.Join(cwd, "child.pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("the hook's child %d survived", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// slowAndFast configures a hook that times out after 0.2 s and another
// that answers in time.
func slowAndFast(ev Event, fast string) map[string][]settings.HookMatcher {
	m := commands(ev, 0.2, "sleep 10")
	m[string(ev)] = append(m[string(ev)], commands(ev, 30, fast)[string(ev)]...)
	return m
}

func TestTimeoutEffects(t *testing.T) {
	cwd := t.TempDir()
	ctx := context.Background()
	slow := `sleep 10`
	t.Run("explicit deny's reason wins over a timeout", func(t *testing.T) {
		cfg := testConfig(cwd)
		cfg.Commands = slowAndFast(PreToolUse,
			`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"policy"}}'`)
		res := mustNew(t, cfg).PreToolUse(ctx, bashCall())
		if res.Decision != Deny || res.Message != "PreToolUse:Bash hook error: policy" {
			t.Errorf("%+v", res)
		}
	})
	t.Run("a timeout beats allow", func(t *testing.T) {
		cfg := testConfig(cwd)
		cfg.Commands = slowAndFast(PreToolUse,
			`echo '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`)
		if res := mustNew(t, cfg).PreToolUse(ctx, bashCall()); res.Decision != Deny {
			t.Errorf("%+v", res)
		}
	})
	t.Run("UserPromptSubmit is blocked", func(t *testing.T) {
		cfg := testConfig(cwd)
		cfg.Commands = commands(UserPromptSubmit, 0.2, slow)
		res := mustNew(t, cfg).UserPromptSubmit(ctx, UserPromptSubmitInput{Prompt: "x"})
		if !res.Blocked || res.Reason != "[sleep 10]: did not respond within 0.2s" {
			t.Errorf("%+v", res)
		}
	})
	t.Run("PostToolUse keeps the result", func(t *testing.T) {
		cfg := testConfig(cwd)
		cfg.Commands = commands(PostToolUse, 0.2, slow)
		res := mustNew(t, cfg).PostToolUse(ctx, PostToolUseInput{ToolName: "Bash"})
		if res.Blocked || res.UpdatedToolOutput != nil || len(res.Errors) != 1 {
			t.Errorf("%+v", res)
		}
	})
	t.Run("Stop stops", func(t *testing.T) {
		cfg := testConfig(cwd)
		cfg.Commands = commands(Stop, 0.2, slow)
		res := mustNew(t, cfg).Stop(ctx, StopInput{})
		if res.Blocked || len(res.Errors) != 1 {
			t.Errorf("%+v", res)
		}
	})
}

// Default timeouts, in a bubble with a fake clock: a callback that never
// answers is abandoned after exactly the event's default.
func TestDefaultTimeouts(t *testing.T) {
	hang := func(ctx context.Context, _ Input, _ string) (Output, error) {
		<-ctx.Done()
		return Output{}, ctx.Err()
	}
	cases := []struct {
		ev   Event
		want time.Duration
		call func(*Dispatcher) string
	}{
		{PreToolUse, DefaultTimeout, func(d *Dispatcher) string {
			return d.PreToolUse(context.Background(), bashCall()).Message
		}},
		{UserPromptSubmit, UserPromptSubmitTimeout, func(d *Dispatcher) string {
			return d.UserPromptSubmit(context.Background(), UserPromptSubmitInput{}).Reason
		}},
		{SessionEnd, SessionEndBudget, func(d *Dispatcher) string {
			return strings.Join(d.SessionEnd(context.Background(), SessionEndInput{Reason: "other"}).Errors, "|")
		}},
	}
	for _, tc := range cases {
		t.Run(string(tc.ev), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg := testConfig("/nonexistent")
				timeout := time.Duration(0)
				if tc.ev == SessionEnd {
					timeout = time.Hour // the budget still applies
				}
				cfg.Callbacks = map[Event][]Matcher{tc.ev: {{Hooks: []Callback{hang}, Timeout: timeout}}}
				d := mustNew(t, cfg)
				start := time.Now()
				msg := tc.call(d)
				if took := time.Since(start); took != tc.want {
					t.Errorf("took %v, want %v", took, tc.want)
				}
				if msg == "" {
					t.Error("the timeout was not reported")
				}
			})
		})
	}
}

// Matching hooks run concurrently: each of these waits for the other to
// have started, and would time out if they ran one after the other.
func TestHooksRunInParallel(t *testing.T) {
	cwd := t.TempDir()
	wait := func(mine, other string) string {
		return `touch ` + mine + `; for i in $(seq 200); do [ -e ` + other + ` ] && exit 0; sleep 0.02; done; echo "never saw ` + other + `" >&2; exit 1`
	}
	var both sync.WaitGroup
	both.Add(2)
	rendezvous := func(ctx context.Context, _ Input, _ string) (Output, error) {
		both.Done()
		done := make(chan struct{})
		go func() { both.Wait(); close(done) }()
		select {
		case <-done:
			return Output{}, nil
		case <-ctx.Done():
			return Output{}, errors.New("the other callback never started")
		}
	}
	cfg := testConfig(cwd)
	cfg.Commands = commands(PostToolUse, 10, wait("a", "b"), wait("b", "a"))
	cfg.Callbacks = map[Event][]Matcher{PostToolUse: {{Hooks: []Callback{rendezvous, rendezvous}, Timeout: 5 * time.Second}}}
	res := mustNew(t, cfg).PostToolUse(context.Background(), PostToolUseInput{ToolName: "Bash"})
	if len(res.Errors) > 0 || res.Ran != 4 {
		t.Errorf("%+v", res)
	}
}

func TestParallelTiming(t *testing.T) {
	cfg := testConfig(t.TempDir())
	cfg.Commands = commands(Stop, 10, "sleep 0.2", "sleep 0.2; true")
	d := mustNew(t, cfg)
	// The best of three runs, so that a busy machine's slow process
	// starts do not count against the hooks.
	best := time.Hour
	for range 3 {
		start := time.Now()
		res := d.Stop(context.Background(), StopInput{})
		best = min(best, time.Since(start))
		if res.Ran != 2 || len(res.Errors) != 0 {
			t.Fatalf("%+v", res)
		}
		if best < 400*time.Millisecond {
			break
		}
	}
	if best >= 400*time.Millisecond {
		t.Errorf("two 200 ms hooks took %v", best)
	}
}

// BenchmarkTwoSlowHooks reports the time of one dispatch of two 200 ms
// command hooks: about 200 ms when they run in parallel.
func BenchmarkTwoSlowHooks(b *testing.B) {
	cfg := testConfig(b.TempDir())
	cfg.Commands = commands(Stop, 10, "sleep 0.2", "sleep 0.2; true")
	d, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		d.Stop(context.Background(), StopInput{})
	}
}
