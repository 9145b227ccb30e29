package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/agentlooptest"
)

// BenchmarkCLIOneTurn runs the built binary for a one-turn prompt against a
// scripted server, as the reference CLI was measured: wall time, CPU time
// and peak memory per run. BenchmarkCLIVersion, a process that starts and
// exits at once, is the baseline for process start-up.
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
	var maxRSS int64
	for b.Loop() {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		cpu += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss
		}
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
	b.ReportMetric(float64(maxRSS)/1024, "peak-RSS-MiB")
}
