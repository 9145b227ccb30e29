package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
)

// serverProc is a bench/scale/server process this program started.
type serverProc struct {
	cmd *exec.Cmd
	url string
}

// startServer starts the scripted API for cfg and waits for its address.
func startServer(ctx context.Context, cfg *config) (*serverProc, error) {
	bin := cfg.serverBin
	if bin == "" {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("server binary: %w", err)
		}
		bin = filepath.Join(filepath.Dir(self), "server")
	}
	args := []string{"-latency", cfg.latency.String(), "-turns", fmt.Sprint(cfg.turns), "-fixture", cfg.fixture}
	if cfg.h2c {
		args = append(args, "-h2c")
	}
	if cfg.tls {
		args = append(args, "-tls-cert", cfg.tlsCert, "-tls-key", cfg.tlsKey)
	}
	args = append(args, "-workload", cfg.workload)
	if cfg.mode == result.ModeReference {
		args = append(args, "-reference-compat")
	}
	if cfg.profileDir != "" {
		if err := os.MkdirAll(cfg.profileDir, 0o755); err != nil {
			return nil, fmt.Errorf("profile dir: %w", err)
		}
		args = append(args, "-cpuprofile", filepath.Join(cfg.profileDir, "server-cpu.pprof"))
	}
	cmd := exec.Command(bin, args...)
	// The scripted API is the load generator, not what is measured: its
	// collector may use more memory for less CPU (its CPU shares the
	// cores with the sessions'). An explicit GOGC in the environment wins.
	cmd.Env = os.Environ()
	if os.Getenv("GOGC") == "" {
		cmd.Env = append(cmd.Env, "GOGC=400")
	}
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("server: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start server %s: %w", bin, err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	select {
	case url, ok := <-lines:
		if ok && (strings.HasPrefix(url, "http://") || strings.HasPrefix(url, "https://")) {
			return &serverProc{cmd: cmd, url: url}, nil
		}
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("server printed %q, want its URL", url)
	case <-time.After(10 * time.Second):
	case <-ctx.Done():
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("server gave no address within 10 s")
}

// stop ends the server (SIGTERM, then SIGKILL after 10 s) and returns its
// CPU time and peak RSS in bytes.
func (s *serverProc) stop() (cpu time.Duration, maxRSS int64, err error) {
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return 0, 0, fmt.Errorf("stop server: %w", err)
	}
	kill := time.AfterFunc(10*time.Second, func() { s.cmd.Process.Kill() })
	werr := s.cmd.Wait()
	kill.Stop()
	if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		cpu, maxRSS = rusageCPU(ru), ru.Maxrss*1024
	}
	if werr != nil {
		return cpu, maxRSS, fmt.Errorf("server: %w", werr)
	}
	return cpu, maxRSS, nil
}
