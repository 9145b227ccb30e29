package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/serve/servecmd"
)

// temporalBinary is the program `agentloop serve --temporal` hands over
// to: the same command with the Temporal backend, built from the
// repository's temporal module so that this binary does not link
// Temporal's SDK.
const temporalBinary = "agentloop-temporal"

// runServe runs `agentloop serve` until ctx ends (a signal), then drains.
// With --temporal it runs agentloop-temporal serve with the same
// arguments instead.
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if wantsTemporal(args) {
		return runTemporalServe(ctx, args, stdout, stderr)
	}
	return servecmd.Run(ctx, args, stdout, stderr, nil)
}

// wantsTemporal says whether args name --temporal (before a "--").
func wantsTemporal(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "temporal" {
			return true
		}
	}
	return false
}

// runTemporalServe runs agentloop-temporal serve with args, found next to
// this executable or on PATH, passing the signal that ends ctx on.
func runTemporalServe(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bin := ""
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), temporalBinary); isExecutable(p) {
			bin = p
		}
	}
	if bin == "" {
		p, err := exec.LookPath(temporalBinary)
		if err != nil {
			fmt.Fprintf(stderr, "agentloop serve: --temporal runs sessions on Temporal, which this binary does not include; "+
				"install %s next to it or on PATH (go install github.com/agentloop/agentloop/temporal/cmd/%s@latest, "+
				"or go build ./cmd/%s in the repository's temporal directory)\n", temporalBinary, temporalBinary, temporalBinary)
			return exitFailure
		}
		bin = p
	}
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "agentloop serve: starting %s: %v\n", bin, err)
		return exitFailure
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// The child drains on SIGTERM as this command does.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err = <-done:
		case <-time.After(5 * time.Minute):
			_ = cmd.Process.Kill()
			err = <-done
		}
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		fmt.Fprintf(stderr, "agentloop serve: %s: %v\n", bin, err)
		return exitFailure
	}
	return exitOK
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
