package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentloop/agentloop/bench/scale/internal/result"
	"github.com/agentloop/agentloop/bench/scale/internal/script"
)

// procArgs returns the command line of one session as a process: print
// mode, JSON output, permissions bypassed, no settings files.
func procArgs(cfg *config) []string {
	args := []string{"-p", cfg.prompt, "--output-format", "json", "--permission-mode", "bypassPermissions",
		"--setting-sources", ""}
	if !cfg.persist && cfg.mode == result.ModeProcs {
		args = append(args, "--no-session-persistence")
	}
	return args
}

// procEnv returns the environment of a session process: this one's, with
// the scripted API as the model, a config directory of the run's own, and
// the reference CLI's background traffic turned off.
func procEnv(cfg *config) []string {
	return append(os.Environ(),
		"ANTHROPIC_BASE_URL="+cfg.serverURL,
		"ANTHROPIC_API_KEY=sk-bench",
		"CLAUDE_CONFIG_DIR="+cfg.configDir,
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_TELEMETRY=1",
		"IS_SANDBOX=1", // the reference refuses bypassPermissions as root otherwise
	)
}

// procOutcome is one finished session process.
type procOutcome struct {
	cpu    time.Duration
	maxRSS int64 // bytes
	err    error
}

// runProcs runs cfg.sessions print-mode processes of bin, at most
// cfg.parallel at once, and measures them.
func runProcs(ctx context.Context, cfg *config, bin string, rec *result.Record) error {
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("%s binary: %w", cfg.mode, err)
	}
	args, env := procArgs(cfg), procEnv(cfg)
	smp := startSampler(50*time.Millisecond, true)
	outcomes := make([]procOutcome, cfg.sessions)
	sem := make(chan struct{}, cfg.parallel)
	var wg sync.WaitGroup
	began := time.Now()
	for i := range outcomes {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			outcomes[i] = runProc(ctx, bin, args, env, cfg.fixture, smp)
		})
	}
	wg.Wait()
	wall := time.Since(began)
	peak, _ := smp.finish()

	var cpu time.Duration
	var sumRSS, maxRSS int64
	ok := 0
	for _, o := range outcomes {
		cpu += o.cpu
		sumRSS += o.maxRSS
		maxRSS = max(maxRSS, o.maxRSS)
		if o.err != nil {
			rec.Errors++
			if rec.FirstErr == "" {
				rec.FirstErr = o.err.Error()
			}
			continue
		}
		ok++
	}
	rec.Parallel = cfg.parallel
	rec.WallS = wall.Seconds()
	rec.Turns = ok * (cfg.turns + 1)
	rec.CPUS = cpu.Seconds()
	if rec.Turns > 0 {
		rec.TurnsPerS = float64(rec.Turns) / rec.WallS
		rec.CPUPerTurnMs = rec.CPUS * 1000 / float64(rec.Turns)
	}
	rec.PeakRSSMiB = toMiB(peak)
	rec.ProcPeakRSSMeanMiB = toMiB(sumRSS) / float64(cfg.sessions)
	rec.ProcPeakRSSMaxMiB = toMiB(maxRSS)
	return nil
}

// runProc runs one session process in dir and checks that it printed a
// success result.
func runProc(ctx context.Context, bin string, args, env []string, dir string, smp *sampler) procOutcome {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Dir = env, dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		return procOutcome{err: fmt.Errorf("start: %w", err)}
	}
	smp.add(cmd.Process.Pid)
	err := cmd.Wait()
	smp.remove(cmd.Process.Pid)
	var out procOutcome
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		out.cpu, out.maxRSS = rusageCPU(ru), ru.Maxrss*1024
	}
	rerr := checkResult(stdout.Bytes())
	switch {
	case err != nil && rerr != nil:
		out.err = fmt.Errorf("%w: %w; stderr: %s", err, rerr, tail(stderr.Bytes()))
	case err != nil:
		out.err = fmt.Errorf("%w: stderr: %s", err, tail(stderr.Bytes()))
	default:
		out.err = rerr
	}
	return out
}

// checkResult checks a print-mode JSON result: a success with the
// script's final answer, so the session went through all its tool turns.
func checkResult(stdout []byte) error {
	var r struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
	}
	if err := json.Unmarshal(bytes.TrimSpace(stdout), &r); err != nil {
		return fmt.Errorf("output is not a JSON result: %w: %s", err, tail(stdout))
	}
	if r.Type != "result" || r.Subtype != "success" || r.IsError || r.Result != script.Answer {
		return fmt.Errorf("result %s/%s is_error=%v: %q, want the script's answer", r.Type, r.Subtype, r.IsError, r.Result)
	}
	return nil
}

// tail returns the last line-ish part of b, for error messages.
func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 300 {
		b = b[len(b)-300:]
	}
	return string(b)
}
