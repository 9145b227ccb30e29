package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// `agentloop serve --temporal` hands over to agentloop-temporal; the flag
// is found in each spelling, and not after "--".
func TestWantsTemporal(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--root", "r", "--temporal", "h:1"}, true},
		{[]string{"--temporal=h:1"}, true},
		{[]string{"-temporal", "h:1"}, true},
		{[]string{"--root", "r"}, false},
		{[]string{"--root", "temporal"}, false},
		{[]string{"--temporal-namespace", "n"}, false},
		{[]string{"--", "--temporal"}, false},
	} {
		if got := wantsTemporal(c.args); got != c.want {
			t.Errorf("wantsTemporal(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}

// Without agentloop-temporal, --temporal fails saying what to install.
func TestServeTemporalMissingBinary(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr bytes.Buffer
	code := runServe(context.Background(), []string{"--temporal", "127.0.0.1:7233", "--root", t.TempDir()}, &stdout, &stderr)
	if code != exitFailure || !strings.Contains(stderr.String(), "agentloop-temporal") || !strings.Contains(stderr.String(), "go install") {
		t.Errorf("code %d, stderr %q; want a failure naming agentloop-temporal and how to install it", code, stderr.String())
	}
}
