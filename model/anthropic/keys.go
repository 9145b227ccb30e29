package anthropic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/internal/procguard"
	"github.com/agentloop/agentloop/internal/toolenv"
)

// EnvAPIKeyHelperTTL is the environment variable that sets how long a key
// from an API key helper is used before the helper runs again, in whole
// milliseconds.
const EnvAPIKeyHelperTTL = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS"

// DefaultAPIKeyTTL is how long a key from an API key helper is used when
// neither Options.APIKeyTTL nor [EnvAPIKeyHelperTTL] is set: five minutes,
// as in the reference CLI.
const DefaultAPIKeyTTL = 5 * time.Minute

// APIKeyHelperTimeout bounds one run of an API key helper command.
const APIKeyHelperTimeout = 2 * time.Minute

// APIKeyHelperError is the failure of an API key source (the apiKeyHelper
// command or Options.APIKeyFunc). It is not retried; [Provider.Stream]
// returns it, wrapped, at once.
type APIKeyHelperError struct {
	// Command is the helper's shell command; empty for an
	// Options.APIKeyFunc.
	Command string
	Err     error
}

func (e *APIKeyHelperError) Error() string {
	if e.Command == "" {
		return fmt.Sprintf("API key function failed: %v", e.Err)
	}
	return fmt.Sprintf("apiKeyHelper %q failed: %v", e.Command, e.Err)
}

func (e *APIKeyHelperError) Unwrap() error { return e.Err }

// HelperCommand returns a key source that runs command with /bin/sh -c (the
// apiKeyHelper setting) and takes its standard output, trimmed of white
// space, as the key. A run that exits non-zero, prints nothing or takes
// longer than [APIKeyHelperTimeout] fails with an error that says so and
// carries the end of its standard error. The command runs without
// agentloop's credential variables in its environment.
func HelperCommand(command string) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		ctx, cancel := context.WithTimeout(ctx, APIKeyHelperTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
		// The helper makes a key; it gets none of the ones agentloop
		// holds, which its environment would show to other processes.
		cmd.Env = toolenv.Build(toolenv.Config{Base: os.Environ()})
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.WaitDelay = time.Second
		err := procguard.Start(cmd)
		if err == nil {
			err = cmd.Wait()
		}
		if err != nil {
			if msg := lastLine(stderr.String()); msg != "" {
				err = fmt.Errorf("%w: %s", err, msg)
			}
			if ctx.Err() == context.DeadlineExceeded {
				err = fmt.Errorf("timed out after %s: %w", APIKeyHelperTimeout, err)
			}
			return "", err
		}
		key := strings.TrimSpace(stdout.String())
		if key == "" {
			return "", errors.New("it printed no key")
		}
		return key, nil
	}
}

// lastLine returns the last non-empty line of s, at most 500 bytes of it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	l := strings.TrimSpace(lines[len(lines)-1])
	if len(l) > 500 {
		l = l[:500] + "…"
	}
	return l
}

// keySource caches the key of an API key helper: the helper runs for the
// first request, again once the key is older than ttl, and again after the
// API refused the key (a 401). Concurrent requests wait for one run.
type keySource struct {
	fn      func(context.Context) (string, error)
	command string // for errors; "" for an APIKeyFunc
	ttl     time.Duration
	now     func() time.Time

	mu      sync.Mutex
	key     string
	fetched time.Time
}

// get returns the key to send, running the helper when there is no fresh
// key.
func (k *keySource) get(ctx context.Context) (string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key != "" && (k.ttl < 0 || k.now().Sub(k.fetched) < k.ttl) {
		return k.key, nil
	}
	key, err := k.fn(ctx)
	if err == nil && strings.TrimSpace(key) == "" {
		err = errors.New("it returned no key")
	}
	if err != nil {
		return "", &APIKeyHelperError{Command: k.command, Err: err}
	}
	k.key, k.fetched = strings.TrimSpace(key), k.now()
	return k.key, nil
}

// refused forgets key after the API refused it, so that the next request
// runs the helper again. A key that was already replaced (by a concurrent
// request's refresh) is left alone.
func (k *keySource) refused(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.key == key {
		k.key = ""
	}
}

// resolveKeyTTL returns the helper's key lifetime: v when set (negative:
// forever), else EnvAPIKeyHelperTTL, else DefaultAPIKeyTTL.
func resolveKeyTTL(getenv func(string) string, v time.Duration) (time.Duration, error) {
	if v != 0 {
		return v, nil
	}
	s := strings.TrimSpace(getenv(EnvAPIKeyHelperTTL))
	if s == "" {
		return DefaultAPIKeyTTL, nil
	}
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms < 0 {
		return 0, fmt.Errorf("anthropic: %s=%q: want a whole number of milliseconds ≥ 0", EnvAPIKeyHelperTTL, s)
	}
	if ms == 0 {
		return time.Nanosecond, nil // every request runs the helper
	}
	return time.Duration(ms) * time.Millisecond, nil
}
