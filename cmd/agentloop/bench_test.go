package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// BenchmarkCLIOneTurn runs the built binary for a one-turn prompt against a
// scripted server, as the reference CLI was measured: wall time and CPU time
// per run. BenchmarkCLIVersion, a process that starts and exits at once, is
// the baseline for process start-up. Peak memory is measured by
// scripts/bench-cli.sh instead: on Linux a child's ru_maxrss also counts the
// pages of the parent it was forked from, here the test binary.
func BenchmarkCLIOneTurn(b *testing.B) {
	bin := buildCLI(b)
	srv := agentlooptest.NewServer()
	defer srv.Close()
	srv.SetExhausted(agentlooptest.Text("Hello from the fake API."))
	dir := b.TempDir()
	benchProcess(b, bin, dir, []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=sk-test", "HOME=" + dir},
		"-p", "Say hello", "--output-format", "stream-json", "--verbose")
}

func BenchmarkCLIVersion(b *testing.B) {
	bin := buildCLI(b)
	benchProcess(b, bin, b.TempDir(), nil, "--version")
}

func buildCLI(b *testing.B) string {
	b.Helper()
	bin := filepath.Join(b.TempDir(), "agentloop")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func benchProcess(b *testing.B, bin, dir string, env []string, args ...string) {
	var cpu time.Duration
	for b.Loop() {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
