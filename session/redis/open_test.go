package redis

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/testdb"
)

func testURL() string {
	return "redis://" + testdb.RedisAddr()
}

// openStore returns a Store made by Open on the test server with the
// given prefix, closed when the test ends.
func openStore(t *testing.T, prefix string, ttl time.Duration) *Store {
	t.Helper()
	s, err := Open(context.Background(), testURL(), &Options{Prefix: prefix, TTL: ttl})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

func TestOpenErrors(t *testing.T) {
	newClient(t) // skips without a server
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, url := range []string{"http://127.0.0.1:6379", "redis://127.0.0.1:1", "redis://127.0.0.1:6379/x"} {
		if s, err := Open(ctx, url, nil); err == nil || !strings.Contains(err.Error(), "redis: open") {
			t.Errorf("Open(%s) = %v, %v; want an error", url, s, err)
		}
	}
	// A go-redis option is refused by name, not dropped.
	if _, err := Open(ctx, "redis://127.0.0.1:6379/0?dial_timeout=5s&pool_size=3", nil); err == nil ||
		!strings.Contains(err.Error(), "dial_timeout, pool_size") {
		t.Errorf("Open with go-redis options: %v, want an error naming them", err)
	}
}

func TestNewWithNilBackend(t *testing.T) {
	if s, err := NewWithBackend(nil, nil); err == nil || !strings.Contains(err.Error(), "nil Backend") {
		t.Errorf("NewWithBackend(nil) = %v, %v; want an error", s, err)
	}
}
